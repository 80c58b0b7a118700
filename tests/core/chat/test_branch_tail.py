"""Where a branch ends is read, not walked: after any mix of new turns, versions, version
switches, compactions and fresh starts, the last messages `branch_tail` reads upwards from the
branch's end are those the walk of the whole branch gives, and so is each list preview."""

from __future__ import annotations

import random

from core.chat import session_queries, sessions, tree
from core.chat.session_queries import preview
from core.store.models import ChatMessage, MessageStatus, Role


async def _expected(session_id: int, limit: int) -> tuple[list[int], bool]:
    ids = await tree.active_branch_ids(session_id)
    return ids[-limit:], len(ids) > limit


async def _check(session_id: int) -> None:
    for limit in (1, 2, 3, 5, 40):
        tail = await tree.branch_tail(session_id, limit)
        assert tail == await _expected(session_id, limit), limit
    branch = await tree.active_branch(session_id)
    said = [m.content for m in branch if m.role != Role.SYSTEM][-2:]
    wanted = next((preview(t) for t in reversed(said) if (t or "").strip()), None)
    [summary] = await session_queries.summarize([await sessions.get_session(session_id)])
    assert summary.last_message_preview == wanted


async def test_the_tail_read_upwards_is_the_walks_after_any_change(db: str) -> None:
    rng = random.Random(7)
    session = await sessions.create_session(title="tree")
    await _check(session.id)  # empty
    for step in range(60):
        messages = await ChatMessage.filter(session_id=session.id).exclude(role=Role.SYSTEM)
        answers = [m for m in messages if m.role == Role.ASSISTANT]
        users = [m for m in messages if m.role == Role.USER]
        choice = rng.random()
        if choice < 0.45 or not answers:
            user = await tree.append_user(session.id, f"question {step}")
            await tree.append_assistant(session.id, user.id, status=MessageStatus.SUCCESS,
                                        content=f"answer {step}" if step % 5 else "")
        elif choice < 0.6:
            await tree.regenerate(rng.choice(answers).id, status=MessageStatus.SUCCESS,
                                  content=f"version {step}")
        elif choice < 0.7:
            await tree.edit(rng.choice(users).id, f"edited {step}")
        elif choice < 0.85:
            await tree.activate(rng.choice(messages).id)
        elif choice < 0.95:
            await tree.add_summary(session.id, rng.choice(messages).id, f"summary {step}")
        else:
            await tree.set_aside(session.id)
        await _check(session.id)
