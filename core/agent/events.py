"""Typed Bridge events (docs/bridge-protocol.md) and their lossless rows in `chat_message_log`.

One frozen msgspec Struct per SSE event name; `kind` is the SSE `event:` name, `seq` the SSE
`id:` and `at` a time the caller supplies (its clock for live events, the row's `created_at`
on replay), so the same reducer folds live streams and stored logs.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from types import MappingProxyType
from typing import Annotated, Any, Literal

import msgspec

from core.errors import InvalidInput, MalformedEvent
from core.text.safe_text import clean_value

logger = logging.getLogger(__name__)

TodoStatus = Literal["pending", "in_progress", "completed", "cancelled"]
TOOL_NAME_MAX = 128  # the size of chat_message_log.tool_name (core/store/models.py)
CLARIFY_ID_MAX = 64  # the size of clarify_pause.clarify_id


class _Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind"):
    seq: Annotated[int, msgspec.Meta(ge=1)]
    at: datetime


class TextDelta(_Event, frozen=True, tag="text"):
    text: str


class ThinkingStatus(_Event, frozen=True, tag="thinking_status"):
    content: str


class Step(_Event, frozen=True, tag="step"):
    iteration: int
    prev_tools: tuple[str, ...] = ()


class Status(_Event, frozen=True, tag="status"):
    category: str
    message: str


class ToolProgress(_Event, frozen=True, tag="tool_progress"):
    event_name: str
    tool_name: str | None = None
    preview: str | None = None


class ToolStart(_Event, frozen=True, tag="tool_start"):
    tool_call_id: str
    tool_name: str
    args: dict[str, Any] = {}


class ToolEnd(_Event, frozen=True, tag="tool_end"):
    tool_call_id: str
    tool_name: str
    result: str
    is_error: bool = False


class Todo(msgspec.Struct, frozen=True):
    id: str
    content: str
    status: TodoStatus


class TodoUpdate(_Event, frozen=True, tag="todo_update"):
    todos: tuple[Todo, ...]
    summary: dict[str, Any] = {}


class ClarifyRequest(_Event, frozen=True, tag="clarify_request"):
    clarify_id: Annotated[str, msgspec.Meta(min_length=1, max_length=CLARIFY_ID_MAX)]
    question: str
    choices: tuple[str, ...] = ()


class ApprovalRequest(_Event, frozen=True, tag="approval_request"):
    """A tool call hermes-agent flagged as dangerous, waiting for a decision."""

    approval_id: Annotated[str, msgspec.Meta(min_length=1, max_length=CLARIFY_ID_MAX)]
    command: str
    tool: str = "terminal"
    reason: str = ""
    pattern_key: str = ""
    choices: tuple[str, ...] = ()


class ContextCompacted(_Event, frozen=True, tag="context_compacted"):
    summary: str
    compacted_until: int | None = None


class CheckpointClarify(msgspec.Struct, frozen=True):
    """The clarify a checkpoint was taken at: the tool call the answer is the result of."""

    call_id: Annotated[str, msgspec.Meta(min_length=1)]
    clarify_id: str


class CheckpointApproval(msgspec.Struct, frozen=True):
    """The approval a checkpoint was taken at (its messages end before the step that asked)."""

    approval_id: Annotated[str, msgspec.Meta(min_length=1)]


class Checkpoint(_Event, frozen=True, tag="checkpoint"):
    """What a continuation of the turn needs: the agent's messages so far. Its seq is the id
    of the event before it (it takes none of its own). Stored apart from the log (one per run,
    the latest: core/runtime/checkpoints.py), never as a log row."""

    messages: tuple[dict[str, Any], ...]
    clarify: CheckpointClarify | None = None
    approval: CheckpointApproval | None = None


Count = Annotated[int, msgspec.Meta(ge=0)]


class Usage(_Event, frozen=True, tag="usage"):
    """One model call's tokens as the provider reported them (`prompt_tokens` includes the
    cached ones). `cost` is never sent by the Bridge: the runtime sets it from the model's
    prices in MODELS_FILE before it stores the event (None: not priced)."""

    model: str | None = None
    prompt_tokens: Count = 0
    completion_tokens: Count = 0
    cached_tokens: Count = 0
    cost: float | None = None


class Done(_Event, frozen=True, tag="done"):
    final_text: str
    model: str | None = None  # the model that answered, as the Bridge called it


class RunError(_Event, frozen=True, tag="error"):
    message: str
    code: str = "internal"


Event = (
    TextDelta | ThinkingStatus | Step | Status | ToolProgress | ToolStart | ToolEnd
    | TodoUpdate | ClarifyRequest | ApprovalRequest | ContextCompacted | Checkpoint | Usage
    | Done | RunError
)
_BY_KIND: MappingProxyType[str, type[_Event]] = MappingProxyType(
    {cls.__struct_config__.tag: cls for cls in Event.__args__}
)
KINDS: frozenset[str] = frozenset(_BY_KIND)
_TOOL_KINDS = frozenset({"tool_start", "tool_end", "tool_progress"})
_VITAL_KINDS = frozenset({"done", "error", "clarify_request", "approval_request"})


def kind_of(event: Event) -> str:
    """The SSE event name (and log `kind`) of an event."""
    return str(type(event).__struct_config__.tag)


def is_terminal(event: Event) -> bool:
    """True for `done` and `error`: the Bridge closes the stream after them."""
    return isinstance(event, (Done, RunError))


def parse_event(
    event_id: str, name: str, data: str, at: datetime, run_id: str | None = None
) -> Event | None:
    """Type one SSE event, its text made storable (core/text/safe_text.py) and its tool name cut to
    its column. Unknown events, and malformed ones a run can do without, are logged and give
    None; a malformed `done`, `error` or `clarify_request` raises MalformedEvent (skipping it
    would leave the run waiting for an end or a question that never comes)."""
    if name not in KINDS:
        logger.warning("skipping unknown bridge event %r id=%r of run %s", name, event_id, run_id)
        return None
    try:
        payload = _decode(data)
        if not isinstance(payload, dict):
            raise ValueError("data is not a JSON object")
        if name in _TOOL_KINDS:
            _cut_tool_name(payload)
        return _convert({**payload, "kind": name, "seq": _seq(event_id), "at": at})
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
        if name in _VITAL_KINDS:
            raise MalformedEvent(f"The agent service sent a malformed {name} event (id "
                                 f"{event_id!r}), so this run cannot go on: {exc}") from exc
        logger.warning(
            "skipping malformed bridge event %r id=%r of run %s: %s", name, event_id, run_id, exc
        )
        return None


def _decode(data: str) -> Any:
    """The JSON of `data`, NUL and lone surrogates replaced: msgspec refuses a lone surrogate
    escape (`\\ud83d` alone) and a raw control character, the standard library takes both;
    the common case costs two substring searches."""
    try:
        payload = msgspec.json.decode(data)
    except msgspec.DecodeError:
        return clean_value(json.loads(data, strict=False))
    return clean_value(payload) if "\\u0000" in data else payload


def _cut_tool_name(payload: dict[str, Any]) -> None:
    name = payload.get("tool_name")
    if isinstance(name, str) and len(name) > TOOL_NAME_MAX:
        payload["tool_name"] = name[:TOOL_NAME_MAX]


def _seq(event_id: str) -> int:
    if not (event_id.isascii() and event_id.isdigit()):
        raise ValueError(f"event id {event_id!r} is not a positive integer")
    return int(event_id)


def _convert(fields: dict[str, Any]) -> Event:
    # Converting to the one class of this kind is ~15x faster than to the tagged union.
    return msgspec.convert(fields, _BY_KIND[fields["kind"]])  # type: ignore[return-value]


# --- chat_message_log rows -------------------------------------------------------------

# Which field of each kind is stored in the `content` column; every other field but
# `tool_name` goes to `meta_json`.
_CONTENT_FIELD: MappingProxyType[str, str] = MappingProxyType({
    "text": "text",
    "thinking_status": "content",
    "status": "message",
    "tool_progress": "preview",
    "tool_end": "result",
    "clarify_request": "question",
    "approval_request": "command",
    "context_compacted": "summary",
    "done": "final_text",
    "error": "message",
})


class LogRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One `chat_message_log` row, without its message id."""

    seq: int
    kind: str
    content: str | None = None
    tool_name: str | None = None
    meta_json: str | None = None
    created_at: datetime


