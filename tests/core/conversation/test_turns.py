"""The turn rules of the conversation layer hold from any replica: every busy check is the
database's, a refused edit or switch changes nothing, and Stop works wherever the run is
driven (two run pools on one database and one Bridge stand for two replicas)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.agent.bridge.client import BridgeClient
from core.agent.bridge.types import STEER_CHARS
from core.chat.attachments import FileReader
from core.chat import sessions, tree
from core.conversation import turns, views
from core.errors import BridgeUnavailable, Busy, Conflict, NotFound
from core.text.field_errors import InvalidField
from core.runtime import records
from core.runtime.pool import RunPool
from core.store.models import IN_FLIGHT, ChatMessage, ChatMessageLog, ChatSession, MessageStatus, Role
from tests.core.chat.tree_helpers import answer, shape, user_turn
from tests.core.runtime.waiting import finished, until
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.support.runtime import FAST, catalogue_for


@pytest.fixture
async def replicas(db: str, fake_bridge: FakeBridge, skills_dir: Path
                   ) -> AsyncIterator[tuple[RunPool, RunPool]]:
    """Two run pools on the same database and Bridge."""
    pools = [RunPool(BridgeClient(fake_bridge.url, policy=FAST), catalogue_for(None, skills_dir))
             for _ in range(2)]
    for pool in pools:
        await pool.open()
    yield pools[0], pools[1]
    for pool in pools:
        await pool.close()
        await pool.bridge.aclose()


async def one_turn() -> tuple[ChatSession, ChatMessage, ChatMessage]:
    """A session with one answered turn: first -> one."""
    session = await sessions.create_session()
    first = await user_turn(session.id, "first")
    return session, first, await answer(session.id, first, "one")


def stall(fake_bridge: FakeBridge) -> None:
    fake_bridge.default_script = lambda run_id: [
        ev("text", text="working"), Stall(run_id), ev("done", final_text="late answer")]


async def test_an_edit_refused_as_busy_leaves_the_tree_as_it_was(
    replicas: tuple[RunPool, RunPool], fake_bridge: FakeBridge
) -> None:
    a, b = replicas
    session, first, _ = await one_turn()
    stall(fake_bridge)
    run = await a.start(session.id, "second")  # A drives it; B knows nothing of it
    before = await shape(session.id)

    with pytest.raises(Busy):
        await b.edit(first.id, "first, edited", author="U1")

    assert await shape(session.id) == before, "no branch committed for a refused edit"
    fake_bridge.release(run.run_id)
    assert (await finished(a, run.run_id)).status == MessageStatus.SUCCESS
    branch = [m.content for m in await tree.active_branch(session.id)]
    assert branch == ["first", "one", "second", "late answer"], "the answer landed where it shows"


async def test_an_edit_of_an_idle_conversation_branches_and_answers(
    replicas: tuple[RunPool, RunPool], fake_bridge: FakeBridge
) -> None:
    a, _ = replicas
    session, first, _ = await one_turn()
    update = await turns.edit(a, first, "first, edited", author="U1", platform_message_id="m1")
    assert update is not None
    done = await finished(a, update.run_id)
    edited = await ChatMessage.get(id=done.user_message_id)
    assert (edited.content, edited.branch_order, edited.author, edited.parent_id) == (
        "first, edited", 1, "U1", None)
    assert await turns.edit(a, edited, "first, edited", author="U1", platform_message_id="m1") is None


async def test_a_version_switch_and_an_admin_edit_wait_for_the_run_of_any_replica(
    replicas: tuple[RunPool, RunPool], fake_bridge: FakeBridge
) -> None:
    a, _ = replicas
    session, first, one = await one_turn()
    other = await tree.regenerate(one.id, status=MessageStatus.SUCCESS, content="two")
    stall(fake_bridge)
    run = await a.start(session.id, "second")
    before = await shape(session.id)

    with pytest.raises(Busy):
        await turns.switch_version(one.id)
    with pytest.raises(Busy):
        await turns.edit_message(first.id, "rewritten")

    assert await shape(session.id) == before
    fake_bridge.release(run.run_id)
    await finished(a, run.run_id)
    assert (await turns.switch_version(one.id)).is_active
    assert not (await ChatMessage.get(id=other.id)).is_active


async def test_stop_from_another_replica_aborts_the_run_through_the_bridge(
    replicas: tuple[RunPool, RunPool], fake_bridge: FakeBridge
) -> None:
    a, b = replicas
    session = await sessions.create_session()
    stall(fake_bridge)
    run = await a.start(session.id, "long job")
    await until(a, run.run_id, lambda u: u.state.last_seq >= 1)

    stopped = await turns.stop(b, run.run_id)  # B does not drive it

    assert stopped.status == MessageStatus.STOPPED and fake_bridge.runs[run.run_id].aborted
    assert (await finished(a, run.run_id)).status == MessageStatus.STOPPED
    message = await ChatMessage.get(id=run.message_id)
    assert (message.status, message.error) == (MessageStatus.STOPPED, "Stopped.")
    with pytest.raises(Conflict, match="already ended"):
        await turns.stop(b, run.run_id)
    with pytest.raises(NotFound):
        await turns.stop(b, "no-such-run")


async def test_a_run_queued_on_one_replica_and_stopped_from_another_never_starts(
    replicas: tuple[RunPool, RunPool], fake_bridge: FakeBridge
) -> None:
    a, b = replicas
    session = await sessions.create_session()
    stall(fake_bridge)
    first = await a.start(session.id, "long job")
    await until(a, first.run_id, lambda u: u.state.last_seq >= 1)
    queued = await a.start(session.id, "next", queue=True)
    assert queued.status == MessageStatus.QUEUED

    stopped = await turns.stop(b, queued.run_id)  # only recorded: no Bridge has it yet
    assert stopped.status == MessageStatus.STOPPED
    await turns.stop(a, first.run_id)

    assert (await finished(a, first.run_id)).status == MessageStatus.STOPPED
    assert (await finished(a, queued.run_id)).status == MessageStatus.STOPPED
    assert queued.run_id not in fake_bridge.runs, "the stopped run reached the Bridge"
    assert (await ChatMessage.get(id=queued.message_id)).status == MessageStatus.STOPPED


async def test_stop_of_a_run_nobody_drives_records_its_end(
    replicas: tuple[RunPool, RunPool]
) -> None:
    _, b = replicas
    session = await sessions.create_session()
    user = await user_turn(session.id, "orphan")
    orphan = await tree.append_assistant(session.id, user.id, status=MessageStatus.RUNNING,
                                         run_id="run-orphan")
    stopped = await turns.stop(b, "run-orphan")  # its replica died; the Bridge never had it
    assert stopped.status == MessageStatus.STOPPED and stopped.message_id == orphan.id
    assert (await ChatMessage.get(id=orphan.id)).status == MessageStatus.STOPPED
    assert await turns.run_in_flight(session.id) is None


async def test_a_stored_answer_shows_the_content_of_record(db: str) -> None:
    session = await sessions.create_session()
    user = await user_turn(session.id, "q")
    stored = await answer(session.id, user, "the answer of record")
    await ChatMessageLog.create(message_id=stored.id, seq=1, kind="done", content="a draft")
    update = await views.stored_update(stored.id)
    assert update.state.final_text == "the answer of record"
    assert (update.user_message_id, update.session_id) == (user.id, session.id)


async def test_versions_say_where_an_answer_stands() -> None:
    assert views.versions_of(3, [1, 3, 7]) == views.Versions(2, 3, 1, 7)
    assert views.versions_of(9, [1, 3]) == views.Versions()


async def test_the_user_node_of_a_platform_message_is_its_newest_version(db: str) -> None:
    session = await sessions.create_session()
    first = await tree.append_user(session.id, "a", platform_message_id="m1")
    edited = await tree.edit(first.id, "b", platform_message_id="m1")
    assert (await turns.user_node(session.id, "m1")).id == edited.id
    assert await turns.user_node(session.id, "m2") is None
    assert (await ChatMessage.get(id=edited.id)).role == Role.USER


async def _race(a: RunPool, b: RunPool, session_id: int) -> tuple[list[object], list[Busy]]:
    """Both replicas start a run in the session at the same instant: the runs and the refusals."""
    results = await asyncio.gather(a.start(session_id, "from A"), b.start(session_id, "from B"),
                                   return_exceptions=True)
    refused = [r for r in results if isinstance(r, Busy)]
    return [r for r in results if not isinstance(r, BaseException)], refused


async def _in_flight(session_id: int) -> list[ChatMessage]:
    return await ChatMessage.filter(session_id=session_id, role=Role.ASSISTANT,
                                    status__in=IN_FLIGHT)


async def test_two_replicas_starting_one_session_at_once_get_one_run_and_one_busy(
    replicas: tuple[RunPool, RunPool], fake_bridge: FakeBridge
) -> None:
    a, b = replicas
    session = await sessions.create_session()
    stall(fake_bridge)
    runs, refused = await _race(a, b, session.id)
    assert (len(runs), len(refused)) == (1, 1), (runs, refused)
    assert len(await _in_flight(session.id)) == 1
    assert await ChatMessage.filter(session_id=session.id).count() == 2, "the refusal wrote nothing"


async def test_the_database_refuses_the_second_run_even_past_the_busy_check(
    replicas: tuple[RunPool, RunPool], fake_bridge: FakeBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check is gone (as if both replicas read the session idle): the constraint holds."""
    a, b = replicas
    session = await sessions.create_session()
    stall(fake_bridge)
    unchecked = records.locked_session
    monkeypatch.setattr(records, "locked_session", lambda sid, allow_busy=False: unchecked(sid, True))
    runs, refused = await _race(a, b, session.id)
    assert (len(runs), len(refused)) == (1, 1), (runs, refused)
    assert "still working" in refused[0].message
    assert len(await _in_flight(session.id)) == 1
    assert await ChatMessage.filter(session_id=session.id).count() == 2, "the refusal wrote nothing"


