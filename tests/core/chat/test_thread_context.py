"""The thread as context, pure: what is kept of a thread's earlier messages (the newest, each
once, cleaned and bounded), how it is stored and read back (tolerating any shape), and how the
agent is given it (a fenced text part before the user's words that nothing in it can close)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.chat.thread_context import (
    AUTHOR_CHARS, FILES, HEADING, TEXT_CHARS, EarlierMessage, block, from_stored, gather, line,
    to_stored, with_context,
)

T0 = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


def said(text: str, minute: int = 0, author: str = "alice", *, files: tuple[str, ...] = (),
         bot: bool = False, id: str = "") -> EarlierMessage:
    return EarlierMessage(author, text, T0 + timedelta(minutes=minute), files, bot, id)


def test_the_newest_within_the_limit_are_kept_oldest_first() -> None:
    messages = [said(f"m{n}", n, id=str(n)) for n in (3, 1, 4, 0, 2)]
    assert [m.text for m in gather(messages, 3)] == ["m2", "m3", "m4"]
    assert gather(messages, 0) == ()


def test_empty_messages_and_repeats_are_left_out() -> None:
    messages = [said("hi", 0, id="1"), said("hi", 0, id="1"), said("   ", 1, id="2"),
                said("", 2, id="3", files=("a.png",))]
    assert [(m.id, m.text, m.files) for m in gather(messages, 10)] == [
        ("1", "hi", ()), ("3", "", ("a.png",))]


def test_untrusted_text_is_cleaned_and_bounded() -> None:
    bad = said("a\x00b\ud83d" + "x" * 10 * TEXT_CHARS, author="e\x00ve " + "n" * 500,
               files=tuple(f"../../etc/f{n}\x00.txt" for n in range(50)))
    (kept,) = gather([bad], 5)
    assert kept.text.startswith("a\ufffdb\ufffd") and len(kept.text) == TEXT_CHARS
    assert kept.text.endswith("…") and len(kept.author) == AUTHOR_CHARS
    assert "\x00" not in kept.author and len(kept.files) == FILES
    assert kept.files[0] == "f0\ufffd.txt"


def test_stored_and_read_back_as_it_was() -> None:
    context = gather([said("hi", 0, id="1"), said("beep", 1, author="ci", bot=True, id="2",
                                                   files=("log.txt",))], 5)
    stored = to_stored(context)
    assert stored is not None and stored[1] == {
        "author": "ci", "text": "beep", "at": "2026-12-01T09:31:00+00:00", "files": ["log.txt"],
        "bot": True, "id": "2"}
    assert from_stored(stored) == context
    assert to_stored(()) is None


def test_a_stored_value_of_another_shape_reads_as_what_fits() -> None:
    assert from_stored(None) == () and from_stored({"author": "x"}) == ()
    odd = [{"author": "a", "text": "ok", "at": "not a time", "files": "x", "bot": "yes"},
           {"author": 1, "text": "no"}, "nothing", {"text": "no author"}]
    assert from_stored(odd) == (EarlierMessage("a", "ok"),)


def test_the_agent_reads_a_fenced_block_before_the_words() -> None:
    context = gather([said("look:\n```\ncode\n```", 0), said("ok", 1, author="ci", bot=True)], 5)
    text = block(context)
    assert text.startswith(HEADING + "\n````\n") and text.endswith("\n````")
    assert "[2026-12-01 09:30 UTC] alice: look:\n  ```\n  code\n  ```\n" in text
    assert "[2026-12-01 09:31 UTC] ci (bot): ok" in text
    assert with_context("what now?", context) == [
        {"type": "text", "text": text}, {"type": "text", "text": "what now?"}]
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}
    assert with_context([{"type": "text", "text": "see"}, image], context)[1:] == [
        {"type": "text", "text": "see"}, image]
    assert with_context("alone", ()) == "alone"


def test_a_line_names_files_and_an_unknown_time() -> None:
    assert line(EarlierMessage("bob", "", files=("a.png", "b.txt"))) == \
        "[time unknown] bob: 📎 a.png, b.txt"
