"""Files shared on Slack, end to end: signed events with `files` into the real slack-bolt app,
downloaded from the fake Slack's `url_private` with the bot token, through the real Bridge to
the scripted LLM (an image part, a text file fenced in the text); what is not read is named in
the thread while the words still go."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bots.slack.files import SlackFiles
from core.runtime.pool import RunPool
from core.store.models import Attachment
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, running, texts, until
from tests.fakes.inside_service import inside_service
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import (
    CHANNEL_ID,
    DM_CHANNEL_ID,
    app_mention_event,
    dm_message_event,
    make_slack_event,
    thread_message_event,
)
from tests.files import PNG, many_pages_pdf, shared_stream_pdf
from tests.loop_lag import LoopLag


def shared(event: dict[str, Any], *files: dict[str, Any]) -> dict[str, Any]:
    """`event` carrying `files`, as Slack sends a message that shares them."""
    subtype = {"subtype": "file_share"} if event["type"] == "message" else {}
    return make_slack_event({**event, **subtype, "files": list(files)})


async def notice_in(h: Harness, thread: str) -> str:
    """The text of the thread's message naming the files not read."""
    notices = await until(lambda: [m for m in h.bot_messages(CHANNEL_ID, thread)
                                   if "did not read" in texts(m)])
    return texts(notices[0])


def user_message(request: dict[str, Any]) -> Any:
    return [m["content"] for m in request["messages"] if m["role"] == "user"][-1]


async def test_an_image_and_a_text_file_reach_the_model(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("A pixel and a plan."))
    image = h.slack.share_file("shot.png", PNG, "image/png")
    notes = h.slack.share_file("notes.txt", b"step 1\n```\nstep 2", "text/plain")
    event = app_mention_event("What are these?")
    assert (await h.post_event(shared(event, image, notes))).status_code == 200
    await h.answered(CHANNEL_ID, event["ts"])
    text_part, image_part = user_message(llm.requests[0])
    assert text_part == {"type": "text", "text":
                         "What are these?\n\nFile: notes.txt\n````\nstep 1\n```\nstep 2\n````"}
    assert image_part == {"type": "image_url", "image_url": {
        "url": "data:image/png;base64," + base64.b64encode(PNG).decode()}}
    downloads = h.slack.calls_to("files-pri")
    assert len(downloads) == 2 and {c.token for c in downloads} == {"xoxb-test"}
    assert await Attachment.all().count() == 2


async def test_regenerate_answers_the_message_with_its_files(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("A pixel."), text_reply("Still a pixel."))
    event = app_mention_event("What is it?")
    image = h.slack.share_file("shot.png", PNG, "image/png")
    assert (await h.post_event(shared(event, image))).status_code == 200
    [answer] = await h.answered(CHANNEL_ID, event["ts"])
    await h.click(answer, "hermes.answer.regenerate")
    await until(lambda: "Still a pixel." in texts(h.slack.message(CHANNEL_ID, answer.ts))
                or [m for m in h.bot_messages(CHANNEL_ID, event["ts"]) if "Still a pixel." in texts(m)])
    assert user_message(llm.requests[1]) == user_message(llm.requests[0])
    assert user_message(llm.requests[1])[1]["type"] == "image_url"
    assert len(h.slack.calls_to("files-pri")) == 1  # read once, kept with the message


async def test_a_file_alone_in_a_dm_is_a_turn_not_a_command(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("A pixel, privately."))
    image = h.slack.share_file("shot.png", PNG, "image/png")
    event = dm_message_event("")
    assert (await h.post_event(shared(event, image))).status_code == 200
    reply = await until(lambda: [m for m in h.slack.history(DM_CHANNEL_ID)
                                 if m.bot_id and "A pixel, privately." in texts(m)])
    assert reply and user_message(llm.requests[0])[0] == {"type": "text", "text": "📎 shot.png"}


async def test_a_file_without_words_is_a_turn(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("Hello."), text_reply("It says hi."))
    mention = await h.event("app_mention", text="hello")
    await h.answered(CHANNEL_ID, mention["ts"])
    notes = h.slack.share_file("hi.md", b"# hi", "text/markdown")
    event = thread_message_event("", thread_ts=mention["ts"])
    assert (await h.post_event(shared(event, notes))).status_code == 200
    await h.answered(CHANNEL_ID, mention["ts"], count=2)
    assert user_message(llm.requests[1]) == [
        {"type": "text", "text": "📎 hi.md\n\nFile: hi.md\n```\n# hi\n```"}]


