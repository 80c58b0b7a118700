from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('hermes', '0002_run_lease')]

    initial = False

    operations = [
        ops.AddIndex(
            model_name='ChatSession',
            index=Index(fields=['last_message_at', 'id'], name='idx_chat_session_activity'),
        ),
    ]
