"""What a new conversation's first message costs the database before its run starts: in a
burst of them those statements queue behind each other (bench/README.md, "Load"), so each one
counts. Counted as the ORM sends them (tortoise's query log; BEGIN and COMMIT aside)."""

from __future__ import annotations

from core.chat.attachments import FileReader
from core.conversation import bindings, turns
from core.conversation.vocabulary import Platform, ThreadKey
from core.runtime.pool import RunPool
from core.store.models import ChatMessage, Role
from core.usage.spenders import Spender
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.support.statements import statements

# The channel's settings the conversation keeps (docs/channels.md: one read of the channel's
# and its workspace's rows), binding the thread (session, binding), then the turn: the spend
# limits that apply, its lease,
# the session's lock and busy check, the active branch, the user message and the answer. It was
# 13 before issue 33 with no spend limits (the binding looked for first, the session's node
# looked for and the session read again, the new message's siblings looked for and
# deactivated), and the spend check read the session's binding back besides; 9 before channel
# settings (issue 32).
NEW_CONVERSATION = 10


async def nothing_to_say(notices: tuple[str, ...]) -> None:
    raise AssertionError(f"nothing should be said first: {notices}")


async def test_a_new_conversations_first_message_is_written_in_few_statements(
        fake_pool: RunPool, fake_bridge: FakeBridge) -> None:
    fake_bridge.default_script = lambda run_id: [Stall(run_id), ev("done", final_text="done")]
    key = ThreadKey(Platform.SLACK, "T1", "C1", "1700000000.000100")
    with statements() as sent:
        session, new = await bindings.session_for_thread(key, opened=True)
        arrival = turns.Arrival(session, new, "hello", "U1", "1700000000.000100", place=key)
        taken = await turns.take(fake_pool, arrival, FileReader(), nothing_to_say, 20)
    assert new and taken.run is not None
    assert len(sent) == NEW_CONVERSATION, "\n".join(sent)
    user = await ChatMessage.get(role=Role.USER)
    assert (user.parent_id, user.branch_order, user.is_active) == (None, 0, True)
    live = fake_pool.live(taken.run.run_id)  # its calls count where it was asked, not read again
    assert live is not None and live.spender == Spender("slack", "T1", "C1", "U1")
    fake_bridge.release(taken.run.run_id)
