"""Export as Markdown and JSON: golden files, branch scope, streaming of a large session."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, UTC
from pathlib import Path

import pytest

from core.agent.events import Usage
from core.chat import sessions, tree
from core.errors import InvalidInput, NotFound
from core.chat.export import export_filename, prepare_export
from core.store.models import (
    ChatMessage,
    ChatMessageLog,
    ChatSession,
    ClarifyPause,
    MessageStatus,
    PauseStatus,
    Platform,
    Role,
)
from core.usage import ledger
from core.usage.spenders import Spender
from tests.core.chat.tree_helpers import answer, finish, user_turn

GOLDEN = Path(__file__).parent / "golden"
T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


async def _conversation() -> int:
    """Two turns, a regenerated answer, a failed regeneration, an edit and a summary; clarify
    questions answered by a choice, in the answerer's own words, and one that expired."""
    key = sessions.ThreadKey(Platform.SLACK, "T1", "C1", "1700000000.000100")
    session, _ = await sessions.session_for_thread(key, model_id="gpt-test")
    s = session.id
    u1 = await user_turn(s, "Plan a **launch** for Friday")
    a1 = await answer(s, u1, "Here is a plan:\n\n1. Write notes\n2. Ship it",
                      model_id="gpt-test", skill_folder="planner")
    await _log(a1, [("tool_start", "todo", None), ("tool_end", "todo", '{"todos": []}'),
                    ("done", None, None)])
    await _spent(a1, 1, cost=0.0012)
    await _spent(a1, 3, cost=0.0009)
    await _ask(a1, "Which day?\nThe office is shut on Monday.", ["Thursday", "Friday"],
               answer="Friday", by="U7")
    await _ask(a1, "Who announces it?", ["You", "Me"], answer="Ana from marketing", by="U42")
    failed = await tree.regenerate(a1.id, s, run_id="run-1b")  # same model and skill
    await finish(failed, "", MessageStatus.FAILED)
    await tree.activate(a1.id, s)
    u2 = await user_turn(s, "And the risks?")
    await tree.add_summary(s, a1.id, "The user plans a Friday launch.\nA plan was given.")
    a2 = await answer(s, u2, "Mostly the weather.")
    await _spent(a2, 1)  # a model without prices
    await _ask(a2, "Which risks?", ["Weather", "People"], status=PauseStatus.EXPIRED)
    a2b = await tree.regenerate(a2.id, s)
    await finish(a2b, "Mostly people being away.")
    u2b = await tree.edit(u2.id, "And the costs?", s, author="U42")
    await answer(s, u2b, "About `$300`.")
    await _freeze(s)
    return s


async def _log(message: ChatMessage, rows: list[tuple[str, str | None, str | None]]) -> None:
    await ChatMessageLog.bulk_create(
        [
            ChatMessageLog(message_id=message.id, seq=i, kind=kind, tool_name=tool, meta_json=meta,
                           content=f"{kind} {i}", created_at=T0)
            for i, (kind, tool, meta) in enumerate(rows, start=1)
        ]
    )


async def _spent(message: ChatMessage, seq: int, cost: float | None = None) -> None:
    """A model call of the message's run, as the runtime records it."""
    usage = Usage(seq=seq, at=T0, model="gpt-test", prompt_tokens=1200, completion_tokens=34,
                  cached_tokens=200, cost=cost)
    spender = Spender("slack", "T1", "C1", "U42")
    await ledger.record(ledger.Call(message.id, message.run_id or "run", message.session_id,
                                    spender, usage))


async def _ask(message: ChatMessage, question: str, choices: list[str], *,
               answer: str | None = None, by: str | None = None,
               status: PauseStatus = PauseStatus.ANSWERED) -> None:
    """A clarify question the message's run asked, as the runtime stores it."""
    count = await ClarifyPause.filter(message_id=message.id).count()
    asked = T0 + timedelta(minutes=message.id, seconds=10 + count)
    await ClarifyPause.create(
        run_id=message.run_id or "run", message_id=message.id, clarify_id=f"q{message.id}-{count}",
        question=question, choices=choices, status=status, answer=answer, answered_by=by,
        created_at=asked, answered_at=asked + timedelta(seconds=5) if answer else None)


