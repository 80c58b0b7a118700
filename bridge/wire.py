"""Request bodies of docs/bridge-protocol.md, decoded and validated at the edge."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, TypeVar

import msgspec

from bridge.errors import InvalidRequest
from core.agent.bridge.types import STEER_CHARS

Identifier = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$")


class ModelSpec(msgspec.Struct, frozen=True):
    """Which model a run uses; `api_key_env` names a variable of the Bridge, never a key."""

    name: Annotated[str, msgspec.Meta(min_length=1)]
    base_url: str | None = None
    api_key_env: str | None = None


class ImageURL(msgspec.Struct, frozen=True):
    url: Annotated[str, msgspec.Meta(pattern=r"^data:image/(png|jpeg|gif|webp);base64,")]


class TextPart(msgspec.Struct, frozen=True, tag_field="type", tag="text"):
    text: str


class ImagePart(msgspec.Struct, frozen=True, tag_field="type", tag="image_url"):
    image_url: ImageURL


ContentPart = TextPart | ImagePart
Content = str | Annotated[list[ContentPart], msgspec.Meta(min_length=1)]


class HistoryMessage(msgspec.Struct, frozen=True):
    role: Literal["user", "assistant", "system"]
    content: Content


class ClarifyResume(msgspec.Struct, frozen=True):
    """The answer to the clarify a resumed turn waited on: it becomes that tool call's result."""

    call_id: Annotated[str, msgspec.Meta(min_length=1)]
    answer: str


Decision = Literal["once", "session", "always", "deny"]
SteerText = Annotated[str, msgspec.Meta(min_length=1, max_length=STEER_CHARS)]
PatternKey = Annotated[str, msgspec.Meta(min_length=1, max_length=500)]


class ApprovalResume(msgspec.Struct, frozen=True):
    """The decision given to the approval a resumed turn waited on: applied, once, to the same
    command when the resumed step asks for it again."""

    pattern_key: PatternKey
    command: str
    decision: Decision


class Resume(msgspec.Struct, frozen=True):
    """A turn another Bridge process began: its messages so far (its last `checkpoint`), and
    the id its first event here takes (one past every event the caller already has);
    `steers`: guidance given to the turn after that checkpoint, read again at its next step."""

    first_event_id: Annotated[int, msgspec.Meta(ge=1)]
    messages: list[dict[str, Any]]
    clarify: ClarifyResume | None = None
    approval: ApprovalResume | None = None
    steers: list[SteerText] = msgspec.field(default_factory=list)


class RunRequest(msgspec.Struct, frozen=True):
    run_id: Identifier
    session_id: Identifier
    user_message: Annotated[str, msgspec.Meta(min_length=1)]
    user_content: Annotated[list[ContentPart], msgspec.Meta(min_length=1)] | None = None
    system_prompt: str | None = None
    model: ModelSpec | None = None
    max_iterations: Annotated[int, msgspec.Meta(ge=1, le=500)] | None = None
    history: list[HistoryMessage] | None = None
    resume: Resume | None = None
    # hermes-agent pattern keys remembered as allowed for this run (this conversation's and
    # the global ones): their commands run without asking
    approved_patterns: Annotated[list[PatternKey], msgspec.Meta(max_length=1000)] = []
    # the toolsets of the conversation's channel, within BRIDGE_TOOLSETS (None: all of those)
    toolsets: Annotated[list[Identifier], msgspec.Meta(max_length=100)] | None = None
    # "deny": a command hermes-agent flags is refused without asking anyone (the channel's
    # approval policy); "ask": it waits for a decision (approval_request)
    approvals: Literal["ask", "deny"] = "ask"


class ClarifyAnswer(msgspec.Struct, frozen=True):
    answer: str


class ApprovalAnswer(msgspec.Struct, frozen=True):
    approval_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    decision: Decision


class SteerRequest(msgspec.Struct, frozen=True):
    """Guidance for a running turn: the agent reads it at its next step."""

    text: SteerText


class MemoryUpdate(msgspec.Struct, frozen=True):
    memory: str | None = None
    user: str | None = None


def message_content(content: Content) -> str | list[dict[str, Any]]:
    """Content as the agent takes it: a string, or the parts as plain dicts."""
    return content if isinstance(content, str) else msgspec.to_builtins(content)


T = TypeVar("T")


def decode(body: bytes, kind: type[T]) -> T:
    """Decode a JSON body into `kind`, or raise InvalidRequest saying what is wrong."""
    try:
        value = msgspec.json.decode(body, type=kind)
    except msgspec.DecodeError as exc:
        raise InvalidRequest(f"body is not valid JSON: {exc}") from None
    except msgspec.ValidationError as exc:
        raise InvalidRequest(str(exc)) from None
    if isinstance(value, RunRequest):
        _check_run_request(value)
    return value


def _check_run_request(request: RunRequest) -> None:
    check_identifier("run_id", request.run_id)
    check_identifier("session_id", request.session_id)
    if not request.user_message.strip():
        raise InvalidRequest("user_message must not be blank")


def check_identifier(label: str, value: str) -> str:
    """Ids name files and threads: letters, digits and `._:@-` only."""
    if not _ID_PATTERN.match(value):
        raise InvalidRequest(f"{label} must match {_ID_PATTERN.pattern}, got {value!r}")
    return value


def parse_last_event_id(raw: str | None) -> int:
    """`Last-Event-ID: N` → N (absent = 0, replay from the start)."""
    if raw is None or not raw.strip():
        return 0
    try:
        value = int(raw.strip())
    except ValueError:
        raise InvalidRequest(f"Last-Event-ID must be an integer, got {raw!r}") from None
    if value < 0:
        raise InvalidRequest("Last-Event-ID must not be negative")
    return value
