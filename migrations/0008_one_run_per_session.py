from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

# One run in flight per session, as a constraint: two replicas starting a run in one session at
# the same instant cannot both commit. A run queued behind the session's run (`queue=True`)
# names it in `queued_behind` and takes the session's place only when it leaves the queue.
# Partial unique indexes are the same statement on SQLite and PostgreSQL; tortoise's
# PartialIndex knows only equalities, so the index is written here as SQL.
ONE_RUN_PER_SESSION = (
    "CREATE UNIQUE INDEX uniq_chat_message_run_in_flight ON chat_message (session_id) "
    "WHERE role = 'ASSISTANT' AND status IN ('QUEUED', 'RUNNING') AND queued_behind IS NULL"
)


class Migration(migrations.Migration):
    dependencies = [('hermes', '0007_attachment')]

    initial = False

    operations = [
        ops.AddField(
            model_name='ChatMessage',
            name='queued_behind',
            field=fields.CharField(null=True, max_length=64),
        ),
        ops.RunSQL(ONE_RUN_PER_SESSION, "DROP INDEX uniq_chat_message_run_in_flight"),
    ]
