from tortoise import migrations
from tortoise.migrations import operations as ops
from core.store.models import utc_now
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('hermes', '0008_one_run_per_session')]

    initial = False

    operations = [
        ops.CreateModel(
            name='HandledEvent',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('event_key', fields.CharField(unique=True, max_length=160)),
                ('at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'handled_event', 'app': 'hermes', 'indexes': [Index(fields=['at'], name='idx_handled_event_at')], 'pk_attr': 'id', 'table_description': "A platform event id some replica took (Slack's event_id): a redelivery is dropped. Kept for a TTL, then swept."},
            bases=['Model'],
        ),
    ]
