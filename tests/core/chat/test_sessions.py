"""Sessions through the real ORM: bindings, titles, paging, archive, delete cascade."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, UTC

import pytest

from core.chat import sessions, tree
from core.errors import InvalidInput, NotFound
from core.store.models import (
    ChatMessage,
    ChatMessageLog,
    ChatSession,
    ClarifyPause,
    ConversationBinding,
    Platform,
    SessionStatus,
)
from core.chat.sessions import ThreadKey
from tests.core.chat.tree_helpers import answer, user_turn

T0 = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("How do I rotate the API keys of our staging cluster?", "How do I rotate the API keys…"),
        ("Can you summarise this incident: the database failed over twice", "Can you summarise this…"),
        ("line one\nline two\r\n  line three", "line one line two line three"),
        ("short", "short"),
    ],
)
async def test_the_first_user_message_names_the_session(db: str, text: str, title: str) -> None:
    s = await sessions.create_session()
    assert s.title is None
    await sessions.auto_title(s.id, text)
    await sessions.auto_title(s.id, "a later message never renames it")
    assert (await sessions.get_session(s.id)).title == title
    assert len(title) <= 30


async def test_auto_title_never_overwrites_a_users_title(db: str) -> None:
    s = await sessions.create_session()
    await sessions.rename_session(s.id, "  Our roadmap\n")
    await sessions.auto_title(s.id, "something else entirely")
    assert (await sessions.get_session(s.id)).title == "Our roadmap"
    await sessions.auto_title((await sessions.create_session()).id, "\n\n   ")
    assert await ChatSession.filter(title__isnull=True).count() == 1


async def test_rename_refuses_an_empty_title_and_unknown_sessions(db: str) -> None:
    s = await sessions.create_session(title="kept")
    with pytest.raises(InvalidInput):
        await sessions.rename_session(s.id, " \n ")
    with pytest.raises(NotFound):
        await sessions.rename_session(999, "x")
    with pytest.raises(NotFound):
        await sessions.get_session(999)
    assert (await sessions.get_session(s.id)).title == "kept"


async def test_one_thread_is_one_session(db: str) -> None:
    key = ThreadKey(Platform.SLACK, "T1", "C1", "1700.1")
    first, created = await sessions.session_for_thread(key, model_id="m1")
    again, created_again = await sessions.session_for_thread(key)
    other, _ = await sessions.session_for_thread(ThreadKey(Platform.SLACK, "T1", "C1", "1700.2"))
    dm, _ = await sessions.session_for_thread(ThreadKey(Platform.DISCORD, "", "D9"))
    assert (created, created_again) == (True, False)
    assert first.id == again.id and first.model_id == "m1"
    assert len({first.id, other.id, dm.id}) == 3
    assert first.hermes_session.startswith("chat-") and first.hermes_session != other.hermes_session


async def test_concurrent_first_messages_bind_one_session(db: str) -> None:
    key = ThreadKey(Platform.DISCORD, "G1", "C1", "TH1")
    results = await asyncio.gather(*(sessions.session_for_thread(key) for _ in range(5)))
    assert len({s.id for s, _ in results}) == 1
    assert await ChatSession.all().count() == 1
    assert await ConversationBinding.all().count() == 1


async def test_delete_cascades_to_everything_of_the_session(db: str) -> None:
    keep = (await sessions.create_session()).id
    await answer(keep, await user_turn(keep, "keep me"), "kept")
    s, _ = await sessions.session_for_thread(ThreadKey(Platform.SLACK, "T", "C", "1"))
    u = await user_turn(s.id, "hello")
    a = await answer(s.id, u, "hi")
    await tree.regenerate(a.id, s.id)
    await ChatMessageLog.create(message_id=a.id, seq=1, kind="text", content="hi")
    await ClarifyPause.create(run_id="r", message_id=a.id, clarify_id="c1", question="?")
    await sessions.delete_session(s.id)
    assert await ChatMessage.filter(session_id=s.id).count() == 0
    assert await ChatMessageLog.all().count() == 0
    assert await ClarifyPause.all().count() == 0
    assert await ConversationBinding.all().count() == 0
    assert await ChatMessage.filter(session_id=keep).count() == 2
    with pytest.raises(NotFound):
        await sessions.delete_session(s.id)


async def test_a_deep_session_deletes_too(db: str) -> None:
    """Deeper than SQLite's 1,000 levels of cascading triggers (see `delete_session`)."""
    s = (await sessions.create_session()).id
    rows = [ChatMessage(id=i, session_id=s, parent_id=i - 1 if i > 1 else None, role="USER",
                        status="SENT", content="m") for i in range(1, 1501)]
    await ChatMessage.bulk_create(rows, batch_size=500)
    await sessions.delete_session(s)
    assert await ChatMessage.all().count() == 0 and await ChatSession.all().count() == 0


async def _sessions_at(*minutes: int) -> list[int]:
    ids = []
    for minute in minutes:
        s = await sessions.create_session(title=f"at {minute}")
        await sessions.touch_session(s.id, T0 + timedelta(minutes=minute))
        ids.append(s.id)
    return ids


async def test_list_pages_by_last_activity_newest_first(db: str) -> None:
    ids = await _sessions_at(5, 1, 9, 3, 9, 7)
    page1 = await sessions.list_sessions(limit=4)
    page2 = await sessions.list_sessions(limit=4, cursor=page1.next_cursor)
    order = [s.id for s in page1.items + page2.items]
    assert order == [ids[4], ids[2], ids[5], ids[0], ids[3], ids[1]]  # ties: newest id first
    assert page2.next_cursor is None
    await sessions.touch_session(ids[1], T0 + timedelta(minutes=60))
    assert (await sessions.list_sessions(limit=1)).items[0].id == ids[1]


async def test_paging_is_stable_while_new_sessions_arrive(db: str) -> None:
    ids = await _sessions_at(1, 2, 3, 4, 5)
    page1 = await sessions.list_sessions(limit=2)
    await _sessions_at(10, 11)  # arrive between the two page reads
    page2 = await sessions.list_sessions(limit=2, cursor=page1.next_cursor)
    page3 = await sessions.list_sessions(limit=2, cursor=page2.next_cursor)
    seen = [s.id for p in (page1, page2, page3) for s in p.items]
    assert seen == list(reversed(ids))


async def test_archive_filters_and_bad_paging_values(db: str) -> None:
    a, b = await _sessions_at(1, 2)
    await sessions.set_session_status(a, SessionStatus.ARCHIVED)
    active = await sessions.list_sessions(status=SessionStatus.ACTIVE)
    assert [s.id for s in active.items] == [b]
    with pytest.raises(InvalidInput):
        await sessions.list_sessions(limit=0)
    with pytest.raises(InvalidInput):
        await sessions.list_sessions(cursor="not-a-cursor")


async def test_reset_gives_a_new_bridge_session_and_defaults_change(db: str) -> None:
    s = await sessions.create_session()
    renewed = await sessions.renew_hermes_session(s.id)
    assert renewed.hermes_session != s.hermes_session
    changed = await sessions.update_session_defaults(s.id, model_id="m2")
    assert (changed.model_id, changed.skill_folder) == ("m2", None)