async def test_a_run_queued_behind_another_replicas_run_is_refused_when_it_would_start(
    replicas: tuple[RunPool, RunPool], fake_bridge: FakeBridge
) -> None:
    """B cannot wait for a run A drives: rather than run beside it, its queued run ends as busy."""
    a, b = replicas
    session = await sessions.create_session()
    stall(fake_bridge)
    first = await a.start(session.id, "long job")
    queued = await b.start(session.id, "next", queue=True)
    assert queued.status == MessageStatus.QUEUED
    done = await finished(b, queued.run_id)
    assert done.status == MessageStatus.FAILED and "still working" in (done.error or "")
    assert queued.run_id not in fake_bridge.runs, "two runs of one session reached the Bridge"
    assert [m.run_id for m in await _in_flight(session.id)] == [first.run_id]
    fake_bridge.release(first.run_id)
    assert (await finished(a, first.run_id)).status == MessageStatus.SUCCESS


async def test_guidance_the_bridge_did_not_take_is_not_kept_and_too_long_is_refused_first(
    replicas: tuple[RunPool, RunPool], fake_bridge: FakeBridge
) -> None:
    """A steer is kept only once the Bridge took it: a kept one is given again to a turn
    continued after a Bridge restart (core/runtime/continuation.py), so one the person was told
    failed must not be. Guidance longer than the Bridge takes is refused before anything."""
    a, _ = replicas
    session, _, _ = await one_turn()
    stall(fake_bridge)
    run = await a.start(session.id, "second")
    await until(a, run.run_id, lambda u: u.status == MessageStatus.RUNNING)

    def steer(text: str) -> turns.Arrival:
        return turns.Arrival(session, False, text, "U1", f"m-{len(text)}", busy_mode="steer")

    async def said(notices: tuple[str, ...]) -> None:
        raise AssertionError(notices)

    with pytest.raises(InvalidField, match="at most 20,000"):
        await turns.take(a, steer("x" * (STEER_CHARS + 1)), FileReader(), said, 0)
    fake_bridge.fail("steer", 503)
    with pytest.raises(BridgeUnavailable):
        await turns.take(a, steer("make it short"), FileReader(), said, 0)
    assert await ChatMessage.filter(kind=tree.STEER).count() == 0
    assert (await turns.take(a, steer("make it shorter"), FileReader(), said, 0)).steered
    assert await ChatMessage.filter(kind=tree.STEER).values_list("content", flat=True) == [
        "make it shorter"]
    assert fake_bridge.runs[run.run_id].steers == ["make it shorter"]
    fake_bridge.release(run.run_id)
    assert (await finished(a, run.run_id)).status == MessageStatus.SUCCESS
