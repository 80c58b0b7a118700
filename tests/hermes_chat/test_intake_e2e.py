"""A Slack message acknowledged by a `serve` killed (SIGKILL) before the message's turn was
written, its first sign already posted: Slack never sends it again, and the next `serve`
answers it from the event ledger (INTAKE_RETRY_SECONDS later), in the placeholder the dead one
posted, with the run id that placeholder's Stop named (bots/slack/intake.py)."""

from __future__ import annotations

from pathlib import Path

from bots.slack import ids
from core.store.models import ChatMessage, Role
from tests.bots.slack.harness import has_button, texts
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack_payloads import CHANNEL_ID
from tests.support.durable import kill_9, world
from tests.support.replicas import about, finished_in_slack, replica, resolved, slack_mention, until

POST = "chat.postMessage"


async def test_kill_9_after_the_first_sign_before_the_turn_loses_no_message(
    db: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    llm.script(text_reply("Answered after the kill.", match=about("lighthouse")))
    async with world(db, llm, tmp_path) as w:
        w.slack.refuse("assistant.threads.setStatus")  # the first sign is a placeholder
        settings = {**w.settings, "INTAKE_RETRY_SECONDS": "1"}
        async with replica("first", tmp_path, settings) as first:
            w.slack.hang(POST)
            thread = await slack_mention(w.http, first, "how bright is the lighthouse?")
            await until(lambda: resolved(w.slack.faults.hanging(POST)), "the sign on its way", first)
            await kill_9(w, first)  # the turn never written, nothing marked
        w.slack.release(POST)  # Slack applied the post the dead process never heard back from
        [sign] = await until(lambda: resolved([m for m in w.slack.thread(CHANNEL_ID, thread)
                                               if m.bot_id]), "the placeholder posted")
        assert not await ChatMessage.exists()
        async with replica("second", tmp_path, settings) as second:
            [done] = await until(lambda: resolved(finished_in_slack(w.slack, thread)),
                                 "the message answered by the next serve", second)
    assert done.ts == sign.ts and "Answered after the kill." in texts(done)
    assert [m.ts for m in w.slack.thread(CHANNEL_ID, thread) if m.bot_id] == [sign.ts]
    assert not has_button(done, ids.STOP)
    run = await ChatMessage.get(role=Role.ASSISTANT)
    assert sign.metadata == {"event_type": "hermes_first_sign", "event_payload": {"run_id": run.run_id}}
