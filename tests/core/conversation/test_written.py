"""What a message gives the agent and what the thread is told first (no network, no database),
and the context it takes from the thread (the database: what the session has already)."""

from __future__ import annotations

from datetime import UTC, datetime

from core.chat import sessions
from core.chat.attachments import FileOffer, FileReader, Limits
from core.chat.thread_context import EarlierMessage, to_stored
from core.conversation.refusals import NO_WORDS
from core.conversation.written import earlier, read
from core.store.models import ChatMessage, MessageStatus, Role
from tests.files import PNG


def offer(name: str, data: bytes) -> FileOffer:
    async def download(limit: int) -> bytes:
        return data[:limit]
    return FileOffer(name, None, len(data), download)


async def test_words_alone_go_as_they_are() -> None:
    said = await read("  hello  ", [], FileReader())
    assert (said.text, said.files, said.notices) == ("hello", (), ())


async def test_a_file_read_without_words_is_a_turn_named_by_it() -> None:
    said = await read("", [offer("a.png", PNG)], FileReader())
    assert said.text == "📎 a.png" and [f.name for f in said.files] == ["a.png"]
    assert said.notices == ()


async def test_a_skipped_file_is_named_and_the_words_still_go() -> None:
    said = await read("look", [offer("a.png", PNG), offer("b.zip", b"PK\x03\x04")],
                      FileReader(Limits(per_message=10)))
    assert said.text == "look" and [f.name for f in said.files] == ["a.png"]
    assert said.notices == ("I did not read this file:\n• b.zip: this type of file is not "
                            "supported (only images (PNG, JPEG, GIF, WebP), text, Markdown, "
                            "code, CSV, JSON, logs and PDFs)",)


async def test_nothing_readable_runs_nothing_and_says_what_is_read() -> None:
    said = await read("", [offer("b.zip", b"PK\x03\x04")], FileReader())
    assert said.text == "" and said.notices[-1] == NO_WORDS and len(said.notices) == 2
    assert (await read("", [], FileReader())).notices == (NO_WORDS,)


# --- the thread as context (THREAD_CONTEXT_MESSAGES) ------------------------------------------

async def test_context_comes_with_the_first_turn_and_a_failed_read_costs_only_it(db: str) -> None:
    at = datetime(2026, 12, 1, tzinfo=UTC)
    thread = [EarlierMessage("alice", "one", at, id="1"), EarlierMessage("bob", "two", at, id="2")]
    replied = [EarlierMessage("carol", "three", at, id="3")]

    async def read_thread(limit: int) -> list[EarlierMessage]:
        return thread[-limit:]

    async def read_replied(limit: int) -> list[EarlierMessage]:
        return replied[:limit]

    async def broken(limit: int) -> list[EarlierMessage]:
        raise PermissionError("missing_scope")

    session = await sessions.create_session()
    got = await earlier(session.id, 20, new=True, thread=read_thread, replied=read_replied)
    assert [m.text for m in got] == ["one", "two", "three"]
    assert [m.text for m in await earlier(session.id, 1, new=True, thread=read_thread)] == ["two"]
    assert await earlier(session.id, 0, new=True, thread=read_thread) == ()
    assert [m.text for m in await earlier(session.id, 20, new=True, thread=broken,
                                          replied=read_replied)] == ["three"]
    await ChatMessage.create(session_id=session.id, role=Role.USER, status=MessageStatus.SENT,
                             content="q", platform_message_id="3",
                             thread_context=to_stored(thread[:1]))
    # later turns: no thread; what is a turn (3) or was given (1) already is left out
    assert await earlier(session.id, 20, new=False, thread=read_thread, replied=read_replied) == ()
    thread.append(EarlierMessage("dave", "four", at, id="4"))
    replied[0] = thread[-1]
    assert [m.text for m in await earlier(session.id, 20, new=False, thread=read_thread,
                                          replied=read_replied)] == ["four"]
