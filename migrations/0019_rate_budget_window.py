from tortoise import migrations
from tortoise.migrations import operations as ops


async def window_column(apps, schema_editor):
    """PostgreSQL: a sliding window's calls (core/edge/shared_budgets.py), the times its tokens
    were taken, on the database's clock. SQLite never shares budgets: the table stays empty."""
    if schema_editor.client.capabilities.dialect == "postgres":
        await schema_editor.client.execute_script(
            "ALTER TABLE rate_budget ADD COLUMN IF NOT EXISTS taken float8[] NOT NULL DEFAULT '{}'")


class Migration(migrations.Migration):
    dependencies = [('hermes', '0018_usage')]

    initial = False

    operations = [
        ops.RunPython(window_column, ops.RunPython.noop),
    ]
