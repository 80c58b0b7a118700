"""Every refusal is a clear message in the thread: cap reached, Bridge down, unknown model."""

from __future__ import annotations

from core.models import ChatSession
from tests.bots.slack.harness import Harness, texts, until
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.fakes.slack_payloads import CHANNEL_ID


async def test_beyond_the_cap_a_run_shows_its_place_in_the_queue(fh: Harness, fake_bridge: FakeBridge) -> None:
    fake_bridge.default_script = lambda run_id: [Stall("go"), ev("done", final_text="done")]
    threads = [(await fh.event("app_mention", text=f"job {n}"))["ts"] for n in range(3)]  # cap is 2
    queued = await until(lambda: [m for t in threads for m in fh.bot_messages(CHANNEL_ID, t)
                                  if "Queued (#1 in line)" in texts(m)])
    assert len(queued) == 1  # which of the three waits depends on who took a slot first
    fake_bridge.release("go")
    for thread in threads:
        await fh.answered(CHANNEL_ID, thread)


async def test_a_bridge_that_is_down_fails_the_turn_with_a_reason(fh: Harness, fake_bridge: FakeBridge) -> None:
    await fake_bridge.stop()
    thread = (await fh.event("app_mention", text="anyone there?"))["ts"]
    [failed] = await fh.answered(CHANNEL_ID, thread)
    assert "⚠️ Failed: The agent service is unreachable" in texts(failed)


async def test_an_unknown_model_is_refused_in_the_thread(fh: Harness, fake_bridge: FakeBridge) -> None:
    thread = (await fh.event("app_mention", text="hello"))["ts"]
    await fh.answered(CHANNEL_ID, thread)
    await ChatSession.all().update(model_id="retired-model")
    await fh.event("thread_message", text="still there?", thread_ts=thread)
    refusal = await until(lambda: [m for m in fh.bot_messages(CHANNEL_ID, thread) if "Unknown model" in m.text])
    assert "'retired-model'" in refusal[0].text
