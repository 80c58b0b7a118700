"""Slack's own parts of a turn's versions: the compaction divider's summary and the Show
thinking modal. Regenerate, the "◀ 2/2 ▶" switcher and editing a message are the conversation
contract's (tests/bots/contract), on both platforms."""

from __future__ import annotations

from bots.slack import ids
from tests.bots.slack.harness import Harness
from tests.fakes.fake_bridge import FakeBridge, ev
from tests.fakes.slack_payloads import CHANNEL_ID, make_block_action


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