async def test_files_not_read_are_named_and_the_words_still_go(
    fake_slack: FakeSlack, pool: RunPool, fast_clock: FastClock, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Read the words."))
    async with running(fake_slack, pool, fast_clock, attachment_max_bytes=64) as h:
        big = fake_slack.share_file("huge.log", b"x" * 65, "text/plain")
        liar = fake_slack.share_file("small.log", b"y" * 65, "text/plain", size=10)
        tool = fake_slack.share_file("tool.exe", b"MZ\x90\x00", "application/x-msdownload")
        event = app_mention_event("Summarise please")
        assert (await h.post_event(shared(event, big, liar, tool))).status_code == 200
        await h.answered(CHANNEL_ID, event["ts"])
        shown = await notice_in(h, event["ts"])
    assert "huge.log: it is larger than 64 bytes" in shown
    assert "small.log: it is larger than 64 bytes" in shown  # the bytes, not the size it claimed
    assert "tool.exe: this type of file is not supported" in shown
    assert user_message(llm.requests[0]) == "Summarise please"
    assert await Attachment.all().count() == 0


async def test_the_token_goes_only_to_slack(h: Harness, llm: ScriptedLLM) -> None:
    """A file whose URL is not Slack's is not downloaded (the bot token would go with it)."""
    llm.script(text_reply("Only words."))
    image = {**h.slack.share_file("shot.png", PNG, "image/png"),
             "url_private": "https://files.example.com/shot.png", "url_private_download": None}
    event = app_mention_event("Look")
    assert (await h.post_event(shared(event, image))).status_code == 200
    await h.answered(CHANNEL_ID, event["ts"])
    assert "shot.png: it is not stored on Slack's file servers" in await notice_in(h, event["ts"])
    assert user_message(llm.requests[0]) == "Look" and not h.slack.calls_to("files-pri")


async def test_a_file_over_plain_http_elsewhere_is_not_fetched(h: Harness, llm: ScriptedLLM) -> None:
    """A URL on the fake Slack's host but not its origin (another port, plain http): the token
    would go to whatever listens there, so nothing is asked of it."""
    llm.script(text_reply("Only words."))
    async with inside_service() as (inside, hits):
        image = {**h.slack.share_file("shot.png", PNG, "image/png"),
                 "url_private": f"{inside}/shot.png", "url_private_download": None}
        event = app_mention_event("Look")
        assert (await h.post_event(shared(event, image))).status_code == 200
        await h.answered(CHANNEL_ID, event["ts"])
        shown = await notice_in(h, event["ts"])
    assert "shot.png: it is not stored on Slack's file servers" in shown
    assert user_message(llm.requests[0]) == "Look" and hits == []


@pytest.mark.parametrize(("url", "trusted"), [
    ("https://files.slack.com/files-pri/T1-F1/shot.png", True),
    ("https://slack.com/files-pri/T1-F1/shot.png", True),
    ("http://files.slack.com/files-pri/T1-F1/shot.png", False),
    ("http://slack.com/files-pri/T1-F1/shot.png", False),
    ("https://files.slack.com.evil.example/shot.png", False),
])
def test_slack_files_go_over_https_only(url: str, trusted: bool) -> None:
    """With SLACK_API_URL as shipped (https://slack.com/api/)."""
    assert SlackFiles(AsyncWebClient(token="xoxb-test")).trusts(url) is trusted


async def test_without_files_read_the_file_is_named_not_misread(h: Harness, llm: ScriptedLLM) -> None:
    """Slack answers url_private with its sign-in page (HTML, 200) to a token without the
    scope: that page is not taken for the file."""
    llm.script(text_reply("Only words."))
    h.slack.files_read = False
    image = h.slack.share_file("shot.png", PNG, "image/png")
    event = app_mention_event("Look")
    assert (await h.post_event(shared(event, image))).status_code == 200
    await h.answered(CHANNEL_ID, event["ts"])
    assert "shot.png: it could not be downloaded" in await notice_in(h, event["ts"])
    assert user_message(llm.requests[0]) == "Look" and len(h.slack.calls_to("files-pri")) == 1


@pytest.mark.parametrize("declared", [
    "text/plain\r\nX-Evil: 1",  # a header of its own if it reached a response
    "text/plain\x00",  # PostgreSQL refuses a NUL in any text column
    "text/" + "x" * 200,  # wider than the column
])
@pytest.mark.backend  # a NUL or an over-long type is what PostgreSQL refuses in a row
async def test_a_hostile_declared_type_is_stored_safely_and_the_words_go(
        h: Harness, llm: ScriptedLLM, declared: str) -> None:
    llm.script(text_reply("Read it."))
    notes = h.slack.share_file("notes.txt", b"step 1", declared)
    event = app_mention_event("Summarise please")
    assert (await h.post_event(shared(event, notes))).status_code == 200
    await h.answered(CHANNEL_ID, event["ts"])
    assert user_message(llm.requests[0]) == [
        {"type": "text", "text": "Summarise please\n\nFile: notes.txt\n```\nstep 1\n```"}]
    assert await Attachment.all().values_list("name", "mime_type") == [("notes.txt", "text/plain")]


async def test_hostile_pdfs_are_named_while_another_conversation_goes_on(
    fake_slack: FakeSlack, pool: RunPool, fast_clock: FastClock, llm: ScriptedLLM
) -> None:
    """Issue 26: a PDF whose pages all draw one compressed stream and a PDF of 1,000 pages (20,000 in tests/core),
    beside another person's conversation: each is named with why, the words go, the other
    conversation is answered, and a probe on the event loop never wakes late. The Bridge of
    this test shares the loop (serve's is a process of its own): its first run, which imports
    the agent, is over before the probe starts."""
    llm.script(*[text_reply("Answered.")] * 3)
    async with running(fake_slack, pool, fast_clock, attachment_parse_seconds=3) as h:
        first = await h.event("app_mention", text="Warm up")
        await h.answered(CHANNEL_ID, first["ts"])
        async with LoopLag() as lag:
            bomb = fake_slack.share_file("bomb.pdf", shared_stream_pdf(), "application/pdf")
            pages = fake_slack.share_file("pages.pdf", many_pages_pdf(1_000), "application/pdf")
            hostile = app_mention_event("What do these say?")
            assert (await h.post_event(shared(hostile, bomb, pages))).status_code == 200
            other = app_mention_event("Just a question", user="U0OTHER")
            assert (await h.post_event(make_slack_event(other))).status_code == 200
            await h.answered(CHANNEL_ID, other["ts"])
            shown = await notice_in(h, hostile["ts"])
            await h.answered(CHANNEL_ID, hostile["ts"])
    assert "bomb.pdf: reading it took more than 3 seconds" in shown
    assert "pages.pdf: it is a PDF of 1000 pages, more than the 300 read" in shown
    assert sorted(str(user_message(r)) for r in llm.requests[1:]) == [
        "Just a question", "What do these say?"]
    assert lag.longest_held < 0.3, f"the event loop was held {lag.longest_held:.3f} s"
