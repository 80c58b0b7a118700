"""A message Slack was told was received, whose replica stopped or died before its turn was
written (bots/slack/intake.py, core.edge.event_ledger): Slack never sends it again, so the
next replica handles it again from the ledger (`SlackBot.recover`), taking the first sign the
dead one posted; a message whose turn was written, or whose handling ended, is never handled
twice."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from bots.slack import ids
from bots.slack.delivery.first_sign import SIGN
from core.edge.event_ledger import EventLedger
from core.store.models import ChatMessage, HandledEvent, Role, utc_now
from tests.bots.slack.clocks import FastClock
from tests.bots.slack.harness import Harness, button, has_button, restartable, texts, until
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack import FakeSlack, Message
from tests.fakes.slack_payloads import CHANNEL_ID, make_slack_event
from tests.bridge.harness import RunningBridge
from tests.support.runtime import catalogue_for

STATUS = "assistant.threads.setStatus"
POST = "chat.postMessage"


def later(h: Harness) -> None:
    """The replica's ledger a few minutes on: every event taken so far is past
    INTAKE_RETRY_SECONDS."""
    h.bot.services.ledger = EventLedger(clock=lambda: utc_now() + timedelta(minutes=5))


async def test_a_mention_whose_replica_stopped_before_its_turn_was_written_is_answered_in_its_placeholder(
    db: str, bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path,
    fake_slack: FakeSlack, fast_clock: FastClock,
) -> None:
    fake_slack.refuse(STATUS)  # the first sign is a placeholder
    llm.script(text_reply("Answered by the next replica."))
    async with restartable(bridge.url, catalogue_for(llm, skills_dir), fake_slack, fast_clock) as serve:
        async with serve() as h:
            fake_slack.hang(POST)
            thread = (await h.event("app_mention", text="hi"))["ts"]
            await until(lambda: fake_slack.faults.hanging(POST))
        # The replica stopped with the post on its way; Slack applied it.
        fake_slack.release(POST)
        [sign] = await until(lambda: [m for m in fake_slack.thread(CHANNEL_ID, thread) if m.bot_id])
        assert not await ChatMessage.exists()
        async with serve() as h2:
            assert await h2.bot.recover() == 0  # not yet INTAKE_RETRY_SECONDS old
            later(h2)
            assert await h2.bot.recover() == 1
            [done] = await h2.answered(CHANNEL_ID, thread)
            assert await h2.bot.recover() == 0  # done: never again
    assert [m.ts for m in h2.bot_messages(CHANNEL_ID, thread)] == [done.ts] == [sign.ts]
    assert "Answered by the next replica." in texts(done) and not has_button(done, ids.STOP)
    run = await ChatMessage.get(role=Role.ASSISTANT)
    assert sign.metadata == {"event_type": SIGN, "event_payload": {"run_id": run.run_id}}
    shown_first = Message(CHANNEL_ID, sign.ts, blocks=sign.revisions[0].blocks)
    assert button(shown_first, ids.STOP)["value"] == ids.run_value(run.run_id)  # the Stop it showed
    assert await ChatMessage.filter(role=Role.USER).count() == 1


async def test_a_message_whose_turn_was_written_starts_nothing_when_handled_again(
    h: Harness, llm: ScriptedLLM,
) -> None:
    """A replica killed after writing the turn, before marking its event done."""
    llm.script(text_reply("Once."))
    mention = make_slack_event("app_mention", text="hi")
    assert (await h.post_event(mention)).status_code == 200
    thread = mention["event"]["ts"]
    await h.answered(CHANNEL_ID, thread)
    await until(lambda: HandledEvent.filter(done_at__isnull=False).exists())
    event = await HandledEvent.get()
    assert event.body is None  # a body is kept only while its event is handled
    await HandledEvent.filter(id=event.id).update(done_at=None, body=json.dumps(mention))
    later(h)
    await h.bot.idle()
    calls = len(h.slack.calls)
    assert await h.bot.recover() == 1
    await until(lambda: HandledEvent.filter(done_at__isnull=False).exists())
    await h.bot.idle()
    assert await ChatMessage.filter(role=Role.ASSISTANT).count() == 1
    assert [c.method for c in h.slack.calls[calls:]] == []  # not a word more in the thread


async def test_every_message_event_is_done_when_its_handling_ends(h: Harness, llm: ScriptedLLM) -> None:
    llm.script(text_reply("Here."))
    thread = (await h.event("app_mention", text="hi"))["ts"]
    await h.answered(CHANNEL_ID, thread)
    await h.event("thread_message", thread_ts="1700000000.000100")  # a thread not the bot's
    await h.event("app_mention", text="help")  # a command
    await h.bot.idle()
    assert await HandledEvent.filter(done_at__isnull=True).count() == 0
    assert await HandledEvent.filter(body__isnull=True).count() == 3
    later(h)
    assert await h.bot.recover() == 0


async def test_a_command_is_not_run_again_but_its_author_is_told(h: Harness) -> None:
    """A command may have taken effect before its replica died (a reset run twice would
    lose what was said since): it is never run again on its own; the thread hears why."""
    mention = make_slack_event("app_mention", text="reset")
    await HandledEvent.create(event_key=f"slack:{mention['event_id']}", body=json.dumps(mention))
    later(h)
    assert await h.bot.recover() == 1
    await h.bot.idle()
    [told] = h.bot_messages(CHANNEL_ID, mention["event"]["ts"])
    assert "interrupted `reset`" in texts(told)
    assert not await ChatMessage.exists()
    assert await h.bot.recover() == 0
