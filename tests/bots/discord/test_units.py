"""Pure helpers: places, mentions, thread names, reactions, modal submissions."""

from __future__ import annotations

from bots.discord.conversation import Place, allowed, prompt_text
from bots.discord.inbound import modal_submission
from bots.discord.render.reactions import mark_of
from bots.discord.render.titles import renamable, thread_name
from core.chat.sessions import ThreadKey
from core.conversation.titles import ShownTitles
from core.store.models import MessageStatus, Platform


def test_places_map_to_thread_keys() -> None:
    assert Place(1, 2, 3).key() == ThreadKey(Platform.DISCORD, "1", "2", "3")
    assert Place(None, 9).key() == ThreadKey(Platform.DISCORD, "dm", "9", "")
    assert Place(1, 2, 3).target == 3 and Place(1, 2).target == 2


def test_discord_channels_allows_listed_channels_their_threads_and_dms_only_when_listed() -> None:
    assert allowed(Place(1, 2), ())
    assert allowed(Place(1, 2, 3), ("2",)) and allowed(Place(1, 5, 3), ("3",))
    assert not allowed(Place(1, 5), ("2",))
    assert not allowed(Place(None, 9), ("2",)) and allowed(Place(None, 9), ("2", "dm"))


def test_the_prompt_is_the_message_without_the_bots_mentions() -> None:
    assert prompt_text("<@42> what is <@!42> 2+2? cc <@7>", 42) == "what is   2+2? cc <@7>"
    assert prompt_text("<@42>", 42) == ""


def test_threads_are_named_after_the_question_within_100_characters() -> None:
    assert thread_name("  what   is\nthis? ") == "what is this?"
    assert len(thread_name("word " * 50)) == 100 and thread_name("").startswith("Conversation")


def test_modal_values_are_read_from_labels_and_action_rows() -> None:
    labels = [{"type": 18, "id": 1, "component": {"type": 4, "custom_id": "answer", "value": "blue"}}]
    rows = [{"type": 1, "components": [{"type": 4, "custom_id": "answer", "value": "red"}]}]
    assert modal_submission({"components": labels}).values == {"answer": "blue"}
    assert modal_submission({"components": rows}).values == {"answer": "red"}


def test_a_run_is_marked_eyes_while_it_runs_then_check_or_cross_and_a_stop_unmarks() -> None:
    assert mark_of(MessageStatus.QUEUED) is None, "a queued run changes nothing yet"
    assert [mark_of(s) for s in (MessageStatus.RUNNING, MessageStatus.SUCCESS,
                                 MessageStatus.FAILED, MessageStatus.STOPPED)] == ["👀", "✅", "❌", ""]


def test_only_a_thread_is_renamed_and_a_title_is_given_once_per_thread() -> None:
    assert not renamable(object(), 1, "a title") and not renamable(None, 1, "a title")
    assert thread_name("a\x00b \u200b\x07 c \ud83d") == "a b c", "no control or lone surrogate"
    shown = ShownTitles(limit=2)
    assert shown.changed("t1", "A") and not shown.changed("t1", "A") and shown.changed("t1", "B")
    shown.forget("t1")
    assert shown.changed("t1", "B")
