from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('hermes', '0019_rate_budget_window')]

    initial = False

    operations = [
        ops.AddField(
            model_name='HandledEvent',
            name='body',
            field=fields.TextField(null=True, unique=False),
        ),
        ops.AddField(
            model_name='HandledEvent',
            name='claimed_at',
            field=fields.DatetimeField(null=True, auto_now=False, auto_now_add=False),
        ),
        ops.AddField(
            model_name='HandledEvent',
            name='done_at',
            field=fields.DatetimeField(null=True, auto_now=False, auto_now_add=False),
        ),
    ]
