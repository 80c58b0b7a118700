"""The data model (docs/architecture.md), tortoise app label hermes.

Model docstrings become table comments: tortoise's SQLite migrations split statements on
semicolons, so none may contain one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from tortoise import fields
from tortoise.indexes import Index
from tortoise.models import Model


def utc_now() -> datetime:
    """The default for every timestamp column: an aware UTC datetime."""
    return datetime.now(UTC)


class SessionStatus(StrEnum):
    ACTIVE = "ACTIVE"
    ARCHIVED = "ARCHIVED"


class Platform(StrEnum):
    SLACK = "slack"
    DISCORD = "discord"


class Role(StrEnum):
    USER = "USER"
    ASSISTANT = "ASSISTANT"
    SYSTEM = "SYSTEM"


class MessageStatus(StrEnum):
    SENT = "SENT"
    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    SUCCESS = "SUCCESS"
    FAILED = "FAILED"
    STOPPED = "STOPPED"
    SUMMARY = "SUMMARY"


IN_FLIGHT = (MessageStatus.QUEUED, MessageStatus.RUNNING)  # an assistant message's run goes on
ENDED = frozenset({MessageStatus.SUCCESS, MessageStatus.FAILED, MessageStatus.STOPPED})


class PauseStatus(StrEnum):
    UNANSWERED = "UNANSWERED"
    ANSWERED = "ANSWERED"
    EXPIRED = "EXPIRED"


class ChatSession(Model):
    id = fields.BigIntField(primary_key=True)
    uuid = fields.UUIDField(unique=True)
    title = fields.CharField(max_length=255, null=True)
    model_id = fields.CharField(max_length=128, null=True)
    skill_folder = fields.CharField(max_length=255, null=True)
    hermes_session = fields.CharField(max_length=64)
    status = fields.CharEnumField(SessionStatus, max_length=16, default=SessionStatus.ACTIVE)
    last_summarized_at = fields.DatetimeField(null=True)
    created_at = fields.DatetimeField(default=utc_now)
    last_message_at = fields.DatetimeField(default=utc_now)
    updated_at = fields.DatetimeField(default=utc_now)
    # The channel settings the conversation started with (core/chat/channel_settings.py): the
    # keys its channel and workspace set then, kept until an admin applies new ones.
    channel_settings: Any = fields.JSONField(null=True)
    # Where the active branch ends, as of its last version switch or fresh start (written only
    # then, never per message): `leaf_id` (None: an empty branch) while no message is newer than
    # `leaf_mark`; a message made since is the leaf (core/chat/tree.py, `leaf_ids`).
    leaf_id = fields.BigIntField(null=True)
    leaf_mark = fields.BigIntField(null=True)

    class Meta:
        table = "chat_session"
        # The list's order, with and without a status filter (a leading status cannot serve
        # the unfiltered list: it would sort every session for each page).
        indexes = (
            Index(fields=("status", "last_message_at"), name="idx_chat_session_last_msg"),
            Index(fields=("last_message_at", "id"), name="idx_chat_session_activity"),
        )


class ConversationBinding(Model):
    """One platform thread is one session. The thread is empty where the platform has none (a DM)."""

    id = fields.BigIntField(primary_key=True)
    platform = fields.CharEnumField(Platform, max_length=16)
    workspace = fields.CharField(max_length=64)
    channel = fields.CharField(max_length=64)
    thread = fields.CharField(max_length=64, default="")
    session: fields.ForeignKeyRelation[ChatSession] = fields.ForeignKeyField(
        "hermes.ChatSession", related_name="bindings", on_delete=fields.CASCADE
    )
    session_id: int
    created_at = fields.DatetimeField(default=utc_now)

    class Meta:
        table = "conversation_binding"
        unique_together = (("platform", "workspace", "channel", "thread"),)


class ChatMessage(Model):
    """A node of the message tree: a user or assistant message, or a summary."""

    id = fields.BigIntField(primary_key=True)
    session: fields.ForeignKeyRelation[ChatSession] = fields.ForeignKeyField(
        "hermes.ChatSession", related_name="messages", on_delete=fields.CASCADE
    )
    session_id: int
    parent: fields.ForeignKeyNullableRelation[ChatMessage] = fields.ForeignKeyField(
        "hermes.ChatMessage", related_name="children", null=True, on_delete=fields.CASCADE
    )
    parent_id: int | None
    is_active = fields.BooleanField(default=True)
    branch_order = fields.IntField(default=0)
    run_id = fields.CharField(max_length=64, null=True)
    role = fields.CharEnumField(Role, max_length=16)
    content = fields.TextField(default="")
    status = fields.CharEnumField(MessageStatus, max_length=16)
    model_id = fields.CharField(max_length=128, null=True)
    skill_folder = fields.CharField(max_length=255, null=True)
    error = fields.TextField(null=True)
    # Unused: the `attachment` table replaced it (a message may carry several files). Kept,
    # since dropping a column makes tortoise rebuild the SQLite table without its indexes.
    attachment_id = fields.BigIntField(null=True)
    platform_message_id = fields.CharField(max_length=64, null=True)
    platform_refs: Any = fields.JSONField(null=True)
    author = fields.CharField(max_length=64, null=True)
    # A user message's thread context: what people wrote in the thread before the bot was
    # first asked there (core/chat/thread_context.py), given to the agent with this message.
    thread_context: Any = fields.JSONField(null=True)
    # The run of the session this queued run waits for (a start with `queue=True`): the one
    # in-flight assistant message per session the database allows is the one without it.
    queued_behind = fields.CharField(max_length=64, null=True)
    # The Bridge (its URL in HERMES_BRIDGE_URL) that holds this answer's run: where Stop,
    # answers and replays of it go, from any replica (core/agent/bridge/fleet.py).
    bridge = fields.CharField(max_length=255, null=True)
    created_at = fields.DatetimeField(default=utc_now)
    completed_at = fields.DatetimeField(null=True)
    # An operator's run started with ADMIN_UNLIMITED_TOKEN: no spend limit stops it, before
    # it starts or at any later model call (core/usage/limits.py), on whichever replica.
    spend_exempt = fields.BooleanField(default=False, db_default=False)
    # What a user message is beside a turn: "steer", guidance given to a running turn (it
    # hangs under that turn's answer, never a version); null for a turn's question.
    kind = fields.CharField(max_length=16, null=True)

    class Meta:
        table = "chat_message"
        indexes = (
            Index(fields=("session_id", "created_at"), name="idx_chat_message_session"),
            Index(fields=("parent_id", "is_active"), name="idx_chat_message_parent"),
            Index(fields=("run_id",), name="idx_chat_message_run"),
            Index(fields=("session_id", "platform_message_id"), name="idx_chat_message_platform"),
        )


class Attachment(Model):
    """A file that came with a user message, in the database: every replica reads it, it goes with its message."""

    id = fields.BigIntField(primary_key=True)
    message: fields.ForeignKeyRelation[ChatMessage] = fields.ForeignKeyField(
        "hermes.ChatMessage", related_name="attachments", on_delete=fields.CASCADE
    )
    message_id: int
    position = fields.IntField(default=0)  # its place among the message's files
    name = fields.CharField(max_length=255)
    mime_type = fields.CharField(max_length=128)
    size = fields.BigIntField()
    sha256 = fields.CharField(max_length=64)
    data = fields.BinaryField()
    text = fields.TextField(null=True)  # what the agent reads of a text file or a PDF
    created_at = fields.DatetimeField(default=utc_now)

    class Meta:
        table = "attachment"
        indexes = (Index(fields=("message_id", "position"), name="idx_attachment_message"),)


class ChatMessageLog(Model):
    """One Bridge event of an assistant message. Its seq is the event id, so replays are idempotent."""

    id = fields.BigIntField(primary_key=True)
    message: fields.ForeignKeyRelation[ChatMessage] = fields.ForeignKeyField(
        "hermes.ChatMessage", related_name="logs", on_delete=fields.CASCADE
    )
    message_id: int
    seq = fields.IntField()
    kind = fields.CharField(max_length=24)
    content = fields.TextField(null=True)
    tool_name = fields.CharField(max_length=128, null=True)
    meta_json = fields.TextField(null=True)
    created_at = fields.DatetimeField(default=utc_now)

    class Meta:
        table = "chat_message_log"
        unique_together = (("message_id", "seq"),)
        indexes = (Index(fields=("message_id", "kind"), name="idx_chat_log_kind"),)


class PauseKind(StrEnum):
    CLARIFY = "clarify"
    APPROVAL = "approval"  # a tool call waiting for a decision: question holds its command


class ClarifyPause(Model):
    """A question the agent asked (a clarify, or a tool approval): waiting, or answered."""

    id = fields.BigIntField(primary_key=True)
    run_id = fields.CharField(max_length=64)
    message: fields.ForeignKeyRelation[ChatMessage] = fields.ForeignKeyField(
        "hermes.ChatMessage", related_name="pauses", on_delete=fields.CASCADE
    )
    message_id: int
    clarify_id = fields.CharField(max_length=64, unique=True)
    question = fields.TextField()
    choices: Any = fields.JSONField(default=list)
    status = fields.CharEnumField(PauseStatus, max_length=16, default=PauseStatus.UNANSWERED)
    answer = fields.TextField(null=True)
    answered_by = fields.CharField(max_length=64, null=True)
    platform_refs: Any = fields.JSONField(null=True)
    created_at = fields.DatetimeField(default=utc_now)
    answered_at = fields.DatetimeField(null=True)
    kind = fields.CharEnumField(PauseKind, max_length=16, default=PauseKind.CLARIFY)
    tool = fields.CharField(max_length=128, null=True)
    reason = fields.TextField(null=True)
    pattern_key = fields.CharField(max_length=500, null=True)

    class Meta:
        table = "clarify_pause"
        indexes = (
            Index(fields=("run_id",), name="idx_clarify_pause_run"),
            Index(fields=("status", "created_at"), name="idx_clarify_pause_status"),
        )


class ApprovalRule(Model):
    """A remembered approval: commands of hermes-agent's `pattern_key` run without asking, in one session (Allow in this conversation) or everywhere (Always allow, session null)."""  # noqa: E501

    id = fields.BigIntField(primary_key=True)
    pattern_key = fields.CharField(max_length=500)
    session: fields.ForeignKeyNullableRelation[ChatSession] = fields.ForeignKeyField(
        "hermes.ChatSession", related_name="approval_rules", null=True,
        on_delete=fields.CASCADE
    )
    session_id: int | None
    decided_by = fields.CharField(max_length=64, null=True)
    created_at = fields.DatetimeField(default=utc_now)

    class Meta:
        table = "approval_rule"
        unique_together = (("session", "pattern_key"),)


