from tortoise import migrations
from tortoise.migrations import operations as ops
from core.store.models import FeedbackValue, Platform, utc_now
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('hermes', '0004_run_checkpoint')]

    initial = False

    operations = [
        ops.CreateModel(
            name='AnswerFeedback',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('message', fields.ForeignKeyField('hermes.ChatMessage', source_field='message_id', db_constraint=True, to_field='id', related_name='feedback', on_delete=OnDelete.CASCADE)),
                ('platform', fields.CharEnumField(description='SLACK: slack\nDISCORD: discord', enum_type=Platform, max_length=16)),
                ('user', fields.CharField(max_length=64)),
                ('value', fields.CharEnumField(description='GOOD: good\nBAD: bad', enum_type=FeedbackValue, max_length=8)),
                ('at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'answer_feedback', 'app': 'hermes', 'unique_together': (('message_id', 'platform', 'user'),), 'indexes': [Index(fields=['value', 'message_id'], name='idx_answer_feedback_value')], 'pk_attr': 'id', 'table_description': "A person's rating of an assistant message: good or bad, one per person, changeable."},
            bases=['Model'],
        ),
    ]
