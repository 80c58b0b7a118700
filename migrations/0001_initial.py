from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from core.store.models import MessageStatus, PauseStatus, Platform, Role, SessionStatus, utc_now
from json import dumps, loads
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    initial = True

    operations = [
        ops.CreateModel(
            name='ChatSession',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('uuid', fields.UUIDField(unique=True)),
                ('title', fields.CharField(null=True, max_length=255)),
                ('model_id', fields.CharField(null=True, max_length=128)),
                ('skill_folder', fields.CharField(null=True, max_length=255)),
                ('hermes_session', fields.CharField(max_length=64)),
                ('status', fields.CharEnumField(default=SessionStatus.ACTIVE, description='ACTIVE: ACTIVE\nARCHIVED: ARCHIVED', enum_type=SessionStatus, max_length=16)),
                ('last_summarized_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('created_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
                ('last_message_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
                ('updated_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'chat_session', 'app': 'hermes', 'indexes': [Index(fields=['status', 'last_message_at'], name='idx_chat_session_last_msg')], 'pk_attr': 'id'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='ChatMessage',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('session', fields.ForeignKeyField('hermes.ChatSession', source_field='session_id', db_constraint=True, to_field='id', related_name='messages', on_delete=OnDelete.CASCADE)),
                ('parent', fields.ForeignKeyField('hermes.ChatMessage', source_field='parent_id', null=True, db_constraint=True, to_field='id', related_name='children', on_delete=OnDelete.CASCADE)),
                ('is_active', fields.BooleanField(default=True)),
                ('branch_order', fields.IntField(default=0)),
                ('run_id', fields.CharField(null=True, max_length=64)),
                ('role', fields.CharEnumField(description='USER: USER\nASSISTANT: ASSISTANT\nSYSTEM: SYSTEM', enum_type=Role, max_length=16)),
                ('content', fields.TextField(default='', unique=False)),
                ('status', fields.CharEnumField(description='SENT: SENT\nQUEUED: QUEUED\nRUNNING: RUNNING\nSUCCESS: SUCCESS\nFAILED: FAILED\nSTOPPED: STOPPED\nSUMMARY: SUMMARY', enum_type=MessageStatus, max_length=16)),
                ('model_id', fields.CharField(null=True, max_length=128)),
                ('skill_folder', fields.CharField(null=True, max_length=255)),
                ('error', fields.TextField(null=True, unique=False)),
                ('attachment_id', fields.BigIntField(null=True)),
                ('platform_message_id', fields.CharField(null=True, max_length=64)),
                ('platform_refs', fields.JSONField(null=True, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('author', fields.CharField(null=True, max_length=64)),
                ('created_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
                ('completed_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'chat_message', 'app': 'hermes', 'indexes': [Index(fields=['session_id', 'created_at'], name='idx_chat_message_session'), Index(fields=['parent_id', 'is_active'], name='idx_chat_message_parent'), Index(fields=['run_id'], name='idx_chat_message_run'), Index(fields=['session_id', 'platform_message_id'], name='idx_chat_message_platform')], 'pk_attr': 'id', 'table_description': 'A node of the message tree (seed 000 §4.1.2, §4.1.4).'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='ChatMessageLog',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('message', fields.ForeignKeyField('hermes.ChatMessage', source_field='message_id', db_constraint=True, to_field='id', related_name='logs', on_delete=OnDelete.CASCADE)),
                ('seq', fields.IntField()),
                ('kind', fields.CharField(max_length=24)),
                ('content', fields.TextField(null=True, unique=False)),
                ('tool_name', fields.CharField(null=True, max_length=128)),
                ('meta_json', fields.TextField(null=True, unique=False)),
                ('created_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'chat_message_log', 'app': 'hermes', 'unique_together': (('message_id', 'seq'),), 'indexes': [Index(fields=['message_id', 'kind'], name='idx_chat_log_kind')], 'pk_attr': 'id', 'table_description': 'One Bridge event of an assistant message. Its seq is the event id, so replays are idempotent.'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='ClarifyPause',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('run_id', fields.CharField(max_length=64)),
                ('message', fields.ForeignKeyField('hermes.ChatMessage', source_field='message_id', db_constraint=True, to_field='id', related_name='pauses', on_delete=OnDelete.CASCADE)),
                ('clarify_id', fields.CharField(unique=True, max_length=64)),
                ('question', fields.TextField(unique=False)),
                ('choices', fields.JSONField(default=list, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('status', fields.CharEnumField(default=PauseStatus.UNANSWERED, description='UNANSWERED: UNANSWERED\nANSWERED: ANSWERED\nEXPIRED: EXPIRED', enum_type=PauseStatus, max_length=16)),
                ('answer', fields.TextField(null=True, unique=False)),
                ('answered_by', fields.CharField(null=True, max_length=64)),
                ('platform_refs', fields.JSONField(null=True, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('created_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
                ('answered_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'clarify_pause', 'app': 'hermes', 'indexes': [Index(fields=['run_id'], name='idx_clarify_pause_run'), Index(fields=['status', 'created_at'], name='idx_clarify_pause_status')], 'pk_attr': 'id', 'table_description': 'A clarify question waiting for (or having had) its answer (seed 003 §4.7).'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='ConversationBinding',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('platform', fields.CharEnumField(description='SLACK: slack\nDISCORD: discord', enum_type=Platform, max_length=16)),
                ('workspace', fields.CharField(max_length=64)),
                ('channel', fields.CharField(max_length=64)),
                ('thread', fields.CharField(default='', max_length=64)),
                ('session', fields.ForeignKeyField('hermes.ChatSession', source_field='session_id', db_constraint=True, to_field='id', related_name='bindings', on_delete=OnDelete.CASCADE)),
                ('created_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'conversation_binding', 'app': 'hermes', 'unique_together': (('platform', 'workspace', 'channel', 'thread'),), 'pk_attr': 'id', 'table_description': 'One platform thread is one session. The thread is empty where the platform has none (a DM).'},
            bases=['Model'],
        ),
    ]