class RunCheckpoint(Model):
    """The latest checkpoint of an assistant message's run: the agent's messages so far, from which any Bridge continues the turn."""  # noqa: E501 (migration 0004 holds it as written)

    id = fields.BigIntField(primary_key=True)
    message: fields.OneToOneRelation[ChatMessage] = fields.OneToOneField(
        "hermes.ChatMessage", related_name="checkpoint", on_delete=fields.CASCADE
    )
    message_id: int
    seq = fields.IntField()
    messages_json = fields.TextField()
    clarify_json = fields.TextField(null=True)
    updated_at = fields.DatetimeField(default=utc_now)

    class Meta:
        table = "run_checkpoint"


class FeedbackValue(StrEnum):
    GOOD = "good"
    BAD = "bad"


class AnswerFeedback(Model):
    """A person's rating of an assistant message: good or bad, one per person, changeable."""

    id = fields.BigIntField(primary_key=True)
    message: fields.ForeignKeyRelation[ChatMessage] = fields.ForeignKeyField(
        "hermes.ChatMessage", related_name="feedback", on_delete=fields.CASCADE
    )
    message_id: int
    platform = fields.CharEnumField(Platform, max_length=16)
    user = fields.CharField(max_length=64)
    value = fields.CharEnumField(FeedbackValue, max_length=8)
    at = fields.DatetimeField(default=utc_now)

    class Meta:
        table = "answer_feedback"
        unique_together = (("message_id", "platform", "user"),)
        indexes = (Index(fields=("value", "message_id"), name="idx_answer_feedback_value"),)


