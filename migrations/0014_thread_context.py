from tortoise import fields, migrations
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('hermes', '0013_talk_refusal')]

    initial = False

    operations = [
        ops.AddField(
            model_name='ChatMessage',
            name='thread_context',
            field=fields.JSONField(null=True),
        ),
    ]
