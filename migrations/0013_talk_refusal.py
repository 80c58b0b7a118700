from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields
from core.store.models import utc_now

class Migration(migrations.Migration):
    dependencies = [('hermes', '0012_table_comments')]

    initial = False

    operations = [
        ops.CreateModel(
            name='TalkRefusal',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('conversation', fields.CharField(max_length=255)),
                ('user', fields.CharField(max_length=64)),
                ('created_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'talk_refusal', 'app': 'hermes', 'unique_together': (('conversation', 'user'),), 'pk_attr': 'id', 'table_description': 'A person told they may not talk to the bot here: told once per conversation, by any replica.'},
            bases=['Model'],
        ),
    ]