class RunLease(Model):
    """Which replica drives a run in flight, until when. An expired lease is up for grabs."""

    id = fields.BigIntField(primary_key=True)
    run_id = fields.CharField(max_length=64, unique=True)
    owner = fields.CharField(max_length=64)
    expires_at = fields.DatetimeField()

    class Meta:
        table = "run_lease"
        indexes = (Index(fields=("owner",), name="idx_run_lease_owner"),)


class DiscordShardClaim(Model):
    """Which replica connects a Discord gateway shard, until when. An expired claim is up for grabs."""

    id = fields.BigIntField(primary_key=True)
    shard_id = fields.IntField(unique=True)
    shard_count = fields.IntField()
    owner = fields.CharField(max_length=64)
    expires_at = fields.DatetimeField()

    class Meta:
        table = "discord_shard_claim"


class DiscordReplica(Model):
    """A replica with the Discord adapter up, until when: how many share the gateway shards."""

    id = fields.BigIntField(primary_key=True)
    owner = fields.CharField(max_length=64, unique=True)
    expires_at = fields.DatetimeField()

    class Meta:
        table = "discord_replica"


class RunQuotaBucket(Model):
    """RUNS_PER_USER_PER_MINUTE: one chat user's token bucket, shared by every replica."""

    id = fields.BigIntField(primary_key=True)
    user_key = fields.CharField(max_length=128, unique=True)
    tokens = fields.FloatField()
    updated = fields.FloatField()  # seconds since the epoch (the quota's clock) of the last take

    class Meta:
        table = "run_quota"