def event_to_log(event: Event) -> LogRecord:
    """The log row of an event; `event_from_log` gives the same event back."""
    kind = kind_of(event)
    fields = msgspec.structs.asdict(event)
    del fields["seq"], fields["at"]
    content = fields.pop(_CONTENT_FIELD.get(kind, ""), None)
    tool_name = fields.pop("tool_name", None)
    meta = msgspec.json.encode(fields).decode() if fields else None
    return LogRecord(
        seq=event.seq, kind=kind, content=content, tool_name=tool_name,
        meta_json=meta, created_at=event.at,
    )


def event_from_log(record: LogRecord) -> Event:
    """The event a stored log row holds; raises InvalidInput for a row no event maps to."""
    cls = _BY_KIND.get(record.kind)
    if cls is None:
        raise InvalidInput(f"log row {record.seq} has unknown kind {record.kind!r}")
    try:
        fields = msgspec.json.decode(record.meta_json) if record.meta_json else {}
        if record.kind in _CONTENT_FIELD:
            fields[_CONTENT_FIELD[record.kind]] = record.content
        if "tool_name" in cls.__struct_fields__:
            fields["tool_name"] = record.tool_name
        return _convert({**fields, "kind": record.kind, "seq": record.seq, "at": record.created_at})
    except (msgspec.DecodeError, msgspec.ValidationError, TypeError) as exc:
        reason = f"log row {record.seq} ({record.kind}) is not a valid event: {exc}"
        raise InvalidInput(reason) from exc
