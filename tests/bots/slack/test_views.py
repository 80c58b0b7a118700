"""The pure parts: Block Kit rendering, ids, mrkdwn, command words, places (no event loop)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from bots.slack import ids
from bots.slack.render.turn import MAX_MESSAGES, answer_parts, render_answer
from bots.slack.render.blocks import MAX_BLOCKS, MAX_MARKDOWN, MAX_SECTION, MAX_TEXT, Payload
from bots.slack.render.clarify import custom_answer_modal, render_clarify
from bots.slack.commands import Command, mention_command, parse_command
from bots.slack.render.turn import render_live
from bots.slack.commands import choice_menu, parse_option
from bots.slack.render.pages import thinking_modal, thinking_pages
from bots.slack.render.mrkdwn import from_slack, to_mrkdwn
from bots.slack.inbound import place_of
from bots.slack.refs import Slot
from core.conversation.commands import export_options
from core.conversation.views import versions_of
from core.errors import InvalidInput
from core.agent.events import Todo
from core.store.models import MessageStatus, PauseStatus
from core.runtime.updates import PauseView, RunUpdate
from core.agent.thinking import ThinkingState, ThinkingText, ToolCall

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def update(status: MessageStatus = MessageStatus.RUNNING, **state: object) -> RunUpdate:
    return RunUpdate("run1", 1, 2, 3, status, ThinkingState(**state), model_id="fast")  # type: ignore[arg-type]


def all_text(payload: Payload) -> str:
    return str(payload.blocks)


def within_limits(payload: Payload) -> bool:
    sections = [b["text"]["text"] for b in payload.blocks if b["type"] == "section"]
    markdown = sum(len(b["text"]) for b in payload.blocks if b["type"] == "markdown")
    return (len(payload.text) <= MAX_TEXT and len(payload.blocks) <= MAX_BLOCKS
            and all(len(s) <= MAX_SECTION for s in sections) and markdown <= MAX_MARKDOWN)


def test_the_live_message_shows_status_tool_todos_tools_and_thinking() -> None:
    running = update(
        thinking=ThinkingText().append("x" * 5000 + " the end"),
        tools=(ToolCall("c1", "read", "", finished=True), ToolCall("c2", "search", '{"q": "<b>"}')),
        todos=(Todo("1", "plan", "completed"), Todo("2", "write", "in_progress")),
    )
    live = render_live(running)
    shown = all_text(live)
    assert live.text == "🔧 Running search"
    assert "`{\"q\": \"&lt;b&gt;\"}`" in shown and "☑ plan" in shown and "▶ write" in shown
    assert "✓ read · … search" in shown and "the end" in shown and within_limits(live)
    assert live.blocks[-1]["elements"][0] == {
        "type": "button", "text": {"type": "plain_text", "text": "Stop", "emoji": True},
        "action_id": ids.STOP, "value": "run1", "style": "danger"}
    queued = render_live(replace(update(MessageStatus.QUEUED), position=3))
    assert queued.text == "⏳ Queued (#3 in line)"


def test_the_answer_has_a_footer_buttons_and_a_switcher() -> None:
    done = update(MessageStatus.SUCCESS, final_text="**Hi** [there](https://x.y)",
                  tools=(ToolCall("c1", "todo", "", finished=True),), first_at=T0,
                  last_at=T0 + timedelta(seconds=42))
    layout = render_answer(done, versions_of(3, [1, 3, 7]))
    blocks = layout.main.blocks
    assert blocks[0] == {"type": "markdown", "text": "**Hi** [there](https://x.y)"}
    assert layout.main.text == "*Hi* <https://x.y|there>"  # the mrkdwn fallback
    assert blocks[1]["elements"][0]["text"] == "42s · 1 tool call · model fast"
    labels = [(e["text"]["text"], e["value"]) for e in blocks[2]["elements"]]
    assert labels == [("Regenerate", "3"), ("◀", "3:1"), ("2/3", "3"), ("▶", "3:7"), ("Show thinking", "3")]
    [feedback] = blocks[3]["elements"]
    assert blocks[3]["type"] == "context_actions" and feedback["action_id"] == ids.FEEDBACK
    assert (feedback["positive_button"]["value"], feedback["negative_button"]["value"]) == ("good:3", "bad:3")
    assert ids.parse_feedback("bad:3") == ("bad", 3)
    with pytest.raises(InvalidInput):
        ids.parse_feedback("meh:3")
    assert layout.followups == [] and layout.attachment is None


def test_a_table_goes_out_as_markdown_and_nested_fences_survive() -> None:
    table = "| tool | calls |\n|------|-------|\n| search | 2 |"
    nested = "````markdown\n```python\nprint(1)\n```\n````"
    layout = render_answer(update(MessageStatus.SUCCESS, final_text=f"{table}\n\n{nested}"))
    assert layout.main.blocks[0] == {"type": "markdown", "text": f"{table}\n\n{nested}"}


def test_a_failed_turn_says_why_and_offers_a_retry() -> None:
    failed = replace(update(MessageStatus.FAILED), error="LLM said no")
    layout = render_answer(failed)
    assert layout.main.text == "⚠️ Failed: LLM said no"
    elements = layout.main.blocks[-1]["elements"]
    assert [e["action_id"] for e in elements] == [ids.REGENERATE, ids.SHOW_THINKING]
    assert (elements[0]["text"]["text"], elements[0].get("style")) == ("🔁 Retry", "primary")


def test_long_answers_split_within_limits_and_very_long_ones_become_a_file() -> None:
    code = "```python\n" + "\n".join(f"line_{i} = {i}" for i in range(3000)) + "\n```"
    long = update(MessageStatus.SUCCESS, final_text=f"Intro.\n\n{code}\n\nOutro.")
    layout = render_answer(long)
    assert layout.attachment is not None and layout.followups == []
    medium = update(MessageStatus.SUCCESS, final_text="\n\n".join(["word " * 500] * 6))
    layout = render_answer(medium)
    assert 1 <= len(layout.followups) < MAX_MESSAGES and layout.attachment is None
    assert all(within_limits(p) for p in [layout.main, *layout.followups])
    for part in answer_parts(code[:30000] + "\n```"):
        assert len(part) <= MAX_MARKDOWN and part.count("```") % 2 == 0


def test_clarify_buttons_then_who_answered() -> None:
    pause = PauseView(9, "c1", "Which <colour>?", ("red", "b" * 100), PauseStatus.UNANSWERED)
    asked = render_clarify(pause)
    elements = asked.blocks[1]["elements"]
    assert [e["action_id"] for e in elements] == [ids.choice_action(0), ids.choice_action(1), ids.CLARIFY_CUSTOM]
    assert [e["value"] for e in elements] == ["9:0", "9:1", "9"]
    assert len(elements[1]["text"]["text"]) == 75 and "Which &lt;colour&gt;?" in str(asked.blocks)
    answered = render_clarify(replace(pause, status=PauseStatus.ANSWERED, answer="red", answered_by="U7"))
    assert "✅ answered by <@U7>: red" in str(answered.blocks) and "actions" not in str(answered.blocks)
    by_operator = render_clarify(replace(pause, status=PauseStatus.ANSWERED, answer="red",
                                         answered_by="ops <team>"))  # through the admin API
    assert "✅ answered by ops &lt;team&gt;: red" in str(by_operator.blocks)
    assert "expired" in str(render_clarify(replace(pause, status=PauseStatus.EXPIRED)).blocks)
    many = render_clarify(replace(pause, choices=tuple(str(i) for i in range(30))))
    assert [len(b["elements"]) for b in many.blocks[1:]] == [25, 6]
    modal = custom_answer_modal(9, "Which colour?")
    assert modal["private_metadata"] == "9" and modal["callback_id"] == ids.CUSTOM_ANSWER_VIEW


def test_the_thinking_modal_is_paginated() -> None:
    state = ThinkingState(thinking=ThinkingText().append("\n\n".join(["thought " * 300] * 12)),
                          tools=(ToolCall("c1", "search", '{"q": 1}', "ok", finished=True),))
    pages = thinking_pages(state)
    assert len(pages) > 1 and pages[0][0].startswith("*Tools*")
    second = thinking_modal(3, pages, 1)
    assert second["private_metadata"] == "3:1"
    assert second["blocks"][-1]["elements"][0]["value"] == "3:0"
    assert thinking_pages(ThinkingState()) == [["_Nothing was recorded for this answer._"]]


def test_ids_round_trip_and_refuse_garbage() -> None:
    assert ids.unpack(ids.pack(12, 3), 2) == (12, 3)
    assert ids.CLARIFY_CHOICE_PATTERN.match(ids.choice_action(4))
    for bad in (None, "", "1:x", "1:2:3", "-1:2"):
        with pytest.raises(InvalidInput):
            ids.unpack(bad, 2)
    with pytest.raises(InvalidInput):
        ids.parse_run("run; DROP")
    assert parse_option("4:gpt:4o") == (4, "gpt:4o")
    menu = choice_menu("model", 4, [("a", "A"), ("b", "B")], "b")
    assert menu.blocks[1]["elements"][0]["initial_option"]["value"] == "4:b"
    assert "No skills are configured" in choice_menu("skill", 4, [], None).text


def test_markdown_becomes_mrkdwn_and_slack_text_becomes_plain() -> None:
    assert to_mrkdwn("**bold** and [a link](https://a.b)\n\n- one\n- two") == \
        "*bold* and <https://a.b|a link>\n\n•   one\n•   two"
    assert to_mrkdwn("```python\nx = 1 < 2\n```") == "```\nx = 1 < 2\n```"
    assert from_slack("<@U0BOT> see <https://x.y|the docs> &amp; <https://z.w>", "U0BOT") == \
        "see the docs (https://x.y) & https://z.w"


def test_export_options() -> None:
    assert export_options(None) == ("md", "active")
    assert export_options("json") == ("json", "active")
    assert export_options("all JSON") == ("json", "all")
    assert export_options("pdf") == ("pdf", "active")  # prepare_export refuses it


def test_command_words() -> None:
    assert parse_command("model fast") == Command("model", "fast")
    assert parse_command("") == Command("help")
    assert parse_command("status now") == Command("help", unknown="status now")
    assert parse_command("dance") == Command("help", unknown="dance")
    assert mention_command("status") == Command("status")
    assert mention_command("export json") == Command("export", "json")
    assert mention_command("export json all") == Command("export", "json all")
    assert mention_command("model fast please") is None
    assert mention_command("status of the deploy?") is None
    assert mention_command("what is new") is None


def test_places_and_slots() -> None:
    top = place_of("T1", "C1", "100.1", None)
    assert (top.reply_thread, top.key.thread) == ("100.1", "100.1")
    reply = place_of("T1", "C1", "100.2", "100.1")
    assert reply.key == top.key
    dm = place_of("T1", "D1", "100.3", None, "im")
    assert (dm.reply_thread, dm.key.thread, dm.is_dm) == (None, "", True)
    slot = Slot("T1", "C1", "100.1", "100.5", ("100.6",), branched=True)
    assert Slot.from_refs(slot.to_refs()) == slot
    assert Slot.from_refs(None) is None and Slot.from_refs({"discord": {}}) is None
