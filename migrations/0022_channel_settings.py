from tortoise import migrations
from tortoise.migrations import operations as ops
import functools
from core.store.models import Platform, utc_now
from json import dumps, loads
from tortoise.fields.base import OnDelete
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('hermes', '0021_schedules')]

    initial = False

    operations = [
        ops.CreateModel(
            name='BusyMessage',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('session', fields.ForeignKeyField('hermes.ChatSession', source_field='session_id', db_constraint=True, to_field='id', related_name='busy_messages', on_delete=OnDelete.CASCADE)),
                ('run_id', fields.CharField(max_length=64)),
                ('author', fields.CharField(max_length=64)),
                ('platform_message_id', fields.CharField(max_length=64)),
                ('text', fields.TextField(unique=False)),
                ('created_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'busy_message', 'app': 'hermes', 'pk_attr': 'id', 'table_description': "A message refused while its thread's run worked, kept until the person who wrote it chooses to queue it or give it to that run as guidance (the busy notice's buttons)."},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='ChannelSetting',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('platform', fields.CharEnumField(description='SLACK: slack\nDISCORD: discord', enum_type=Platform, max_length=16)),
                ('workspace', fields.CharField(max_length=64)),
                ('channel', fields.CharField(default='', max_length=64)),
                ('settings', fields.JSONField(default=dict, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads)),
                ('updated_by', fields.CharField(default='', max_length=64)),
                ('updated_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'channel_setting', 'app': 'hermes', 'unique_together': (('platform', 'workspace', 'channel'),), 'pk_attr': 'id', 'table_description': "The settings of one channel (`channel` empty: the default of a whole workspace or guild), the keys an admin set: they override the service's settings for conversations started there."},
            bases=['Model'],
        ),
        ops.AddField(
            model_name='ChatMessage',
            name='kind',
            field=fields.CharField(null=True, max_length=16),
        ),
        ops.AddField(
            model_name='ChatSession',
            name='channel_settings',
            field=fields.JSONField(null=True, encoder=functools.partial(dumps, separators=(',', ':')), decoder=loads),
        ),
    ]
