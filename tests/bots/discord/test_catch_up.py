"""Messages sent while no replica listened (a restart, a deploy): Discord never sends them to
the next gateway session, so the next READY reads them (bots/discord/catch_up.py): a thread's,
a DM's and a first mention in a channel."""

from __future__ import annotations

import pytest

from core.runtime.pool import RunPool
from core.store.models import ChatMessage, Role
from tests.bots.discord.harness import answered, bot_messages, mention, running_bot
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.support.replicas import about


@pytest.mark.backend  # the query of the conversations active lately
async def test_messages_sent_while_no_replica_listened_are_answered_once_at_the_next_ready(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Paris is the capital.", match=about("capital")),
               text_reply("Hello in private.", match=about("hi there")),
               text_reply("About 2.1 million people.", match=about("how many")),
               text_reply("Still here.", match=about("still there")),
               text_reply("Rome is the capital.", match=about("Italy")))
    dm = fake.dm_channel_id()
    async with running_bot(fake, pool):
        asked = await fake.send_user_message(mention(fake, "What is the capital of France?"))
        thread = int(asked["id"])
        await fake.wait_until(lambda: answered(fake, thread, "Paris is the capital."), what="answer 1")
        said = await fake.send_user_message("hi there", channel_id=dm)
        await fake.wait_until(lambda: answered(fake, dm, "Hello in private."), what="the DM's answer")
    # no replica listens: the gateway has nobody to send these to
    missed = await fake.send_user_message("how many people live there?", channel_id=thread)
    missed_dm = await fake.send_user_message("still there?", channel_id=dm)
    await fake.send_user_message("lunch at noon, everyone")  # in the channel, not for the bot
    first = await fake.send_user_message(mention(fake, "And the capital of Italy?"))

    async with running_bot(fake, pool) as bot:
        await fake.wait_until(lambda: answered(fake, thread, "About 2.1 million people."),
                              what="the thread's missed message answered")
        await fake.wait_until(lambda: answered(fake, dm, "Still here."),
                              what="the DM's missed message answered")
        await fake.wait_until(lambda: answered(fake, int(first["id"]), "Rome is the capital."),
                              what="the missed first mention answered in its own thread")
        await fake.wait_until(lambda: bot.services.catch_up.reads == 1, what="the catch-up read")
        assert bot.services.catch_up.handled == 3
    async with running_bot(fake, pool) as again:  # read once more: nothing to handle
        await fake.wait_until(lambda: again.services.catch_up.reads == 1, what="the catch-up read")
        assert again.services.catch_up.handled == 0

    users = await ChatMessage.filter(role=Role.USER).order_by("platform_message_id")
    assert sorted(u.platform_message_id for u in users) == sorted(
        m["id"] for m in (asked, said, missed, missed_dm, first))
    assert bot_messages(fake, thread)[-1]["message_reference"]["message_id"] == missed["id"]
    assert bot_messages(fake, dm)[-1]["message_reference"]["message_id"] == missed_dm["id"]
    assert len(llm.requests) == 5
    assert len(fake.threads_of(fake.channel_id)) == 2
    assert fake.rejected == []
