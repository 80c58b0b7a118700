from tortoise import migrations
from tortoise.migrations import operations as ops
from core.store.models import PauseKind, utc_now
from tortoise.fields.base import OnDelete
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('hermes', '0010_run_bridge')]

    initial = False

    operations = [
        ops.CreateModel(
            name='ApprovalRule',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('pattern_key', fields.CharField(max_length=500)),
                ('session', fields.ForeignKeyField('hermes.ChatSession', source_field='session_id', null=True, db_constraint=True, to_field='id', related_name='approval_rules', on_delete=OnDelete.CASCADE)),
                ('decided_by', fields.CharField(null=True, max_length=64)),
                ('created_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'approval_rule', 'app': 'hermes', 'unique_together': (('session', 'pattern_key'),), 'pk_attr': 'id', 'table_description': "A remembered approval: commands of hermes-agent's `pattern_key` run without asking, in one session (Allow in this conversation) or everywhere (Always allow, session null)."},
            bases=['Model'],
        ),
        ops.AddField(
            model_name='ClarifyPause',
            name='kind',
            field=fields.CharEnumField(default=PauseKind.CLARIFY, description='CLARIFY: clarify\nAPPROVAL: approval', enum_type=PauseKind, max_length=16),
        ),
        ops.AddField(
            model_name='ClarifyPause',
            name='pattern_key',
            field=fields.CharField(null=True, max_length=500),
        ),
        ops.AddField(
            model_name='ClarifyPause',
            name='reason',
            field=fields.TextField(null=True, unique=False),
        ),
        ops.AddField(
            model_name='ClarifyPause',
            name='tool',
            field=fields.CharField(null=True, max_length=128),
        ),
    ]

