"""A 10,000-character answer with code: split on paragraph / fence boundaries within Discord's
limits, fences closed and reopened; the whole thinking paginated behind Show thinking."""

from __future__ import annotations

import re

from core.runtime.pool import RunPool
from tests.bots.discord.harness import answered, bot_messages, button, buttons, mention, running_bot
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.fake_bridge import FakeBridge, ev
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.changes import WAIT


def long_answer() -> str:
    prose = "\n\n".join(f"Paragraph {n}: " + "words and more words " * 12 for n in range(14))
    functions = (f"def function_{n}(x):\n    return x * {n}\n" for n in range(165))
    code = "```python\n" + "\n".join(functions) + "```"
    text = f"# Report\n\n{prose}\n\n{code}\n\nThat is all."
    assert 10_000 <= len(text) <= 11_000
    return text


def fences_balanced(part: str) -> bool:
    return len(re.findall(r"^```", part, flags=re.MULTILINE)) % 2 == 0


async def test_a_long_answer_is_split_with_code_fences_closed_and_reopened(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    text = long_answer()
    llm.script(text_reply(text, chunk_size=500))
    async with running_bot(fake, pool):
        asked = await fake.send_user_message(mention(fake, "write a report"))
        thread = int(asked["id"])
        await fake.wait_until(lambda: answered(fake, thread, "That is all."), WAIT, "the answer")
        messages = bot_messages(fake, thread)
        opened = await fake.click(messages[-1]["id"], button(messages[-1], "Show thinking")["custom_id"])
        record = fake.interaction(opened.id)
        await fake.wait_until(lambda: record.original_message_id and fake.message(
            record.original_message_id)["embeds"], WAIT, "thinking page")
        page_one = fake.message(record.original_message_id)
        first_footer = page_one["embeds"][0]["footer"]["text"]
        turn = await fake.click(page_one["id"], button(page_one, "▶")["custom_id"])
        await fake.wait_for_response(turn)
        await fake.wait_until(lambda: "Page 2 of" in str(fake.message(page_one["id"])["embeds"]), WAIT)

    parts = [m["embeds"][0]["description"] for m in messages]
    assert len(parts) == 3 and all(len(p) <= 4096 for p in parts)
    assert all(fences_balanced(p) for p in parts)
    assert parts[1].startswith("```python") or parts[2].startswith("```python"), "the fence reopens"
    rejoined = re.sub(r"\n```\n\n```python\n", "\n", "\n\n".join(parts))
    assert rejoined == text
    assert [bool(buttons(m)) for m in messages] == [False, False, True]
    assert [bool(m["embeds"][0].get("footer")) for m in messages] == [False, False, True]
    assert page_one["flags"] & 64 and first_footer == "Page 1 of 3"


async def test_beyond_a_few_parts_the_whole_answer_comes_as_a_file(
    fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge
) -> None:
    text = "\n\n".join(f"Section {n}. " + "lorem ipsum " * 300 for n in range(8))
    fake_bridge.default_script = lambda run_id: [ev("done", final_text=text)]
    async with running_bot(fake, fake_runs):
        asked = await fake.send_user_message(mention(fake, "a very long answer"))
        await fake.wait_until(lambda: len(bot_messages(fake, asked["id"])) == 4
                              and buttons(bot_messages(fake, asked["id"])[-1]), WAIT, "the answer")
    last = bot_messages(fake, asked["id"])[-1]
    (attached,) = last["attachments"]
    assert attached["filename"] == "answer.md" and fake.attachment(attached["id"]).decode() == text
    assert "attached" in last["embeds"][0]["description"]
