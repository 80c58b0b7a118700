from tortoise import migrations
from tortoise.migrations import operations as ops
from core.store.models import Misfire, Platform, RunOutcome, ScheduleState, utc_now
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('hermes', '0020_intake_inbox')]

    initial = False

    operations = [
        ops.CreateModel(
            name='Schedule',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('platform', fields.CharEnumField(description='SLACK: slack\nDISCORD: discord', enum_type=Platform, max_length=16)),
                ('workspace', fields.CharField(max_length=64)),
                ('channel', fields.CharField(max_length=64)),
                ('author', fields.CharField(max_length=64)),
                ('prompt', fields.TextField(unique=False)),
                ('phrase', fields.CharField(max_length=200)),
                ('cron', fields.CharField(max_length=120)),
                ('timezone', fields.CharField(max_length=64)),
                ('misfire', fields.CharEnumField(default=Misfire.RUN_ONCE, description='RUN_ONCE: run_once\nSKIP: skip', enum_type=Misfire, max_length=16)),
                ('state', fields.CharEnumField(default=ScheduleState.ACTIVE, description='ACTIVE: active\nPAUSED: paused', enum_type=ScheduleState, max_length=16)),
                ('next_run_at', fields.DatetimeField(null=True, auto_now=False, auto_now_add=False)),
                ('created_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
                ('updated_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'schedule', 'app': 'hermes', 'indexes': [Index(fields=['state', 'next_run_at'], name='idx_schedule_due'), Index(fields=['platform', 'workspace', 'channel'], name='idx_schedule_channel')], 'pk_attr': 'id', 'table_description': 'A scheduled prompt: at each occurrence of `cron` (a five-field crontab in `timezone`) a new thread starts in the channel with the prompt, as `author` wrote it. `next_run_at` is the first occurrence not yet handled (the persistent state of its apscheduler job).'},
            bases=['Model'],
        ),
        ops.CreateModel(
            name='ScheduleRun',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('schedule', fields.ForeignKeyField('hermes.Schedule', source_field='schedule_id', db_constraint=True, to_field='id', related_name='runs', on_delete=OnDelete.CASCADE)),
                ('occurrence_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('claimed_at', fields.DatetimeField(default=utc_now, auto_now=False, auto_now_add=False)),
                ('outcome', fields.CharEnumField(default=RunOutcome.CLAIMED, description='CLAIMED: claimed\nSTARTED: started\nSKIPPED: skipped\nREFUSED: refused\nFAILED: failed', enum_type=RunOutcome, max_length=16)),
                ('session_id', fields.BigIntField(null=True)),
                ('thread', fields.CharField(default='', max_length=64)),
                ('run_id', fields.CharField(default='', max_length=64)),
                ('detail', fields.TextField(default='', unique=False)),
            ],
            options={'table': 'schedule_run', 'app': 'hermes', 'unique_together': (('schedule', 'occurrence_at'),), 'pk_attr': 'id', 'table_description': "One occurrence of a schedule: the claim that makes one replica start it (unique per schedule and occurrence time), then its outcome, thread and run: the schedule's run history."},
            bases=['Model'],
        ),
    ]
