"""The names the front ends (the Slack and Discord adapters, the admin API, the terminal chat)
use from the layers below, given here so that they enter through the conversation layer only:
the stored records and their states, a run's view and what carries it, the agent's events and
the thinking state a run's view folds them into, and what a run is given (the catalogue, the
files a message carries). The front ends read these; what changes a conversation goes through
the functions of this package (`turns`, `commands`, `views`, ...), never the records' queries.
"""

from __future__ import annotations

from core.agent.bridge.fleet import BridgeFleet
from core.agent.bridge.port import Bridge
from core.agent.bridge.types import Memory
from core.agent.catalogue import Catalogue
from core.agent.default_model import DefaultModel
from core.agent.events import KINDS, ApprovalRequest, ClarifyRequest, Event, is_terminal, kind_of
from core.agent.thinking import (
    CurrentStatus,
    PendingApproval,
    PendingClarify,
    RunFailure,
    ThinkingState,
    ToolCall,
    UsageTotals,
    reduce,
)
from core.chat.attachment_store import AttachmentInfo
from core.chat.attachments import FileOffer, FileReader, Refused
from core.chat.policy import Policy
from core.chat.schedules import NewSchedule, ScheduleEdit
from core.chat.schedules import Where as ScheduleWhere
from core.chat.sessions import ThreadKey
from core.chat.thread_context import DEFAULT_MESSAGES, TEXT_CHARS, EarlierMessage, from_stored
from core.runtime.clarify import ClarifyOutcome
from core.runtime.pool import RunPool
from core.runtime.shards import AllShards, Shards
from core.runtime.updates import PauseView, RunUpdate, Subscription
from core.store.db import ping
from core.store.models import (
    ChatMessage,
    ChatMessageLog,
    ChatSession,
    ClarifyPause,
    FeedbackValue,
    MessageStatus,
    Misfire,
    PauseKind,
    PauseStatus,
    Platform,
    Role,
    RunOutcome,
    Schedule,
    ScheduleRun,
    ScheduleState,
    SessionStatus,
)
from core.store.outage import is_outage

__all__ = [
    "DEFAULT_MESSAGES", "KINDS", "TEXT_CHARS",
    "AllShards", "ApprovalRequest", "AttachmentInfo", "Bridge", "BridgeFleet", "Catalogue",
    "ChatMessage", "ChatMessageLog", "ChatSession", "ClarifyOutcome", "ClarifyPause",
    "ClarifyRequest", "CurrentStatus", "DefaultModel", "EarlierMessage", "Event", "FeedbackValue",
    "FileOffer", "FileReader", "Memory", "MessageStatus", "Misfire", "NewSchedule", "PauseKind",
    "PauseStatus", "PauseView",
    "PendingApproval", "PendingClarify", "Platform", "Policy", "Refused", "Role", "RunFailure",
    "RunOutcome", "RunPool", "RunUpdate", "Schedule", "ScheduleEdit", "ScheduleRun", "ScheduleState",
    "ScheduleWhere", "SessionStatus", "Shards", "Subscription", "ThinkingState",
    "ThreadKey", "ToolCall", "UsageTotals", "from_stored", "is_outage", "is_terminal", "kind_of", "ping",
    "reduce",
]
