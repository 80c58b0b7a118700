from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('hermes', '0001_initial')]

    initial = False

    operations = [
        ops.CreateModel(
            name='RunLease',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('run_id', fields.CharField(unique=True, max_length=64)),
                ('owner', fields.CharField(max_length=64)),
                ('expires_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'run_lease', 'app': 'hermes', 'indexes': [Index(fields=['owner'], name='idx_run_lease_owner')], 'pk_attr': 'id', 'table_description': 'Which replica drives a run in flight, until when. An expired lease is up for grabs.'},
            bases=['Model'],
        ),
    ]