class HandledEvent(Model):
    """A platform event id some replica took (Slack's event_id): a redelivery is dropped. Kept for a TTL, then swept.
    A message's event keeps its body until its handling ends (done_at), so that one whose
    replica died or stopped first is handled again by another (claimed_at: who took it up)."""

    id = fields.BigIntField(primary_key=True)
    event_key = fields.CharField(max_length=160, unique=True)
    at = fields.DatetimeField(default=utc_now)
    body = fields.TextField(null=True)
    done_at = fields.DatetimeField(null=True)
    claimed_at = fields.DatetimeField(null=True)

    class Meta:
        table = "handled_event"
        indexes = (Index(fields=("at",), name="idx_handled_event_at"),)


class TalkRefusal(Model):
    """A person told they may not talk to the bot here: told once per conversation, by any replica."""

    id = fields.BigIntField(primary_key=True)
    conversation = fields.CharField(max_length=255)  # platform:workspace:channel:thread
    user = fields.CharField(max_length=64)
    created_at = fields.DatetimeField(default=utc_now)

    class Meta:
        table = "talk_refusal"
        unique_together = (("conversation", "user"),)


class RateBudget(Model):
    """A platform rate limit's token bucket, spent by every replica (times on the database's clock)."""

    budget_key = fields.CharField(max_length=200, primary_key=True)  # "slack:T1:chat.update"
    tokens = fields.FloatField()
    updated = fields.FloatField()  # seconds since the epoch of the last take
    closed_until = fields.FloatField(default=0.0)  # a Retry-After: no take before then

    class Meta:
        table = "rate_budget"


