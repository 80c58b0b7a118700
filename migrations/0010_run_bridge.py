from tortoise import fields, migrations
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('hermes', '0009_handled_event')]

    initial = False

    operations = [
        ops.AddField(
            model_name='ChatMessage',
            name='bridge',
            field=fields.CharField(null=True, max_length=255),
        ),
    ]
