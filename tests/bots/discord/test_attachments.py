"""Attachments on Discord, end to end: MESSAGE_CREATE with `attachments` into the real
discord.py client, each streamed from the fake's CDN URL (DISCORD_CDN_HOSTS: the fake's origin),
through the real Bridge to the scripted LLM; what is not read is named in the reply, and the
words still go; an edit keeps the message's files. No more than the cap is read, nothing
outside DISCORD_CDN_HOSTS is fetched, a redirect away from it neither (issue #26 §5)."""

from __future__ import annotations

import base64
import logging
from typing import Any

import pytest

from core.config import DISCORD_CDN_HOSTS
from core.runtime.pool import RunPool
from core.store.models import Attachment, ChatMessage, Role
from tests.bots.discord.harness import (
    answered,
    bot_messages,
    mention,
    running_bot,
    text_of,
)
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.inside_service import inside_service
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.files import PNG, many_pages_pdf, shared_stream_pdf
from tests.fakes.changes import WAIT

IMAGE_PART = {"type": "image_url",
              "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()}}


def user_message(request: dict[str, Any]) -> Any:
    return [m["content"] for m in request["messages"] if m["role"] == "user"][-1]


async def test_an_image_and_a_text_file_reach_the_model_and_an_edit_keeps_them(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("A pixel and a list."), text_reply("Still a pixel."))
    async with running_bot(fake, pool):
        asked = await fake.send_user_message(mention(fake, "What are these?"),
                                             files={"shot.png": PNG, "todo.csv": b"a,b\n1,2"})
        thread = int(asked["id"])
        await fake.wait_until(lambda: answered(fake, thread, "A pixel and a list."), WAIT, "answer")
        await fake.edit_user_message(asked["id"], mention(fake, "And now?"))
        await fake.wait_until(lambda: answered(fake, thread, "Still a pixel."), WAIT, "edit")
    assert user_message(llm.requests[0]) == [
        {"type": "text", "text": "What are these?\n\nFile: todo.csv\n```\na,b\n1,2\n```"},
        IMAGE_PART]
    assert user_message(llm.requests[1]) == [
        {"type": "text", "text": "And now?\n\nFile: todo.csv\n```\na,b\n1,2\n```"}, IMAGE_PART]
    users = await ChatMessage.filter(role=Role.USER).order_by("id")
    assert len(users) == 2
    for user in users:
        names = await Attachment.filter(message_id=user.id).order_by("position").values_list(
            "name", "mime_type")
        assert names == [("shot.png", "image/png"), ("todo.csv", "text/csv")]


async def test_a_supported_file_without_words_is_a_turn(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("It is a pixel."))
    dm = fake.dm_channel_id()
    async with running_bot(fake, pool):
        await fake.send_user_message("", channel_id=dm, files={"pixel.png": PNG})
        await fake.wait_until(lambda: answered(fake, dm, "It is a pixel."), WAIT, "answer")
    assert user_message(llm.requests[0]) == [{"type": "text", "text": "📎 pixel.png"}, IMAGE_PART]


async def test_files_not_read_are_named_and_the_words_still_go(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Words only."))
    dm = fake.dm_channel_id()
    async with running_bot(fake, pool, attachment_max_bytes=64, attachments_per_message=2):
        await fake.send_user_message("Please look", channel_id=dm, files={
            "huge.log": b"x" * 65, "setup.exe": b"MZ\x90\x00", "third.txt": b"three"})
        await fake.wait_until(lambda: answered(fake, dm, "Words only."), WAIT, "answer")
        await fake.wait_until(lambda: [m for m in bot_messages(fake, dm)
                                       if "did not read" in text_of(m)], WAIT, "the notice")
    [notice] = [text_of(m) for m in bot_messages(fake, dm) if "did not read" in text_of(m)]
    assert "huge.log: it is larger than 64 bytes" in notice
    assert "setup.exe: this type of file is not supported" in notice
    assert "third.txt: only 2 files of a message are read" in notice
    assert user_message(llm.requests[0]) == "Please look"
    assert await Attachment.all().count() == 0


async def test_a_large_file_is_not_read_past_the_cap(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    """5 MiB behind a stated size of 10 bytes, with a cap of 1 KiB: the bot stops reading at
    the cap, and the fake's CDN sees the connection go long before the end."""
    llm.script(text_reply("Words only."))
    dm = fake.dm_channel_id()
    async with running_bot(fake, pool, attachment_max_bytes=1024):
        sent = await fake.send_user_message("Read this", channel_id=dm,
                                            files={"huge.log": b"x" * (5 << 20)},
                                            stated_sizes={"huge.log": 10})
        await fake.wait_until(lambda: answered(fake, dm, "Words only."), WAIT, "answer")
        attachment = sent["attachments"][0]["id"]
        await fake.wait_until(lambda: fake.world.cdn_sends[attachment].over, WAIT, "the CDN done")
    cdn = fake.world.cdn_sends[attachment]
    assert not cdn.whole and cdn.sent < 1 << 20, cdn  # socket buffers hold a little more
    assert "huge.log: it is larger than 1 KiB" in notice(fake, dm)


async def test_a_file_not_on_discord_s_cdn_is_not_fetched(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM, caplog: pytest.LogCaptureFixture
) -> None:
    """With DISCORD_CDN_HOSTS as shipped, an attachment URL on 127.0.0.1 is refused unread;
    the log says which URL and why."""
    caplog.set_level(logging.WARNING, "core.chat.attachments")
    llm.script(text_reply("Words only."))
    dm = fake.dm_channel_id()
    async with running_bot(fake, pool, discord_cdn_hosts=DISCORD_CDN_HOSTS):
        await fake.send_user_message("Look", channel_id=dm, files={"notes.txt": b"internal"})
        await fake.wait_until(lambda: answered(fake, dm, "Words only."), WAIT, "answer")
    assert "notes.txt: it is not stored on Discord's file servers" in notice(fake, dm)
    assert user_message(llm.requests[0]) == "Look"
    assert not [c for c in fake.calls if "/attachments/" in c.route]
    assert (f"did not download 'notes.txt': it is not stored on Discord's file servers "
            f"({fake.base_url}/attachments/") in caplog.text


async def test_a_redirect_away_from_the_cdn_is_not_followed(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    """The CDN answers 302 to another origin (a service inside the network): not fetched."""
    llm.script(text_reply("Words only."))
    dm = fake.dm_channel_id()
    async with inside_service() as (inside, hits):
        fake.world.cdn_redirects["notes.txt"] = f"{inside}/secret.txt"
        async with running_bot(fake, pool):
            await fake.send_user_message("Look", channel_id=dm, files={"notes.txt": b"public"})
            await fake.wait_until(lambda: answered(fake, dm, "Words only."), WAIT, "answer")
    assert "notes.txt: its download is redirected away from Discord's file servers" in notice(fake, dm)
    assert user_message(llm.requests[0]) == "Look" and hits == []


def notice(fake: FakeDiscord, channel: int | str) -> str:
    [said] = [text_of(m) for m in bot_messages(fake, channel) if "did not read" in text_of(m)]
    return said


async def test_a_hostile_pdf_is_named_and_the_words_still_go(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    """Issue 26: a PDF of 1,000 pages (20,000 in tests/core), past ATTACHMENT_PDF_PAGES, and one whose pages all draw
    one compressed stream, past ATTACHMENT_PARSE_SECONDS: named in the reply, as on Slack."""
    llm.script(text_reply("Words only."))
    dm = fake.dm_channel_id()
    async with running_bot(fake, pool, attachment_parse_seconds=3):
        await fake.send_user_message("Please read", channel_id=dm, files={
            "pages.pdf": many_pages_pdf(1_000), "bomb.pdf": shared_stream_pdf()})
        await fake.wait_until(lambda: answered(fake, dm, "Words only."), WAIT, "answer")
    [notice] = [text_of(m) for m in bot_messages(fake, dm) if "did not read" in text_of(m)]
    assert "pages.pdf: it is a PDF of 1000 pages, more than the 300 read" in notice
    assert "bomb.pdf: reading it took more than 3 seconds" in notice
    assert user_message(llm.requests[0]) == "Please read"
