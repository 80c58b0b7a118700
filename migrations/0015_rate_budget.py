from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields


async def unlogged(apps, schema_editor):
    """PostgreSQL: the buckets skip the write-ahead log (no flush to wait for at each take). A
    crash empties the table, and an empty table is full buckets, which is harmless."""
    if schema_editor.client.capabilities.dialect == "postgres":
        await schema_editor.client.execute_script("ALTER TABLE rate_budget SET UNLOGGED")

class Migration(migrations.Migration):
    dependencies = [('hermes', '0014_thread_context')]

    initial = False

    operations = [
        ops.CreateModel(
            name='RateBudget',
            fields=[
                ('budget_key', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=200)),
                ('tokens', fields.FloatField()),
                ('updated', fields.FloatField()),
                ('closed_until', fields.FloatField(default=0.0)),
            ],
            options={'table': 'rate_budget', 'app': 'hermes', 'pk_attr': 'budget_key', 'table_description': "A platform rate limit's token bucket, spent by every replica (times on the database's clock)."},
            bases=['Model'],
        ),
        ops.RunPython(unlogged, ops.RunPython.noop),
    ]
