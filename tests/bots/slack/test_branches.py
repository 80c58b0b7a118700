"""Versions and branches: Regenerate, the "◀ 2/2 ▶" switcher, editing a message, compaction."""

from __future__ import annotations

import asyncio

from bots.slack import ids
from core import tree
from core.models import ChatMessage, Role
from tests.bots.slack.harness import Harness, button, has_button, texts, until
from tests.fakes.fake_bridge import FakeBridge, ev
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack_payloads import CHANNEL_ID, make_block_action


async def test_regenerate_then_switch_versions(h: Harness, llm: ScriptedLLM) -> None:
    gate = asyncio.Event()
    llm.script(text_reply("First version."), text_reply("Second version.", gate=gate))
    thread = (await h.event("app_mention", text="a haiku"))["ts"]
    [answer] = await h.answered(CHANNEL_ID, thread)
    assert not has_button(answer, ids.PREVIOUS)

    await h.click(answer, ids.REGENERATE)
    await until(lambda: has_button(h.slack.message(CHANNEL_ID, answer.ts), ids.STOP))  # live
    gate.set()
    # The finished answer (its switcher), not a progress edit that already shows the text.
    slot = await until(lambda: (m := h.slack.message(CHANNEL_ID, answer.ts))
                       and has_button(m, ids.POSITION) and "Second version." in texts(m) and m)
    assert len(h.bot_messages(CHANNEL_ID, thread)) == 1  # the same message all along
    assert button(slot, ids.POSITION)["text"]["text"] == "2/2" and not has_button(slot, ids.NEXT)

    await h.click(slot, ids.PREVIOUS)
    back = await until(lambda: (m := h.slack.message(CHANNEL_ID, answer.ts)) and "First version." in texts(m) and m)
    assert button(back, ids.POSITION)["text"]["text"] == "1/2" and has_button(back, ids.NEXT)
    first_id = ids.unpack(button(back, ids.REGENERATE)["value"], 1)[0]
    branch = await tree.active_branch((await ChatMessage.get(id=first_id)).session_id)
    assert [m.content for m in branch] == ["a haiku", "First version."]


async def test_editing_a_message_answers_it_in_a_new_branch(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("Three."), text_reply("Four."))
    mention = await h.event("app_mention", text="what is 1+2?")
    thread = mention["ts"]
    await h.answered(CHANNEL_ID, thread)
    await h.event("message_changed", text="<@U0BOT> what is 2+2?", message_ts=thread,
                  previous_text=mention["text"])
    answers = await h.answered(CHANNEL_ID, thread, count=2)
    edited = answers[1]
    assert "Four." in texts(edited) and "edited message" in texts(edited)
    users = await ChatMessage.filter(role=Role.USER).order_by("id")
    assert [u.content for u in users] == ["what is 1+2?", "what is 2+2?"]
    assert [v.id for v in await tree.versions(users[1].id)] == [users[0].id, users[1].id]
    seen = [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "user"]
    assert seen == ["what is 2+2?"]

    # An unchanged text (an unfurl) and the bot's own edits start nothing.
    await h.event("message_changed", text="<@U0BOT> what is 2+2?", message_ts=thread,
                  previous_text="<@U0BOT> what is 2+2?")
    await h.bot.idle()
    assert await ChatMessage.filter(role=Role.USER).count() == 2


async def test_a_compaction_posts_a_divider_with_the_summary_behind_a_button(
    fh: Harness, fake_bridge: FakeBridge
) -> None:
    fake_bridge.default_script = lambda run_id: [
        ev("text", text="thinking"), ev("context_compacted", summary="We talked about shells.",
                                        compacted_until=0),
        ev("done", final_text="Compact answer."),
    ]
    thread = (await fh.event("app_mention", text="go on"))["ts"]
    await fh.answered(CHANNEL_ID, thread)
    await fh.bot.idle()
    [divider] = [m for m in fh.bot_messages(CHANNEL_ID, thread) if "summarised" in m.text]
    await fh.click(divider, ids.SHOW_SUMMARY, trigger=True)
    [opened] = await fh.slack.wait_for_calls("views.open")
    assert opened.ok and "We talked about shells." in str(opened.args["view"])


async def test_show_thinking_opens_a_paginated_modal(fh: Harness, fake_bridge: FakeBridge) -> None:
    thought = "I wonder about the question at hand, carefully. " * 60
    fake_bridge.default_script = lambda run_id: [
        *(ev("text", text=f"{thought}\n\n") for _ in range(10)),
        ev("tool_start", tool_call_id="t1", tool_name="search", args={"q": "shells"}),
        ev("tool_end", tool_call_id="t1", tool_name="search", result="3 hits"),
        ev("done", final_text="Thought it through."),
    ]
    thread = (await fh.event("app_mention", text="think hard"))["ts"]
    [answer] = await fh.answered(CHANNEL_ID, thread)
    await fh.click(answer, ids.SHOW_THINKING, trigger=True)
    [opened] = await fh.slack.wait_for_calls("views.open")
    modal = opened.args["view"]
    assert opened.ok and "✓ search" in str(modal["blocks"][0]) and "Page 1 of" in str(modal["blocks"])

    view_id = opened.response["view"]["id"]
    next_page = button_in(modal, ids.THINKING_NEXT)
    click = make_block_action(ids.THINKING_NEXT, next_page["value"], channel=CHANNEL_ID)
    await fh.interact({**click, "view": {"id": view_id}, "container": {"type": "view", "view_id": view_id}})
    [updated] = await fh.slack.wait_for_calls("views.update")
    assert updated.ok and "Page 2 of" in str(updated.args["view"]["blocks"])


def button_in(view: dict, action_id: str) -> dict:  # type: ignore[type-arg]
    return next(e for b in view["blocks"] if b["type"] == "actions" for e in b["elements"]
                if e["action_id"] == action_id)
