"""Pure rendering: live embed, answer parts, switcher, clarify, pages, refusals (no event loop)."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import discord

from bots.discord import ids
from bots.discord.actions import ActionItem, Label
from bots.discord.actions.clarify import AnswerSubmitted, Choice, CustomAnswer
from bots.discord.actions.thinking import ShowSummary, ShowThinking, ThinkingPage
from bots.discord.actions.turn import Feedback, Regenerate, Stop, Version
from bots.discord.bot import ITEMS
from bots.discord.commands import ModelSelect, SkillSelect
from bots.discord.errors import CannotAnswerHere
from bots.discord.render.clarify import MAX_CHOICES, clarify_part, refusal
from bots.discord.render.live import live_part
from bots.discord.render.pages import thinking_page, thinking_pages
from bots.discord.render.parts import fit_lines
from bots.discord.render.refusals import missing_permissions, refusal_part, refusal_text
from bots.discord.render.turn import MAX_PARTS, TurnContext, turn_parts
from core.agent.events import Todo
from core.agent.thinking import (
    CurrentStatus,
    StatusSource,
    ThinkingState,
    ThinkingText,
    ToolCall,
)
from core.conversation.views import Versions
from core.errors import BridgeUnavailable, Busy, NotFound
from core.runtime.updates import PauseView, RunUpdate
from core.store.models import MessageStatus, PauseStatus

START = datetime(2026, 1, 1, tzinfo=UTC)


def update(status: MessageStatus = MessageStatus.RUNNING, **state: object) -> RunUpdate:
    fields: dict[str, object] = {"first_at": START, "last_at": START + timedelta(seconds=42)}
    fields.update(state)
    return RunUpdate(run_id="r1", session_id=1, user_message_id=10, message_id=11, status=status,
                     state=ThinkingState(**fields), model_id="fast")  # type: ignore[arg-type]


def fences_balanced(text: str) -> bool:
    return len(re.findall(r"^```", text, flags=re.MULTILINE)) % 2 == 0


def test_the_live_embed_shows_status_tool_todos_tools_and_thinking() -> None:
    running = update(
        thinking=ThinkingText().append("Let me look this up."),
        status=CurrentStatus("searching the web", StatusSource.STATUS),
        tools=(ToolCall("c1", "todo", "{}", "ok", finished=True), ToolCall("c2", "search", '{"q":"x"}')),
        todos=(Todo("1", "find sources", "completed"), Todo("2", "write", "in_progress")),
    )
    part = live_part(running, note="↪️ New branch")
    embed = part.embed.to_dict()
    assert embed["description"].startswith("🔧 Running search")
    assert "Let me look this up." in embed["description"]
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert fields["🔧 Current tool"] == '**search**\n`{"q":"x"}`'
    assert fields["📝 Todos"] == "☑ find sources\n▶ write"
    assert fields["🧰 Recent tools"] == "✓ todo\n… search"
    assert embed["footer"]["text"] == "42s · 2 tool calls · 1/2 todos · model fast"
    assert embed["author"]["name"] == "↪️ New branch"
    assert [b.custom_id for b in part.buttons] == ["hermes:stop:r1"]


def test_a_long_answer_splits_within_limits_with_controls_on_the_last_part() -> None:
    code = "```python\n" + "\n".join(f"x_{n} = {n}" for n in range(600)) + "\n```"
    text = "Intro paragraph.\n\n" + code + "\n\nThe end."
    done = update(MessageStatus.SUCCESS, final_text=text)
    parts = turn_parts(done, TurnContext(Versions(2, 3, previous_id=5, next_id=7)))
    descriptions = [p.embed.description or "" for p in parts]
    assert len(parts) == 3 and all(len(d) <= 4096 for d in descriptions)
    assert all(fences_balanced(d) for d in descriptions)
    assert descriptions[2].startswith("```python") and descriptions[-1].endswith("The end."), "reopened"
    assert [bool(p.buttons) for p in parts] == [False, False, True]
    labels = [(b.label, b.custom_id, b.disabled) for b in parts[-1].buttons]
    assert labels == [("Regenerate", "hermes:regen:11", False), ("◀", "hermes:ver:5", False),
                      ("2/3", "hermes:noop:pos", True), ("▶", "hermes:ver:7", False),
                      ("", "hermes:rate:11:good", False), ("", "hermes:rate:11:bad", False)]
    assert [b.emoji for b in parts[-1].buttons[-2:]] == ["👍", "👎"]
    assert sum(len(p.embed) for p in parts[-1:]) <= 6000


def test_the_answers_footer_says_time_tool_calls_todos_model_and_skill() -> None:
    done = replace(update(
        MessageStatus.SUCCESS, final_text="Done.",
        tools=(ToolCall("c1", "search", "{}", "ok", finished=True),),
        todos=(Todo("1", "find sources", "completed"), Todo("2", "write", "pending")),
    ), skill_folder="readme-gen")
    (part,) = turn_parts(done, TurnContext())
    assert part.embed.footer.text == "42s · 1 tool call · 1/2 todos · model fast · skill readme-gen"


def test_beyond_a_few_parts_the_whole_answer_is_attached() -> None:
    text = "\n\n".join("word " * 700 for _ in range(8))
    parts = turn_parts(update(MessageStatus.SUCCESS, final_text=text), TurnContext())
    assert len(parts) == MAX_PARTS
    assert parts[-1].file is not None and parts[-1].file.data == text.encode()
    assert "attached" in (parts[-1].embed.description or "")


def test_a_failed_run_is_one_part_with_its_reason_and_a_retry_offer() -> None:
    failed = RunUpdate(run_id="r1", session_id=1, user_message_id=10, message_id=11,
                       status=MessageStatus.FAILED, state=ThinkingState(), error="the LLM is down")
    (part,) = turn_parts(failed, TurnContext(branched=True))
    assert part.embed.description == "⚠️ Failed: the LLM is down"
    assert [(b.label, b.style, b.custom_id) for b in part.buttons] == [
        ("Retry", "primary", "hermes:regen:11")], "Retry regenerates; nothing to show as thinking"
    assert part.embed.author.name == "↪️ New branch: answering your edited message"


def test_a_switcher_at_the_first_version_disables_the_left_arrow() -> None:
    done = update(MessageStatus.SUCCESS, final_text="hi", thinking=ThinkingText().append("x"))
    (part,) = turn_parts(done, TurnContext(Versions(1, 2, next_id=12)))
    assert [(b.label, b.disabled) for b in part.buttons] == [
        ("Regenerate", False), ("◀", True), ("1/2", True), ("▶", False), ("Show thinking", False),
        ("", False), ("", False)]  # 👍 / 👎, on a row of their own
    assert [b.row for b in part.buttons[-2:]] == [1, 1]
    assert len({b.custom_id for b in part.buttons}) == 7, "custom ids are unique in a message"


def test_a_switcher_at_the_last_version_disables_the_right_arrow() -> None:
    done = update(MessageStatus.SUCCESS, final_text="hi", thinking=ThinkingText().append("x"))
    (part,) = turn_parts(done, TurnContext(Versions(2, 2, previous_id=11)))
    assert [(b.label, b.disabled) for b in part.buttons][:4] == [
        ("Regenerate", False), ("◀", False), ("2/2", True), ("▶", True)]


def pause(status: PauseStatus = PauseStatus.UNANSWERED, choices: tuple[str, ...] = ("red", "blue"),
          **extra: object) -> PauseView:
    return PauseView(7, "c1", "Which colour?", choices, status, **extra)  # type: ignore[arg-type]


def test_a_question_has_a_button_per_choice_and_custom_answer() -> None:
    long = "x" * 120
    part = clarify_part(pause(choices=("red", long)))
    assert [(b.label, b.custom_id) for b in part.buttons] == [
        ("red", "hermes:pick:7:0"), ("x" * 79 + "…", "hermes:pick:7:1"),
        ("Custom answer…", "hermes:custom:7")]
    many = clarify_part(pause(choices=tuple(str(n) for n in range(40))))
    assert len(many.buttons) == MAX_CHOICES + 1 == 25


def test_an_answered_or_closed_question_has_no_buttons() -> None:
    answered = clarify_part(pause(PauseStatus.ANSWERED, answer="blue", answered_by="42"))
    assert "✅ answered by <@42>: blue" in (answered.embed.description or "") and not answered.buttons
    closed = clarify_part(pause(), run_finished=True)
    assert "closed" in (closed.embed.description or "") and not closed.buttons
    assert refusal(pause(PauseStatus.ANSWERED, answer="blue", answered_by="admin")) == (
        "This question was already answered by admin: blue")
    assert "expired" in refusal(pause(PauseStatus.EXPIRED))


def test_thinking_pages_turn_with_arrows() -> None:
    state = ThinkingState(thinking=ThinkingText().append("thought. " * 1500),
                          tools=(ToolCall("c1", "search", '{"q":"x"}', "found", finished=True),))
    pages = thinking_pages(state)
    # the tool calls come first, on a page of their own here, then the thinking stream
    assert len(pages) == 5 and all(len(p) <= 3900 for p in pages) and "✓ **search**" in pages[0]
    middle = thinking_page(pages, 1, 11)
    assert [(b.custom_id, b.disabled) for b in middle.buttons] == [
        ("hermes:page:11:0", False), ("hermes:page:11:2", False)]
    first = thinking_page(pages, 0, 11)
    assert first.buttons[0].disabled and first.embed.footer.text == "Page 1 of 5"


def test_refusals_say_why() -> None:
    busy = refusal_part(Busy("session 1 is busy"), "r9")
    assert "still working" in (busy.embed.description or "")
    assert busy.buttons[0].custom_id == "hermes:stop:r9"
    assert "unreachable" in refusal_text(BridgeUnavailable("connection refused"))
    assert refusal_text(NotFound("unknown model 'x'")) == "🔎 Unknown model 'x'"
    assert refusal_text(CannotAnswerHere("🔒 no", can_send=True)) == "🔒 no"
    assert "went wrong" in refusal_text(RuntimeError("bug"))
    granted = discord.Permissions(send_messages=True, view_channel=True)
    assert missing_permissions(granted, ("view_channel", "create_public_threads", "embed_links")) == [
        "Create Public Threads", "Embed Links"]


def test_fit_lines_says_how_many_were_left_out() -> None:
    lines = [f"line {n}" for n in range(300)]
    text = fit_lines(lines, 100)
    assert len(text) <= 100 and text.endswith("more") and text.startswith("line 0\nline 1")


def parsed(custom_id: str) -> tuple[type[ActionItem], dict[str, str]] | None:
    """The item whose template takes the custom id, with its arguments (as discord.py parses it)."""
    found = [(item, match.groupdict()) for item in (*ITEMS, AnswerSubmitted)
             if (match := item.__discord_ui_compiled_template__.fullmatch(custom_id))]
    assert len(found) <= 1, f"{custom_id!r} is taken by {len(found)} items"
    return found[0] if found else None


def test_custom_ids_round_trip_and_stay_within_100_characters() -> None:
    custom_id = ids.encode(ids.Action.CHOICE, 123456789012345, 3)
    assert parsed(custom_id) == (Choice, {"pause": "123456789012345", "index": "3"})
    assert parsed("hermes:stop:" + "a" * 32) == (Stop, {"run": "a" * 32})
    assert parsed("somebody-else:button") is None and parsed("hermes:nope:1") is None


def test_every_custom_id_the_bot_has_posted_is_taken_by_one_item() -> None:
    """Buttons posted before this version still work: each of their ids has its item."""
    posted = {"hermes:regen:11": Regenerate, "hermes:ver:5": Version, "hermes:noop:pos": Label,
              "hermes:rate:11:good": Feedback, "hermes:pick:7:0": Choice,
              "hermes:custom:7": CustomAnswer, "hermes:answer:7": AnswerSubmitted,
              "hermes:think:11": ShowThinking, "hermes:page:11:2": ThinkingPage,
              "hermes:summary:3": ShowSummary, "hermes:stop:r9": Stop,
              "hermes:model:3": ModelSelect, "hermes:skill:3": SkillSelect}
    assert {custom_id: (parsed(custom_id) or (None,))[0] for custom_id in posted} == posted
    try:
        ids.encode(ids.Action.STOP, "x" * 100)
    except ValueError:
        pass
    else:
        raise AssertionError("a custom id over 100 characters must be refused")
