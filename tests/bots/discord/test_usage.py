"""What a person sees of the agent's spend in Discord: the answer's footer (SHOW_USAGE)."""

from __future__ import annotations

import pytest

from core.runtime.pool import RunPool
from tests.bots.discord.harness import answered, bot_messages, mention, reply_of, running_bot
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.fakes.changes import WAIT

TODO = {"todos": [{"id": "1", "content": "add up", "status": "in_progress"}]}


def footer_of(message: dict) -> str:
    return message["embeds"][-1].get("footer", {}).get("text", "")


@pytest.mark.parametrize(("shown", "replies", "ending"), [
    ("cost", (tool_reply(ToolCall("todo", TODO)), text_reply("Done.")),
     "model scripted-model · 220 tokens (200 in, 20 out) · $0.00056"),
    ("tokens", (text_reply("Done."),), "model scripted-model · 110 tokens (100 in, 10 out)"),
    ("off", (text_reply("Done."),), "0 tool calls · model scripted-model"),
])
async def test_the_answers_footer_shows_its_tokens_and_cost_as_show_usage_says(
    fake: FakeDiscord, priced_pool: RunPool, llm: ScriptedLLM, shown: str, replies: tuple,
    ending: str,
) -> None:
    llm.script(*replies)
    async with running_bot(fake, priced_pool, show_usage=shown):
        thread = int((await fake.send_user_message(mention(fake, "add up")))["id"])
        await fake.wait_until(lambda: answered(fake, thread, "Done."), WAIT, "the answer")
    [done] = bot_messages(fake, thread)
    assert footer_of(done).endswith(ending)


async def test_hermes_usage_tells_a_person_their_own_spend_today_and_this_month(
    fake: FakeDiscord, priced_pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("One."))
    async with running_bot(fake, priced_pool):
        thread = int((await fake.send_user_message(mention(fake, "count")))["id"])
        await fake.wait_until(lambda: answered(fake, thread, "One."), WAIT, "the answer")
        shown = await reply_of(fake, await fake.run_command("hermes", "usage", channel_id=thread))
    assert shown["flags"] & 64  # only they see it
    [embed] = shown["embeds"]
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert fields["Today"].startswith("1 model call · 110 tokens (100 in, 10 out) · $0.00028; "
                                      "resets at midnight UTC (in ")
    assert fields["This month"].startswith("1 model call · 110 tokens")
