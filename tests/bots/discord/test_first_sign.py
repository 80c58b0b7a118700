"""A turn's first sign on Discord (bots/discord/delivery/first_sign.py): the bot typing where the
answer will come, before anything of the turn is written; the 👀 still follows the turn's own
message (test_polish.py)."""

from __future__ import annotations

import pytest

from core.runtime.pool import RunPool
from core.store.models import ChatMessage, ChatSession, ConversationBinding
from tests.bots.discord.harness import POST, answered, mention, running_bot
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.fake_bridge import FakeBridge, ev
from tests.support.held_writes import held_writes
from tests.fakes.changes import WAIT

TYPING = "POST /channels/{channel_id}/typing"


async def nothing_written() -> bool:
    return not (await ChatSession.exists() or await ConversationBinding.exists()
                or await ChatMessage.exists())


@pytest.mark.backend
async def test_the_bot_types_in_the_new_thread_while_the_turns_rows_are_held(
        fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge, db: str) -> None:
    fake_bridge.default_script = lambda run_id: [ev("done", final_text="Typed, then answered.")]
    async with running_bot(fake, fake_runs):
        async with held_writes(db):
            asked = await fake.send_user_message(mention(fake, "anyone there?"))
            thread = asked["id"]  # the thread opened on the message has its id
            await fake.wait_until(lambda: fake.calls_to(TYPING), WAIT, "typing")
            assert await nothing_written()
        await fake.wait_until(lambda: answered(fake, thread, "Typed, then answered."), WAIT, "answer")
    [typing] = fake.calls_to(TYPING)
    assert typing.params["channel_id"] == str(thread) and typing.status == 204
    assert typing.seq < fake.calls_to(POST)[0].seq, "the sign comes before the turn's message"


async def test_a_message_in_a_bound_thread_is_answered_after_typing_there(
        fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge) -> None:
    fake_bridge.default_script = lambda run_id: [ev("done", final_text=f"done {run_id}")]
    async with running_bot(fake, fake_runs):
        asked = await fake.send_user_message(mention(fake, "first"))
        thread = asked["id"]
        await fake.wait_until(lambda: answered(fake, thread, "done"), WAIT, "first answer")
        await fake.send_user_message("and then?", channel_id=thread)
        await fake.wait_until(lambda: len(fake.calls_to(TYPING)) == 2, WAIT, "typing again")
        await fake.wait_until(lambda: len([m for m in fake.messages_in(thread)
                                           if "done" in str(m.get("embeds"))]) == 2, WAIT, "answer")
    assert {c.params["channel_id"] for c in fake.calls_to(TYPING)} == {str(thread)}