class UsageCall(Model):
    """One model call of a run: its tokens as the model reported them and its cost at the prices of that time (null: not priced). One row per (message, event seq), so a replayed event counts once. Kept when its conversation is deleted: what was spent stays spent."""  # noqa: E501

    id = fields.BigIntField(primary_key=True)
    message_id = fields.BigIntField()  # the assistant message (no foreign key: see above)
    seq = fields.IntField()  # the `usage` event's id in its run
    run_id = fields.CharField(max_length=64)
    session_id = fields.BigIntField()
    platform = fields.CharField(max_length=16, default="")  # where the run was asked: slack, discord, api
    workspace = fields.CharField(max_length=64, default="")  # the session's team / guild, if bound
    channel = fields.CharField(max_length=64, default="")
    user = fields.CharField(max_length=64, default="")  # who asked: a platform user id, or admin
    model = fields.CharField(max_length=128, default="")  # as the Bridge called it
    prompt_tokens = fields.BigIntField(default=0)  # cached ones included, as providers count
    completion_tokens = fields.BigIntField(default=0)
    cached_tokens = fields.BigIntField(default=0)
    cost = fields.FloatField(null=True)
    at = fields.DatetimeField(default=utc_now)

    class Meta:
        table = "usage_call"
        unique_together = (("message_id", "seq"),)
        indexes = (Index(fields=("session_id",), name="idx_usage_call_session"),)


class UsageDay(Model):
    """The model calls of one UTC day summed four ways (`dimension`): by user, channel, workspace and model (`subject`), each with the platform they were asked from and a channel with its workspace: what usage reports and spend limits read."""  # noqa: E501

    id = fields.BigIntField(primary_key=True)
    dimension = fields.CharField(max_length=16)  # user, channel, workspace or model
    subject = fields.CharField(max_length=128)  # the user, channel or workspace id, the model
    workspace = fields.CharField(max_length=64, default="")  # a channel's workspace
    day = fields.DateField()
    platform = fields.CharField(max_length=16, default="")
    calls = fields.BigIntField(default=0)
    prompt_tokens = fields.BigIntField(default=0)
    completion_tokens = fields.BigIntField(default=0)
    cached_tokens = fields.BigIntField(default=0)
    cost = fields.FloatField(default=0.0)
    priced_calls = fields.BigIntField(default=0)  # of `calls`, those with a price

    class Meta:
        table = "usage_day"
        unique_together = (("dimension", "subject", "workspace", "day", "platform"),)
        indexes = (Index(fields=("dimension", "day"), name="idx_usage_day_range"),)


class LimitScope(StrEnum):
    USER = "user"
    CHANNEL = "channel"
    WORKSPACE = "workspace"


class LimitPeriod(StrEnum):
    DAY = "day"
    MONTH = "month"


class LimitUnit(StrEnum):
    TOKENS = "tokens"
    COST = "cost"


class SpendLimit(Model):
    """An operator's spend limit for one user, channel or workspace, in place of the default of its settings (amount null: no limit)."""  # noqa: E501

    id = fields.BigIntField(primary_key=True)
    scope = fields.CharEnumField(LimitScope, max_length=16)
    subject = fields.CharField(max_length=64)  # the user, channel or workspace id
    period = fields.CharEnumField(LimitPeriod, max_length=8)
    unit = fields.CharEnumField(LimitUnit, max_length=8)
    amount = fields.FloatField(null=True)
    updated_at = fields.DatetimeField(default=utc_now)

    class Meta:
        table = "spend_limit"
        unique_together = (("scope", "subject", "period", "unit"),)


