"""Answers past Slack's limits: split on paragraph and code-fence boundaries into follow-up
messages of one markdown block each (fences closed and reopened), and beyond a few messages
uploaded as a file."""

from __future__ import annotations

import re

from tests.bots.slack.harness import Harness, texts
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack_payloads import CHANNEL_ID

CODE = "\n".join(f"    value_{i} = compute({i}) * 2  # step {i}" for i in range(400))
PROSE = [f"Paragraph {i}: " + "the quick brown fox jumps over the lazy dog. " * 9 for i in range(70)]


def long_answer(paragraphs: int) -> str:
    prose = PROSE[:paragraphs]
    half = len(prose) // 2
    return "\n\n".join([*prose[:half], f"```python\ndef main():\n{CODE}\n```", *prose[half:]])


def fenced(section: str) -> bool:
    """Every code line of `section` sits between an opening and a closing fence."""
    return all("value_" not in outside for outside in section.split("```")[0::2])


def parts(message) -> list[str]:  # type: ignore[no-untyped-def]
    """The answer's Markdown in a message: what it streamed, or its markdown blocks."""
    streamed = [message.text] if message.chunks and message.text else []
    return streamed + [b["text"] for b in message.blocks or [] if b["type"] == "markdown"]


async def test_a_26000_character_answer_is_split_with_its_code_intact(h: Harness, llm: ScriptedLLM) -> None:
    answer = long_answer(20)
    assert 25_000 < len(answer) < 27_000
    llm.script(text_reply(answer, chunk_size=5000))
    thread = (await h.event("app_mention", text="write a lot"))["ts"]
    await h.answered(CHANNEL_ID, thread)
    await h.bot.idle()
    messages = h.bot_messages(CHANNEL_ID, thread)
    assert 2 <= len(messages) <= 3
    assert all(c.ok or c.status == 429 for c in h.slack.calls if c.method.startswith("chat.")), "Slack refused a part"
    body = [s for m in messages for s in parts(m) if "Paragraph" in s or "value_" in s]
    assert all(len(s) <= 12_000 for s in body)
    assert all(s.count("```") % 2 == 0 for s in body), "a part has an unclosed code fence"
    code_parts = [s for s in body if "value_" in s]
    assert len(code_parts) >= 2, "the code block should span parts"
    assert all(fenced(s) for s in code_parts), "code outside a fence: a fence was not reopened"
    joined = "\n".join(body)
    # Everything once, in order; split between lines and paragraphs, never inside one.
    assert re.findall(r"value_(\d+) = compute\(\1\) \* 2  # step \1\n", joined) == [str(i) for i in range(400)]
    assert re.findall(r"Paragraph (\d+):", joined) == [str(i) for i in range(20)]
    assert all(any(p.strip() in s for s in body) for p in PROSE[:20]), "a paragraph was cut in two"
    assert "Regenerate" in str(messages[0].blocks) and "Regenerate" not in str(messages[-1].blocks)
    assert not h.slack.calls_to("files.completeUploadExternal")


async def test_a_very_long_answer_is_uploaded_as_a_file(h: Harness, llm: ScriptedLLM) -> None:
    answer = long_answer(70)
    llm.script(text_reply(answer, chunk_size=10000))
    thread = (await h.event("app_mention", text="write even more"))["ts"]
    await h.answered(CHANNEL_ID, thread)
    await h.bot.idle()
    [upload] = h.slack.calls_to("files.completeUploadExternal")
    file_id = upload.response["files"][0]["id"]
    assert h.slack.file_content(file_id).decode().strip() == answer.strip()
    main = h.bot_messages(CHANNEL_ID, thread)[0]
    assert "attached below" in texts(main)
