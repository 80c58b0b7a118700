"""The message tree through the real ORM on SQLite and PostgreSQL (seed 000 §4.1.4, §6.4)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tortoise.exceptions import IntegrityError

from core.chat import sessions, tree
from core.errors import InvalidInput, NotFound
from core.runtime.records import insert_turn
from core.store.models import ChatMessage, MessageStatus, Role
from tests.core.chat.tree_helpers import (
    answer,
    check_invariants,
    counted_queries,
    finish,
    shape,
    user_turn,
)

A, U = "ASSISTANT", "USER"


async def test_the_seed_example_tree_step_by_step(db: str) -> None:
    s = (await sessions.create_session()).id

    async def branch() -> list[int]:
        return [m.id for m in await tree.active_branch(s)]

    async def versions_of(message: ChatMessage) -> list[tuple[int, int]]:
        return [(v.id, v.branch_order) for v in await tree.versions(message.id, s)]

    m1 = await user_turn(s, "first question")
    m2 = await answer(s, m1, "first answer")
    m3 = await user_turn(s, "second question")
    m4 = await answer(s, m3, "second answer")
    assert await branch() == [1, 2, 3, 4]
    assert await versions_of(m4) == [(4, 0)]

    m5 = await tree.regenerate(m4.id, s)  # "regenerate": msg-5 becomes the shown version
    await finish(m5, "second answer, take two")
    assert await branch() == [1, 2, 3, 5]
    assert await versions_of(m4) == await versions_of(m5) == [(4, 0), (5, 1)]
    await tree.activate(m4.id, s)  # the user switches back with "◀ 1/2"
    assert await branch() == [1, 2, 3, 4]

    m6 = await tree.regenerate(m2.id, s)  # a regeneration of msg-2 that failed
    await finish(m6, "", MessageStatus.FAILED)
    assert await branch() == [1, 6]
    assert await versions_of(m2) == [(2, 0), (6, 1)]
    await tree.activate(m2.id, s)
    assert await branch() == [1, 2, 3, 4]
    drawn = {  # the seed's tree, as drawn: id -> (parent, role, is_active, branch_order)
        1: (None, U, True, 0),
        2: (1, A, True, 0),
        3: (2, U, True, 0),
        4: (3, A, True, 0),
        5: (3, A, False, 1),
        6: (1, A, False, 1),
    }
    assert await shape(s) == drawn

    m7 = await tree.edit(m3.id, "second question, edited", s)  # edit msg-3: msg-7, no run
    assert await branch() == [1, 2, 7] and m7.content == "second question, edited"
    assert await versions_of(m3) == [(3, 0), (7, 1)]
    m8 = await tree.append_assistant(s, m7.id, run_id="run-8")
    assert await shape(s) == {  # the seed's edit: msg-3 inactive, msg-7 beside it, msg-8 under
        **drawn, 3: (2, U, False, 0), 7: (2, U, True, 1), 8: (7, A, True, 0),
    }
    assert await branch() == [1, 2, 7, 8]
    assert (await tree.leaf(s)).id == m8.id
    assert await versions_of(m1) == [(1, 0)]
    assert m5.model_id == m4.model_id and m8.status == MessageStatus.RUNNING

    await tree.activate(m4.id, s)  # an older version deep down brings its path back
    assert await branch() == [1, 2, 3, 4]
    assert (await tree.leaf(s)).id == m4.id


async def test_a_summary_sits_in_the_branch_but_is_never_a_version(db: str) -> None:
    s = (await sessions.create_session()).id
    u1 = await user_turn(s, "one")
    a1 = await answer(s, u1, "uno")
    u2 = await user_turn(s, "two")
    summary = await tree.add_summary(s, a1.id, "they counted to one")
    a2 = await answer(s, u2, "dos")
    assert [m.id for m in await tree.active_branch(s)] == [u1.id, a1.id, summary.id, u2.id, a2.id]
    assert [v.id for v in await tree.versions(u2.id)] == [u2.id]
    assert (await tree.leaf(s)).id == a2.id
    u3 = await user_turn(s, "three")
    assert u3.parent_id == a2.id
    with pytest.raises(InvalidInput):
        await tree.activate(summary.id, s)


async def test_editing_the_first_message_makes_a_second_root(db: str) -> None:
    s = (await sessions.create_session()).id
    u1 = await user_turn(s, "hello")
    await answer(s, u1, "hi")
    root2 = await tree.edit(u1.id, "hello again", s)
    assert root2.parent_id is None and root2.branch_order == 1
    assert [m.id for m in await tree.active_branch(s)] == [root2.id]
    await tree.activate(u1.id, s)
    assert len(await tree.active_branch(s)) == 2


async def test_bad_ids_and_wrong_kinds_are_refused(db: str) -> None:
    s = (await sessions.create_session()).id
    other = (await sessions.create_session()).id
    u1 = await user_turn(s, "hello")
    a1 = await answer(s, u1, "hi")
    before = await shape(s)
    for unknown in (
        lambda: tree.regenerate(999),
        lambda: tree.edit(999, "text"),
        lambda: tree.activate(999),
        lambda: tree.versions(999),
        lambda: tree.append_assistant(s, 999),
        lambda: tree.add_summary(s, 999, "summary"),
        lambda: tree.append_user(12345, "to nowhere"),
        lambda: tree.add_child(12345, None, Role.USER, MessageStatus.SENT, content="x"),
    ):
        with pytest.raises(NotFound):
            await unknown()
    for wrong in (
        lambda: tree.activate(a1.id, other),  # a message of another session
        lambda: tree.regenerate(a1.id, other),
        lambda: tree.edit(u1.id, "edited", other),
        lambda: tree.append_assistant(other, u1.id),
        lambda: tree.edit(a1.id, "an assistant message cannot be edited"),
        lambda: tree.regenerate(u1.id),  # nor a user message regenerated
        lambda: tree.append_assistant(s, a1.id),  # an answer answers a user message
        lambda: tree.edit(u1.id, "   "),
        lambda: tree.append_user(s, ""),
    ):
        with pytest.raises(InvalidInput):
            await wrong()
    assert await shape(s) == before and await shape(other) == {}


async def test_a_failed_insert_leaves_the_siblings_as_they_were(db: str) -> None:
    s = (await sessions.create_session()).id
    u1 = await user_turn(s, "hello")
    a1 = await answer(s, u1, "hi")
    before = await shape(s)
    with pytest.raises(IntegrityError):  # a taken id: the insert fails after the siblings' update
        await tree.add_child(s, u1.id, Role.ASSISTANT, MessageStatus.RUNNING, id=a1.id)
    assert await shape(s) == before
    assert (await ChatMessage.get(id=a1.id)).is_active


async def test_a_deep_branch_loads_in_a_bounded_number_of_queries(db: str) -> None:
    s = (await sessions.create_session()).id
    depth = 2000
    await ChatMessage.bulk_create(
        [
            ChatMessage(
                id=i, session_id=s, parent_id=i - 1 if i > 1 else None,
                role=Role.USER if i % 2 else Role.ASSISTANT,
                status=MessageStatus.SENT if i % 2 else MessageStatus.SUCCESS, content=f"m{i}",
            )
            for i in range(1, depth + 1)
        ],
        batch_size=500,
    )
    async with counted_queries() as branch_queries:
        branch = await tree.active_branch(s)
    async with counted_queries() as id_queries:
        ids = await tree.active_branch_ids(s)
    async with counted_queries() as leaf_queries:
        last = await tree.leaf(s)
    assert [m.id for m in branch] == ids == list(range(1, depth + 1))
    assert last.id == depth
    assert len(branch_queries) == len(id_queries) == 1, (branch_queries, id_queries)
    assert len(leaf_queries) == 2, leaf_queries  # the links, then the leaf's row


OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["user", "answer", "turn", "regenerate", "edit", "activate", "summary"]),
        st.integers(min_value=0, max_value=1000),
    ),
    max_size=18,
)


@settings(
    max_examples=50, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations=OPERATIONS)
async def test_random_operations_keep_the_tree_sound(db: str, operations) -> None:
    s = (await sessions.create_session()).id  # a fresh session per example isolates its tree
    for name, pick in operations:
        await _apply(s, name, pick)
        nodes = await shape(s)
        check_invariants(nodes, await tree.active_branch_ids(s))


async def _apply(session_id: int, name: str, pick: int) -> None:
    messages = await ChatMessage.filter(session_id=session_id).order_by("id")
    by_role = {r: [m for m in messages if m.role == r] for r in (Role.USER, Role.ASSISTANT)}
    leaf = await tree.leaf(session_id)
    if name == "user" or not messages:
        if leaf is None or leaf.role != Role.USER:
            await tree.append_user(session_id, f"question {pick}")
    elif name == "answer" and leaf is not None and leaf.role == Role.USER:
        await tree.append_assistant(session_id, leaf.id, MessageStatus.SUCCESS, run_id=f"r{pick}")
    elif name == "turn":  # a run's start: its user node and answer in one pass
        await insert_turn(session_id, f"t{pick}", MessageStatus.RUNNING, text=f"ask {pick}",
                          allow_busy=True)
    elif name == "regenerate" and by_role[Role.ASSISTANT]:
        await tree.regenerate(_nth(by_role[Role.ASSISTANT], pick).id, session_id,
                              MessageStatus.SUCCESS)  # a stored version: one run at a time
    elif name == "edit":
        await tree.edit(_nth(by_role[Role.USER], pick).id, f"edited {pick}", session_id)
    elif name == "activate":
        await tree.activate(_nth([m for m in messages if m.role != Role.SYSTEM], pick).id)
    elif name == "summary":
        await tree.add_summary(session_id, _nth(messages, pick).id, f"summary {pick}")


def _nth(items: list[ChatMessage], pick: int) -> ChatMessage:
    return items[pick % len(items)]
