from tortoise import migrations
from tortoise.migrations import operations as ops
from core.store.models import utc_now
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('hermes', '0006_run_quota')]

    initial = False

    operations = [
        ops.CreateModel(
            name='Attachment',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('message', fields.ForeignKeyField('hermes.ChatMessage', source_field='message_id', db_constraint=True, to_field='id', related_name='attachments', on_delete=OnDelete.CASCADE)),
                ('position', fields.IntField(default=0)),
                ('name', fields.CharField(max_length=255)),
                ('mime_type', fields.CharField(max_length=128)),
                ('size', fields.BigIntField()),
                ('sha256', fields.CharField(max_length=64)),
                ('data', fields.BinaryField()),
                ('text', fields.TextField(null=True, unique=False)),
                ('created_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'attachment', 'app': 'hermes', 'indexes': [Index(fields=['message_id', 'position'], name='idx_attachment_message')], 'pk_attr': 'id', 'table_description': 'A file that came with a user message, in the database: every replica reads it, it goes with its message.'},
            bases=['Model'],
        ),
    ]
