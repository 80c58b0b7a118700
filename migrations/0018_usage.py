from tortoise import migrations
from tortoise.migrations import operations as ops
from core.store.models import LimitPeriod, LimitScope, LimitUnit, utc_now
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('hermes', '0017_turn_refs_on_user')]

    initial = False

    operations = [
        ops.CreateModel(
            name='SpendLimit',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('scope', fields.CharEnumField(description='USER: user\nCHANNEL: channel\nWORKSPACE: workspace', enum_type=LimitScope, max_length=16)),
                ('subject', fields.CharField(max_length=64)),
                ('period', fields.CharEnumField(description='DAY: day\nMONTH: month', enum_type=LimitPeriod, max_length=8)),
                ('unit', fields.CharEnumField(description='TOKENS: tokens\nCOST: cost', enum_type=LimitUnit, max_length=8)),
                ('amount', fields.FloatField(null=True)),
                ('updated_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'spend_limit', 'app': 'hermes', 'unique_together': (('scope', 'subject', 'period', 'unit'),), 'pk_attr': 'id', 'table_description': "An operator's spend limit for one user, channel or workspace, in place of the default of its settings (amount null: no limit)."},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='UsageCall',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('message_id', fields.BigIntField()),
                ('seq', fields.IntField()),
                ('run_id', fields.CharField(max_length=64)),
                ('session_id', fields.BigIntField()),
                ('platform', fields.CharField(default='', max_length=16)),
                ('workspace', fields.CharField(default='', max_length=64)),
                ('channel', fields.CharField(default='', max_length=64)),
                ('user', fields.CharField(default='', max_length=64)),
                ('model', fields.CharField(default='', max_length=128)),
                ('prompt_tokens', fields.BigIntField(default=0)),
                ('completion_tokens', fields.BigIntField(default=0)),
                ('cached_tokens', fields.BigIntField(default=0)),
                ('cost', fields.FloatField(null=True)),
                ('at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'usage_call', 'app': 'hermes', 'unique_together': (('message_id', 'seq'),), 'indexes': [Index(fields=['session_id'], name='idx_usage_call_session')], 'pk_attr': 'id', 'table_description': 'One model call of a run: its tokens as the model reported them and its cost at the prices of that time (null: not priced). One row per (message, event seq), so a replayed event counts once. Kept when its conversation is deleted: what was spent stays spent.'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='UsageDay',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('dimension', fields.CharField(max_length=16)),
                ('subject', fields.CharField(max_length=128)),
                ('workspace', fields.CharField(default='', max_length=64)),
                ('day', fields.DateField()),
                ('platform', fields.CharField(default='', max_length=16)),
                ('calls', fields.BigIntField(default=0)),
                ('prompt_tokens', fields.BigIntField(default=0)),
                ('completion_tokens', fields.BigIntField(default=0)),
                ('cached_tokens', fields.BigIntField(default=0)),
                ('cost', fields.FloatField(default=0.0)),
                ('priced_calls', fields.BigIntField(default=0)),
            ],
            options={'table': 'usage_day', 'app': 'hermes', 'unique_together': (('dimension', 'subject', 'workspace', 'day', 'platform'),), 'indexes': [Index(fields=['dimension', 'day'], name='idx_usage_day_range')], 'pk_attr': 'id', 'table_description': 'The model calls of one UTC day summed four ways (`dimension`): by user, channel, workspace and model (`subject`), each with the platform they were asked from and a channel with its workspace: what usage reports and spend limits read.'},
            bases=['Model'],
        ),
        ops.AddField(
            model_name='ChatMessage',
            name='spend_exempt',
            field=fields.BooleanField(default=False, db_default=False),
        ),
    ]
