from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('hermes', '0005_answer_feedback')]

    initial = False

    operations = [
        ops.CreateModel(
            name='RunQuotaBucket',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('user_key', fields.CharField(unique=True, max_length=128)),
                ('tokens', fields.FloatField()),
                ('updated', fields.FloatField()),
            ],
            options={'table': 'run_quota', 'app': 'hermes', 'pk_attr': 'id', 'table_description': "RUNS_PER_USER_PER_MINUTE: one chat user's token bucket, shared by every replica."},
            bases=['Model'],
        ),
    ]
