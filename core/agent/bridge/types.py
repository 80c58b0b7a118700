"""Request and answer bodies of the Bridge calls (docs/bridge-protocol.md), typed at the edge."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

RunStateName = Literal["running", "waiting_clarify", "waiting_approval", "done", "error",
                       "unknown"]
Decision = Literal["once", "session", "always", "deny"]


class ModelRef(msgspec.Struct, frozen=True, kw_only=True):
    """Which LLM the Bridge's agent calls; the key is named by an env var, never sent."""

    name: str
    base_url: str | None = None
    api_key_env: str | None = None


ContentPart = dict[str, Any]  # {"type": "text", "text"} or {"type": "image_url", "image_url": {"url"}}


class HistoryMessage(msgspec.Struct, frozen=True):
    """One message of the conversation the agent sees before `user_message`; a user message
    that came with files has content parts (core.chat.attachments.content)."""

    role: Literal["user", "assistant", "system"]
    content: str | list[ContentPart]


class ClarifyResume(msgspec.Struct, frozen=True):
    """The answer a resumed turn's clarify tool call gets as its result."""

    call_id: str
    answer: str


class ApprovalResume(msgspec.Struct, frozen=True):
    """The decision given to the approval a resumed turn waited on; the Bridge applies it once
    when the resumed step asks about the same command again."""

    pattern_key: str
    command: str
    decision: Decision


STEER_CHARS = 20000  # the most guidance the Bridge takes at once (bridge/wire.py's `SteerText`)


class Resume(msgspec.Struct, frozen=True, kw_only=True):
    """A turn continued on another Bridge process: its messages so far (its last checkpoint)
    and the id its first event takes there, one past every event the runtime has seen;
    `steers`: the guidance people gave the turn that its checkpoint does not hold yet, given to
    its agent again (read at its next step)."""

    first_event_id: int
    messages: tuple[dict[str, Any], ...]
    clarify: ClarifyResume | None = None
    approval: ApprovalResume | None = None
    steers: tuple[str, ...] = ()


class RunRequest(msgspec.Struct, frozen=True, kw_only=True):
    """Body of `POST /run`; `history=None` lets the Bridge use the session's own history;
    `resume` continues a turn another Bridge process began; `user_content` is the user message
    as content parts when it came with files (`user_message` stays its text)."""

    run_id: str
    session_id: str
    user_message: str
    user_content: list[ContentPart] | None = None
    system_prompt: str | None = None
    model: ModelRef | None = None
    max_iterations: int | None = None
    history: tuple[HistoryMessage, ...] | None = None
    resume: Resume | None = None
    approved_patterns: tuple[str, ...] = ()  # remembered approvals that apply to this run
    toolsets: tuple[str, ...] | None = None  # the channel's toolsets (None: the Bridge's own)
    approvals: str = "ask"  # "deny": a flagged command is refused without asking anyone

    def to_json(self) -> dict[str, Any]:
        """The wire body: `history` is omitted when None, present (even empty) otherwise;
        `resume` only when set (its `approval` and `steers` only when given)."""
        body: dict[str, Any] = msgspec.to_builtins(self)
        if self.history is None:
            del body["history"]
        if self.resume is None:
            del body["resume"]
        else:
            for field in ("approval", "steers"):
                if not getattr(self.resume, field):
                    del body["resume"][field]
        if self.user_content is None:
            del body["user_content"]
        if not self.approved_patterns:
            del body["approved_patterns"]
        if self.toolsets is None:
            del body["toolsets"]
        if self.approvals == "ask":
            del body["approvals"]
        return body

    @property
    def user_turn(self) -> dict[str, Any]:
        """The user message as the agent gets it: its content parts, or its text."""
        return {"role": "user", "content": self.user_content or self.user_message}


class ClarifyInfo(msgspec.Struct, frozen=True):
    """A question a run waits on."""

    clarify_id: str
    question: str
    choices: tuple[str, ...] = ()


class RunState(msgspec.Struct, frozen=True, kw_only=True):
    """Answer of `GET /runs/{run_id}`; an unknown run has state "unknown"."""

    run_id: str
    state: RunStateName
    session_id: str | None = None
    last_event_id: int = 0
    pending_clarify: ClarifyInfo | None = None
    pending_approval: dict[str, Any] | None = None


class Memory(msgspec.Struct, frozen=True):
    """MEMORY.md and USER.md of a session's scope."""

    session_id: str
    memory: str
    user: str


class Health(msgspec.Struct, frozen=True):
    """Answer of `GET /health`."""

    status: str
    runs: int
    agents: int
    instance: str | None = None  # which Bridge process answered (its supervisor checks it)
