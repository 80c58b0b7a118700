"""The typed reads of what Discord sends (pure, no event loop): messages as discord.py builds
them from payload variants (no author, no content, only stickers, embeds, a poll), and
interaction data with fields missing, null or of another type."""

from __future__ import annotations

from typing import Any

import discord
import pytest
from discord.state import ConnectionState

from bots.discord.inbound import (
    CommandData,
    ComponentData,
    command_data,
    component_data,
    modal_submission,
    user_post,
)
from tests.fakes import discord_payloads as dp

Payload = dict[str, Any]
ALICE = dp.make_user(7, "alice")
BOT = 42
OTHER_TYPES: tuple[Any, ...] = (None, 7, 1.5, True, "", "x", [], [None], {}, {"x": 1})


def message(**fields: Any) -> discord.Message:
    """A Message as discord.py builds it from a MESSAGE_CREATE / UPDATE payload."""
    state = ConnectionState(dispatch=lambda *args: None, handlers={}, hooks={}, http=None)  # type: ignore[arg-type]
    data = dp.make_message(channel_id=5, author=ALICE, content="hello <@42>",
                           mentions=[dp.make_user(BOT, "hermes", bot=True)])
    data.update(fields)
    for key in [k for k, v in fields.items() if v is dp]:  # `key=dp` removes the field
        del data[key]
    return discord.Message(state=state, channel=discord.Object(id=5), data=data)  # type: ignore[arg-type]


def test_a_persons_message_is_a_post() -> None:
    post = user_post(message())
    assert post is not None
    assert (post.author_id, post.content, post.mentions, post.has_media) == (7, "hello <@42>", {BOT}, False)


@pytest.mark.parametrize("fields", [
    {"author": dp}, {"author": dp.make_user(9, "ci", bot=True)}, {"type": 7}, {"type": 18},
])
def test_a_message_without_author_from_a_bot_or_of_the_system_is_no_post(fields: Payload) -> None:
    assert user_post(message(**fields)) is None


STICKER = {"id": "1", "name": "wave", "format_type": 1}
POLL = {"question": {"text": "lunch?"}, "answers": [{"answer_id": 1, "poll_media": {"text": "yes"}}],
        "expiry": dp.iso_time(2_000_000_000), "allow_multiselect": False, "layout_type": 1}


@pytest.mark.parametrize("fields", [
    {"sticker_items": [STICKER]}, {"embeds": [dp.make_embed(title="a link")]}, {"poll": POLL},
    {"attachments": [dp.make_attachment(3, "a.png", 4, "https://cdn.example/a.png")]},
])
def test_a_message_of_only_stickers_embeds_a_poll_or_files_has_media_and_no_words(fields: Payload) -> None:
    post = user_post(message(content="", **fields))
    assert post is not None and post.content == "" and post.has_media


def test_a_message_without_mentions_mentions_nobody() -> None:
    post = user_post(message(mentions=dp))
    assert post is not None and post.mentions == frozenset()


def test_a_click_and_a_choice() -> None:
    assert component_data({"custom_id": "hermes:stop:r1", "component_type": 2}) == ComponentData("hermes:stop:r1")
    chosen = component_data({"custom_id": "hermes:model:3", "component_type": 3, "values": ["fast"]})
    assert (chosen.custom_id, chosen.value) == ("hermes:model:3", "fast")


@pytest.mark.parametrize("field", ["custom_id", "values"])
@pytest.mark.parametrize("value", OTHER_TYPES)
def test_interaction_data_of_any_shape_reads_as_absent(field: str, value: Any) -> None:
    data = component_data({"custom_id": "hermes:model:3", "values": ["fast"], field: value})
    assert isinstance(data.custom_id, str) and isinstance(data.value, str)
    assert data.custom_id == ("hermes:model:3" if field == "values" else (value if isinstance(value, str) else ""))


@pytest.mark.parametrize("data", [None, 7, "x", [], {}, {"components": None}, {"components": 3},
                                  {"components": [None, 7, "x", []]}])
def test_data_of_no_shape_at_all_reads_as_empty(data: Any) -> None:
    assert component_data(data) == ComponentData("")
    assert modal_submission(data).values == {}


def test_a_modal_reads_labels_and_action_rows() -> None:
    data = {"custom_id": "hermes:answer:1", "components": [
        {"type": 18, "id": 1, "component": {"type": 4, "custom_id": "answer", "value": "blue"}},
        {"type": 1, "components": [{"type": 4, "custom_id": "other", "value": "red"}]}]}
    submitted = modal_submission(data)
    assert (submitted.custom_id, submitted.values) == ("hermes:answer:1", {"answer": "blue", "other": "red"})


@pytest.mark.parametrize("component", [
    None, 7, [], {}, {"custom_id": None, "value": "x"}, {"custom_id": 7, "value": "x"},
])
def test_a_modal_input_without_its_custom_id_is_skipped(component: Any) -> None:
    data = {"components": [{"type": 18, "component": component},
                           {"type": 1, "components": [component]}]}
    assert modal_submission(data).values == {}


@pytest.mark.parametrize("value", OTHER_TYPES)
def test_a_modal_input_of_any_value_reads_as_text(value: Any) -> None:
    data = {"components": [{"type": 18, "component": {"custom_id": "answer", "value": value}}]}
    assert modal_submission(data).values == {"answer": value if isinstance(value, str) else ""}


def test_text_is_made_storable() -> None:
    data = {"components": [{"type": 18, "component": {"custom_id": "answer", "value": "a\x00b\ud83d"}}]}
    assert modal_submission(data).values == {"answer": "a\ufffdb\ufffd"}


def status_data(**fields: Any) -> Payload:
    return {"id": "1", "name": "hermes", "type": 1,
            "options": [{"name": "export", "type": 1, "options": [
                {"name": "format", "type": 3, "value": "md"}]}], **fields}


def test_a_command_reads_its_path_and_options() -> None:
    command = command_data(status_data())
    assert command == CommandData("hermes", ("export",), {"format": "md"})


@pytest.mark.parametrize("data", [
    None, 7, [], {}, status_data(name=None), status_data(name=7), status_data(options=None),
    status_data(options="x"), status_data(options=[7]), status_data(resolved=[]),
    status_data(guild_id="not-a-snowflake"),
    status_data(options=[{"name": None, "type": 1, "options": []}]),
    status_data(options=[{"name": "export", "type": 1, "options": [{"name": "format", "type": 3}]}]),
    status_data(options=[{"name": "export", "type": 1, "options": [{"name": "format", "type": 3, "value": 7}]}]),
    status_data(options=[{"name": "n", "type": 4, "value": True}]),
    status_data(options=[{"name": "n", "type": 99, "value": "x"}]),
    status_data(options=[{"name": "n", "type": "3", "value": "x"}]),
])
def test_a_command_of_a_shape_discord_py_cannot_read_is_none(data: Any) -> None:
    assert command_data(data) is None


def test_a_command_without_options_has_none() -> None:
    assert command_data({"name": "hermes"}) == CommandData("hermes", (), {})
    assert command_data(status_data(options=[{"name": "n", "type": 10, "value": 1.5}])) == \
        CommandData("hermes", (), {"n": 1.5})
