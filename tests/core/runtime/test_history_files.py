"""The files of earlier messages in a later turn's request: within HISTORY_ATTACHMENT_BYTES,
newest first, a text file or a PDF as its text (its bytes never read from the database), an
image past the budget named in its place; through the fake Bridge (which records the request
as it came) and the real Bridge and hermes-agent to the scripted LLM."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.chat import sessions
from core.chat.attachment_store import AgentFile
from core.chat.attachments import PDF_TYPE, StoredFile, placeholder
from core.runtime.history import given_bytes, left_out_note, within_budget
from core.runtime.pool import RunPool
from core.runtime.recovery import recover
from core.store.models import Attachment, MessageStatus
from tests.core.runtime.waiting import finished, until
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.files import PNG, pdf
from tests.support.runtime import catalogue_for, opened_pool

MiB = 1 << 20
BUDGET = 3 * MiB  # one 2 MiB image fits, two do not
SLACK = 64 * 1024  # the JSON around the files: words, ids, the model


def png(name: str, fill: int, size: int = 2 * MiB) -> StoredFile:
    """A PNG of `size` bytes, told apart from the others by its `fill` byte."""
    return StoredFile(name, "image/png", PNG + bytes([fill]) * (size - len(PNG)))


FIRST, SECOND = png("first.png", 1), png("second.png", 2)
REPORT = StoredFile("report.pdf", PDF_TYPE, pdf("Quarterly numbers"), "[page 1]\nQuarterly numbers")
NOTES = StoredFile("notes.md", "text/markdown", b"# Plan\nship it", "# Plan\nship it")


def url_of(file: StoredFile) -> str:
    return f"data:{file.mime_type};base64,{base64.b64encode(file.data).decode()}"


def images_in(body: Any) -> list[str]:
    """Every image data URL anywhere in a request body."""
    if isinstance(body, dict):
        if body.get("type") == "image_url":
            return [body["image_url"]["url"]]
        return [url for value in body.values() for url in images_in(value)]
    if isinstance(body, list):
        return [url for value in body for url in images_in(value)]
    return []


@pytest.fixture
def queries() -> Iterator[list[tuple[str, Any]]]:
    """The SQL the database driver runs (tortoise logs each query with its values)."""
    seen: list[tuple[str, Any]] = []

    class Recorder(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if isinstance(record.args, tuple) and len(record.args) == 2:
                seen.append((str(record.args[0]), record.args[1]))

    recorder, client_log = Recorder(logging.DEBUG), logging.getLogger("tortoise.db_client")
    level = client_log.level
    client_log.setLevel(logging.DEBUG)
    client_log.addHandler(recorder)
    try:
        yield seen
    finally:
        client_log.removeHandler(recorder)
        client_log.setLevel(level)


def numbers_in(values: Any) -> set[int]:
    if isinstance(values, int):
        return {values}
    if isinstance(values, (list, tuple)):
        return {n for value in values for n in numbers_in(value)}
    return set()


async def test_a_later_turn_carries_earlier_files_within_the_budget(
        fake_pool: RunPool, fake_bridge: FakeBridge, queries: list[tuple[str, Any]]):
    fake_pool.history_attachment_bytes = BUDGET
    session = await sessions.create_session()
    files = [FIRST, SECOND, REPORT, NOTES]
    await finished(fake_pool, (await fake_pool.start(session.id, "Look", files=files)).run_id)
    queries.clear()
    done = await finished(fake_pool, (await fake_pool.start(session.id, "And now?")).run_id)
    assert done.status == MessageStatus.SUCCESS

    first, later = fake_bridge.requests_to("POST", "/run")
    assert first.size > 2 * 2 * MiB  # the turn's own files all go, whatever the budget
    assert images_in(first.body) == [url_of(FIRST), url_of(SECOND)]
    assert later.size < BUDGET * 4 // 3 + SLACK  # was 5.6 MB: both images again
    assert images_in(later.body) == [url_of(FIRST)]  # the newest that fit
    [text] = [p["text"] for p in later.body["history"][0]["content"] if p["type"] == "text"]
    assert text.startswith("Look\n\n[image second.png (2 MiB) not sent again: the "
                           "conversation's earlier files are over HISTORY_ATTACHMENT_BYTES]")
    assert "File: report.pdf\n```\n[page 1]\nQuarterly numbers\n```" in text
    assert "File: notes.md\n```\n# Plan\nship it\n```" in text
    raw = json.dumps(later.body)
    assert "%PDF" not in raw and base64.b64encode(REPORT.data).decode()[:40] not in raw

    # Of the database, only the image sent was read with its bytes: never a text file or a PDF.
    ids = dict(await Attachment.all().values_list("name", "id"))
    with_bytes = [numbers_in(values) for query, values in queries
                  if query.lstrip().upper().startswith("SELECT") and '"attachment"' in query
                  and '"data"' in query]
    assert with_bytes == [{ids["first.png"]}]


async def test_the_files_before_a_summary_are_not_read(
        fake_pool: RunPool, fake_bridge: FakeBridge, queries: list[tuple[str, Any]]):
    session = await sessions.create_session()
    first = await finished(fake_pool, (await fake_pool.start(session.id, "Look",
                                                             files=[FIRST])).run_id)
    fake_bridge.default_script = lambda run_id: [
        ev("context_compacted", summary="They showed a picture.",
           compacted_until=first.message_id),
        ev("done", final_text="ok")]
    await finished(fake_pool, (await fake_pool.start(session.id, "Compact")).run_id)
    fake_bridge.default_script = lambda run_id: [ev("done", final_text="ok")]
    queries.clear()
    done = await finished(fake_pool, (await fake_pool.start(session.id, "And now?")).run_id)
    assert done.status == MessageStatus.SUCCESS
    later = fake_bridge.requests_to("POST", "/run")[-1]
    assert later.body["history"][0] == {
        "role": "system", "content": "Summary of the earlier conversation:\nThey showed a picture."}
    assert images_in(later.body) == []
    assert [q for q, _ in queries if '"attachment"' in q and '"data"' in q] == []


async def test_a_conversation_over_the_budget_keeps_working_turn_after_turn(
        pool: RunPool, llm: ScriptedLLM):
    pool.history_attachment_bytes = BUDGET
    turns = [png(f"shot{n}.png", n) for n in range(1, 5)]
    llm.script(*(text_reply(f"Seen {n}.") for n in range(1, 5)))
    session = await sessions.create_session()
    for number, image in enumerate(turns, start=1):
        done = await finished(pool, (await pool.start(session.id, f"Turn {number}",
                                                      files=[image])).run_id)
        assert done.status == MessageStatus.SUCCESS and done.state.final_text == f"Seen {number}."
    for number, request in enumerate(llm.requests, start=1):
        sent = images_in(request["messages"])
        # Its own image, and of the earlier ones only the newest (two would be over BUDGET).
        assert sent == [url_of(f) for f in turns[max(0, number - 2):number]]
        assert len(json.dumps(request)) < (BUDGET + 2 * MiB) * 4 // 3 + SLACK
    users = [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "user"]
    assert users[0] == ("Turn 1\n\n[image shot1.png (2 MiB) not sent again: the conversation's "
                        "earlier files are over HISTORY_ATTACHMENT_BYTES]")


async def test_a_turn_whose_history_had_files_is_answered_when_none_is_sent_again(
        fake_pool: RunPool, fake_bridge: FakeBridge):
    fake_pool.history_attachment_bytes = 0
    session = await sessions.create_session()
    words = placeholder([FIRST])  # a message of files alone
    await finished(fake_pool, (await fake_pool.start(session.id, words, files=[FIRST])).run_id)
    done = await finished(fake_pool, (await fake_pool.start(session.id, "Again")).run_id)
    assert done.status == MessageStatus.SUCCESS
    later = fake_bridge.requests_to("POST", "/run")[-1]
    assert images_in(later.body) == []
    assert later.body["history"][0]["content"] == (
        "📎 first.png\n\n[image first.png (2 MiB) not sent again: the conversation's earlier files are over "
        "HISTORY_ATTACHMENT_BYTES]")


async def test_a_turn_continued_on_a_new_bridge_carries_each_file_once(db: str, skills_dir: Path):
    third = png("third.png", 3)
    async with FakeBridge() as fake:
        async with opened_pool(fake.url, catalogue_for(None, skills_dir)) as first:
            session = await sessions.create_session()
            await finished(first, (await first.start(session.id, "Look",
                                                     files=[FIRST, SECOND])).run_id)
            fake.default_script = lambda run_id: [
                ev("text", text="half"), Stall(run_id), ev("done", final_text="x")]
            run = await first.start(session.id, "And this?", files=[third])
            await until(first, run.run_id, lambda u: u.state.last_seq == 1)
        fake.runs.clear()  # the Bridge restarted and lost its runs
        fake.default_script = lambda run_id: [ev("done", final_text="whole")]
        async with opened_pool(fake.url, catalogue_for(None, skills_dir)) as again:
            assert await recover(again) == 1
            done = await finished(again, run.run_id)
    assert done.status == MessageStatus.SUCCESS
    started, resumed = fake.requests_to("POST", "/run")[1:]
    each_once = sorted(url_of(f) for f in (FIRST, SECOND, third))
    assert sorted(images_in(started.body)) == each_once
    assert sorted(images_in(resumed.body)) == each_once  # was each twice
    assert resumed.body["history"] == [] and "user_content" not in resumed.body
    assert resumed.size < started.size + SLACK


# -- the budget, pure --------------------------------------------------------------------------

def agent_file(ident: int, size: int, text: str | None = None, name: str = "f") -> AgentFile:
    return AgentFile(ident, name, "image/png" if text is None else "text/plain", size, text)


def test_the_newest_files_that_fit_are_given_and_older_smaller_ones_fill_the_rest():
    newest_first = [agent_file(1, 2 * MiB), agent_file(2, 2 * MiB), agent_file(3, 512 * 1024)]
    assert within_budget(newest_first, 3 * MiB) == {1, 3}
    assert within_budget(newest_first, 0) == set()
    assert within_budget(newest_first, None) == {1, 2, 3}


def test_a_text_counts_as_the_text_given_not_the_file_it_came_in():
    text = agent_file(1, 20 * MiB, "ünïcode", name="big.pdf")  # a large PDF of little text
    assert given_bytes(text) == len("File: big.pdf\n```\nünïcode\n```".encode())
    assert within_budget([text], 100) == {1}


def test_the_note_names_each_file_left_out_with_its_size():
    note = left_out_note([agent_file(1, 2_200_000, name="a.png"),
                          agent_file(2, 12, "x", name="b.md")])
    assert note.splitlines() == [
        "[image a.png (2.1 MiB) not sent again: the conversation's earlier files are over "
        "HISTORY_ATTACHMENT_BYTES]",
        "[file b.md (12 bytes) not sent again: the conversation's earlier files are over "
        "HISTORY_ATTACHMENT_BYTES]"]
    assert left_out_note([]) == ""