async def _freeze(session_id: int) -> None:
    """Fixed timestamps and uuid, so the export is byte-for-byte repeatable."""
    await ChatSession.filter(id=session_id).update(
        uuid="6f1c2a9e-0000-4000-8000-000000000001", created_at=T0, last_message_at=T0,
        title="Plan a launch for Friday",
    )
    for message in await ChatMessage.filter(session_id=session_id):
        at = T0 + timedelta(minutes=message.id)
        done = at + timedelta(seconds=30) if message.role == Role.ASSISTANT else None
        await ChatMessage.filter(id=message.id).update(created_at=at, completed_at=done)


async def _render(session_id: int, format: str, branch: str) -> str:
    export = await prepare_export(session_id, format, branch, now=T0 + timedelta(days=1))
    return "".join([chunk async for chunk in export.chunks()])


@pytest.mark.parametrize(
    ("format", "branch"), [("md", "active"), ("md", "all"), ("json", "active"), ("json", "all")]
)
async def test_export_matches_its_golden_file(db: str, format: str, branch: str) -> None:
    text = await _render(await _conversation(), format, branch)
    golden = GOLDEN / f"export_{branch}.{format}"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


async def test_all_holds_every_node_and_active_only_the_branch(db: str) -> None:
    s = await _conversation()
    everything = json.loads(await _render(s, "json", "all"))
    branch = json.loads(await _render(s, "json", "active"))
    all_ids = await ChatMessage.filter(session_id=s).values_list("id", flat=True)
    assert sorted(m["id"] for m in everything["messages"]) == sorted(all_ids)
    assert [m["id"] for m in branch["messages"]] == await tree.active_branch_ids(s)
    by_id = {m["id"]: m for m in everything["messages"]}
    assert [log["seq"] for log in by_id[2]["logs"]] == [1, 2, 3]
    assert by_id[2]["logs"][1]["meta"] == {"todos": []}
    assert "logs" not in by_id[1]


async def test_a_large_session_streams_in_pieces(db: str) -> None:
    s = (await sessions.create_session(title="big")).id
    count = 10_000
    await ChatMessage.bulk_create(
        [
            ChatMessage(id=i, session_id=s, parent_id=i - 1 if i > 1 else None,
                        role=Role.USER if i % 2 else Role.ASSISTANT,
                        status=MessageStatus.SENT if i % 2 else MessageStatus.SUCCESS,
                        content=f"message {i} " + "x" * 200)
            for i in range(1, count + 1)
        ],
        batch_size=1000,
    )
    export = await prepare_export(s, "json", "active")
    sizes, total = [], 0
    parts = []
    async for chunk in export.chunks():
        sizes.append(len(chunk))
        parts.append(chunk)
    total = sum(sizes)
    assert len(sizes) > 40 and max(sizes) < total / 20
    assert len(json.loads("".join(parts))["messages"]) == count


async def test_bad_export_requests_fail_before_streaming(db: str) -> None:
    s = (await sessions.create_session()).id
    with pytest.raises(InvalidInput):
        await prepare_export(s, "pdf")
    with pytest.raises(InvalidInput):
        await prepare_export(s, "md", "some")
    with pytest.raises(NotFound):
        await prepare_export(404, "md")
    empty = await _render(s, "json", "all")
    assert json.loads(empty)["messages"] == []


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ('He said "hi"\r\nContent-Type: x', "he-said-hi-content-type-x.md"),
        ("Café — résumé 日本", "cafe-resume.md"),
        ("日本語", "conversation.md"),
        (None, "conversation.md"),
        ("../../etc/passwd", "etc-passwd.md"),
    ],
)
def test_export_file_names_are_safe(title: str | None, name: str) -> None:
    assert export_filename(title, "md") == name
