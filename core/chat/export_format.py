"""Pure rendering of an export: a session and its messages as Markdown or JSON pieces."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core.agent.thinking import UsageTotals
from core.chat.attachment_store import AttachmentInfo
from core.chat.attachments import describe_size
from core.chat import thread_context
from core.chat.feedback import Feedback
from core.store.models import (
    ChatMessage, ChatMessageLog, ChatSession, ClarifyPause, ConversationBinding, PauseStatus, Role,
)
from core.usage import words


@dataclass(frozen=True, slots=True)
class ExportContext:
    """What every message's rendering needs to know about its place in the whole export."""

    branch: str  # "active" or "all"
    active_ids: frozenset[int]
    siblings: dict[int, tuple[int, int]] = field(default_factory=dict)  # id -> (k, n)


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of the export with what its run left: logs, clarify questions, feedback."""

    message: ChatMessage
    logs: list[ChatMessageLog] = field(default_factory=list)
    pauses: list[ClarifyPause] = field(default_factory=list)
    rated: Sequence[Feedback] = ()
    files: Sequence[AttachmentInfo] = ()  # a user message's attachments
    usage: UsageTotals = UsageTotals()  # what an assistant message's run spent


def stamp(at: datetime | None) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC") if at else "-"


def iso(at: datetime | None) -> str | None:
    return at.isoformat() if at else None


def md_header(
    session: ChatSession, bindings: list[ConversationBinding], count: int, ctx: ExportContext,
    usage: UsageTotals,
) -> str:
    """Title and metadata of a Markdown export; `usage`: what every run of the session spent."""
    scope = "active branch" if ctx.branch == "active" else "every version"
    lines = [
        f"# {session.title or 'Untitled conversation'}",
        "",
        f"- Session: `{session.uuid}` ({session.status})",
        f"- Created: {stamp(session.created_at)} · last activity: {stamp(session.last_message_at)}",
        f"- Model: {session.model_id or 'default'} · skill: {session.skill_folder or 'none'}",
        f"- Exported: {scope}, {count} messages",
    ]
    lines += [f"- Chat: {b.platform} {b.workspace}/{b.channel}/{b.thread or '-'}" for b in bindings]
    if usage.calls:
        lines.append(f"- Usage: {md_usage(usage)}, every version of every answer")
    return "\n".join(lines) + "\n"


def md_usage(usage: UsageTotals) -> str:
    """"3 model calls · 330 tokens (300 in, 30 out) · $0.00084"."""
    return f"{usage.calls} model call{'s' if usage.calls != 1 else ''} · {words.spent(usage)}"


def md_message(turn: Turn, ctx: ExportContext) -> str:
    """One turn of a Markdown export; a summary is a quoted divider."""
    message = turn.message
    if message.role == Role.SYSTEM:
        return f"\n---\n\n> **Earlier messages were summarised**\n>\n{_quote(message.content)}\n\n---\n"
    who = "User" if message.role == Role.USER else "Assistant"
    head = [f"**{who}** #{message.id}"]
    if message.role == Role.ASSISTANT:
        head.append(str(message.status))
    head.append(stamp(message.created_at))
    if message.author:
        head.append(f"by {message.author}")
    if ctx.branch == "all":
        head += _version_marks(message, ctx)
    questions = "".join(md_question(pause) + "\n" for pause in turn.pauses)
    questions = md_thread_context(message) + questions
    body = message.content or "_(no text)_"
    tail = _md_tail(message, turn.logs, turn.rated, turn.usage)
    files = "".join(md_attachment(f) for f in turn.files)
    return "\n" + " · ".join(head) + "\n\n" + questions + body + "\n" + files + tail


def md_attachment(file: AttachmentInfo) -> str:
    """A file of a user message, as a line under it (its name in code: no Markdown of its own)."""
    name = file.name.replace("`", "'")
    return f"\n📎 `{name}` · {file.mime_type} · {describe_size(file.size)} · sha256 {file.sha256}\n"


def md_thread_context(message: ChatMessage) -> str:
    """The thread's earlier messages the agent was given with a user message, as a quote
    above its words (empty without them)."""
    context = thread_context.from_stored(message.thread_context)
    if not context:
        return ""
    lines = ["**Earlier in the thread** (given to the agent as context)", ""]
    lines += [thread_context.line(m) for m in context]
    return _quote("\n".join(lines)) + "\n\n"


def md_question(pause: ClarifyPause) -> str:
    """A clarify question as a quote: the question, its choices, and who answered what."""
    lines = [f"**Question:** {pause.question}", ""]
    if pause.choices:
        lines += [*(f"{k}. {choice}" for k, choice in enumerate(pause.choices, 1)), ""]
    lines.append(_md_answer(pause))
    return _quote("\n".join(lines)) + "\n"


def _quote(text: str) -> str:
    """`text` as a Markdown quote, line by line."""
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def _md_answer(pause: ClarifyPause) -> str:
    if pause.status == PauseStatus.EXPIRED:
        return "_Not answered: the question expired._"
    if pause.status != PauseStatus.ANSWERED:
        return "_Waiting for an answer._"
    who = pause.answered_by or "someone"
    answer = pause.answer or ""
    if answer in pause.choices:
        return f"**Answer** by {who}: choice {pause.choices.index(answer) + 1}, {answer}"
    return f"**Answer** by {who}, in their own words: {answer}"


def _version_marks(message: ChatMessage, ctx: ExportContext) -> list[str]:
    marks = []
    if message.parent_id is not None:
        marks.append(f"reply to #{message.parent_id}")
    k, n = ctx.siblings.get(message.id, (1, 1))
    if n > 1:
        marks.append(f"version {k} of {n}")
    if message.id not in ctx.active_ids:
        marks.append("*other version, not on the active branch*")
    return marks


def _md_tail(message: ChatMessage, logs: list[ChatMessageLog], rated: Sequence[Feedback],
             usage: UsageTotals) -> str:
    lines = []
    tools = sorted({log.tool_name for log in logs if log.kind == "tool_start" and log.tool_name})
    if tools:
        lines.append(f"_Tools used: {', '.join(tools)}_")
    if usage.calls:
        lines.append(f"_Usage: {md_usage(usage)}_")
    if message.error:
        lines.append(f"_Failed: {message.error}_")
    if rated:
        marks = {"good": "👍", "bad": "👎"}
        lines.append("_Feedback: " + ", ".join(f"{marks[str(f.value)]} {f.user}" for f in rated) + "_")
    return ("\n" + "\n".join(lines) + "\n") if lines else ""


def json_session(
    session: ChatSession, bindings: list[ConversationBinding], branch: str, now: datetime,
    usage: UsageTotals,
) -> dict[str, Any]:
    """The session part of a JSON export; `usage`: what every run of the session spent."""
    return {
        "id": session.id,
        "uuid": str(session.uuid),
        "title": session.title,
        "modelId": session.model_id,
        "skillFolder": session.skill_folder,
        "status": str(session.status),
        "createdAt": iso(session.created_at),
        "lastMessageAt": iso(session.last_message_at),
        "lastSummarizedAt": iso(session.last_summarized_at),
        "bindings": [
            {"platform": str(b.platform), "workspace": b.workspace, "channel": b.channel,
             "thread": b.thread}
            for b in bindings
        ],
        "branch": branch,
        "exportedAt": iso(now),
        "usage": json_usage(usage),
    }


def json_usage(usage: UsageTotals) -> dict[str, Any]:
    """What model calls spent, as the admin API shows it (`cost` null: none was priced)."""
    return {"calls": usage.calls, "promptTokens": usage.prompt_tokens,
            "completionTokens": usage.completion_tokens, "cachedTokens": usage.cached_tokens,
            "tokens": usage.tokens, "cost": usage.cost}


def json_message(turn: Turn) -> dict[str, Any]:
    """One node of a JSON export, with its logs and clarify questions when it is an assistant
    message."""
    message = turn.message
    item: dict[str, Any] = {
        "id": message.id,
        "parentId": message.parent_id,
        "role": str(message.role),
        "status": str(message.status),
        "isActive": message.is_active,
        "branchOrder": message.branch_order,
        "content": message.content,
        "modelId": message.model_id,
        "skillFolder": message.skill_folder,
        "runId": message.run_id,
        "author": message.author,
        "error": message.error,
        "createdAt": iso(message.created_at),
        "completedAt": iso(message.completed_at),
    }
    if context := thread_context.from_stored(message.thread_context):
        item["threadContext"] = [{"author": m.author, "text": m.text, "at": iso(m.at),
                                  "files": list(m.files), "bot": m.bot} for m in context]
    if turn.files:
        item["attachments"] = [{"id": f.id, "name": f.name, "mimeType": f.mime_type,
                                "size": f.size, "sha256": f.sha256} for f in turn.files]
    if message.role == Role.ASSISTANT:
        item["logs"] = [_json_log(log) for log in turn.logs]
        item["clarify"] = [json_question(pause) for pause in turn.pauses]
        item["feedback"] = [{"user": f.user, "value": str(f.value), "at": iso(f.at)}
                            for f in turn.rated]
        item["usage"] = json_usage(turn.usage)
    return item


def json_question(pause: ClarifyPause) -> dict[str, Any]:
    """A clarify question of a JSON export: `custom` is whether the answer was the answerer's
    own words rather than one of the choices (null while there is no answer)."""
    answered = pause.status == PauseStatus.ANSWERED
    return {
        "question": pause.question,
        "choices": list(pause.choices),
        "status": str(pause.status),
        "answer": pause.answer if answered else None,
        "answeredBy": pause.answered_by if answered else None,
        "custom": (pause.answer not in pause.choices) if answered else None,
        "askedAt": iso(pause.created_at),
        "answeredAt": iso(pause.answered_at) if answered else None,
    }


def _json_log(log: ChatMessageLog) -> dict[str, Any]:
    return {
        "seq": log.seq,
        "kind": log.kind,
        "content": log.content,
        "toolName": log.tool_name,
        "meta": _parse_meta(log.meta_json),
        "createdAt": iso(log.created_at),
    }


def _parse_meta(meta_json: str | None) -> Any:
    if meta_json is None:
        return None
    try:
        return json.loads(meta_json)
    except ValueError:
        return meta_json  # kept as stored rather than lost
