from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('hermes', '0011_approval')]

    initial = False

    operations = [
        ops.AlterModelOptions(
            name='ChatMessage',
            options={'table': 'chat_message', 'app': 'hermes', 'indexes': [Index(fields=['session_id', 'created_at'], name='idx_chat_message_session'), Index(fields=['parent_id', 'is_active'], name='idx_chat_message_parent'), Index(fields=['run_id'], name='idx_chat_message_run'), Index(fields=['session_id', 'platform_message_id'], name='idx_chat_message_platform')], 'pk_attr': 'id', 'table_description': 'A node of the message tree: a user or assistant message, or a summary.'},
        ),
        ops.AlterModelOptions(
            name='ClarifyPause',
            options={'table': 'clarify_pause', 'app': 'hermes', 'indexes': [Index(fields=['run_id'], name='idx_clarify_pause_run'), Index(fields=['status', 'created_at'], name='idx_clarify_pause_status')], 'pk_attr': 'id', 'table_description': 'A question the agent asked (a clarify, or a tool approval): waiting, or answered.'},
        ),
    ]
