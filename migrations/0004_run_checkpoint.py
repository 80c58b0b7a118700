from tortoise import migrations
from tortoise.migrations import operations as ops
from core.store.models import utc_now
from tortoise.fields.base import OnDelete
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('hermes', '0003_session_activity_index')]

    initial = False

    operations = [
        ops.CreateModel(
            name='RunCheckpoint',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('message', fields.OneToOneField('hermes.ChatMessage', source_field='message_id', db_constraint=True, to_field='id', related_name='checkpoint', on_delete=OnDelete.CASCADE)),
                ('seq', fields.IntField()),
                ('messages_json', fields.TextField(unique=False)),
                ('clarify_json', fields.TextField(null=True, unique=False)),
                ('updated_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'run_checkpoint', 'app': 'hermes', 'pk_attr': 'id', 'table_description': "The latest checkpoint of an assistant message's run: the agent's messages so far, from which any Bridge continues the turn."},
            bases=['Model'],
        ),
    ]