class ScheduleState(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"


class Misfire(StrEnum):
    """What an occurrence missed while no replica ran (a downtime) becomes."""

    RUN_ONCE = "run_once"  # the missed occurrences run once, as soon as a replica is up
    SKIP = "skip"  # they are recorded as skipped; the next one on time runs


class Schedule(Model):
    """A scheduled prompt: at each occurrence of `cron` (a five-field crontab in `timezone`) a new thread starts in the channel with the prompt, as `author` wrote it. `next_run_at` is the first occurrence not yet handled (the persistent state of its apscheduler job)."""  # noqa: E501

    id = fields.BigIntField(primary_key=True)
    platform = fields.CharEnumField(Platform, max_length=16)
    workspace = fields.CharField(max_length=64)  # the Slack team, the Discord guild
    channel = fields.CharField(max_length=64)
    author = fields.CharField(max_length=64)  # who scheduled it: the runs are theirs
    prompt = fields.TextField()
    phrase = fields.CharField(max_length=200)  # as the person wrote it ("every weekday at 9:00")
    cron = fields.CharField(max_length=120)  # minute hour day month weekday (0 = Sunday)
    timezone = fields.CharField(max_length=64)  # an IANA zone name
    misfire = fields.CharEnumField(Misfire, max_length=16, default=Misfire.RUN_ONCE)
    state = fields.CharEnumField(ScheduleState, max_length=16, default=ScheduleState.ACTIVE)
    next_run_at = fields.DatetimeField(null=True)  # null while paused
    created_at = fields.DatetimeField(default=utc_now)
    updated_at = fields.DatetimeField(default=utc_now)

    class Meta:
        table = "schedule"
        indexes = (Index(fields=("state", "next_run_at"), name="idx_schedule_due"),
                   Index(fields=("platform", "workspace", "channel"), name="idx_schedule_channel"))


class RunOutcome(StrEnum):
    CLAIMED = "claimed"  # a replica took the occurrence and is starting it
    STARTED = "started"  # its thread is open and its run started
    SKIPPED = "skipped"  # missed during a downtime, and the schedule skips those
    REFUSED = "refused"  # the author may not talk any more, or is over a limit
    FAILED = "failed"  # the thread could not be opened, or the run not started


class ScheduleRun(Model):
    """One occurrence of a schedule: the claim that makes one replica start it (unique per schedule and occurrence time), then its outcome, thread and run: the schedule's run history."""  # noqa: E501

    id = fields.BigIntField(primary_key=True)
    schedule: fields.ForeignKeyRelation[Schedule] = fields.ForeignKeyField(
        "hermes.Schedule", related_name="runs", on_delete=fields.CASCADE)
    occurrence_at = fields.DatetimeField()  # the occurrence it stands for (UTC)
    claimed_at = fields.DatetimeField(default=utc_now)
    outcome = fields.CharEnumField(RunOutcome, max_length=16, default=RunOutcome.CLAIMED)
    session_id = fields.BigIntField(null=True)  # the conversation it started
    thread = fields.CharField(max_length=64, default="")  # the platform thread it opened
    run_id = fields.CharField(max_length=64, default="")
    detail = fields.TextField(default="")  # why it was refused or failed

    class Meta:
        table = "schedule_run"
        unique_together = (("schedule", "occurrence_at"),)


class ChannelSetting(Model):
    """The settings of one channel (`channel` empty: the default of a whole workspace or guild), the keys an admin set: they override the service's settings for conversations started there."""  # noqa: E501

    id = fields.BigIntField(primary_key=True)
    platform = fields.CharEnumField(Platform, max_length=16)
    workspace = fields.CharField(max_length=64)
    channel = fields.CharField(max_length=64, default="")
    settings: Any = fields.JSONField(default=dict)
    updated_by = fields.CharField(max_length=64, default="")
    updated_at = fields.DatetimeField(default=utc_now)

    class Meta:
        table = "channel_setting"
        unique_together = (("platform", "workspace", "channel"),)


class BusyMessage(Model):
    """A message refused while its thread's run worked, kept until the person who wrote it chooses to queue it or give it to that run as guidance (the busy notice's buttons)."""  # noqa: E501

    id = fields.BigIntField(primary_key=True)
    session: fields.ForeignKeyRelation[ChatSession] = fields.ForeignKeyField(
        "hermes.ChatSession", related_name="busy_messages", on_delete=fields.CASCADE
    )
    session_id: int
    run_id = fields.CharField(max_length=64)  # the run in flight it was refused for
    author = fields.CharField(max_length=64)
    platform_message_id = fields.CharField(max_length=64)
    text = fields.TextField()
    created_at = fields.DatetimeField(default=utc_now)

    class Meta:
        table = "busy_message"
