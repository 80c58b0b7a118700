"""A scheduled time claimed by a `serve` killed (SIGKILL) while it posted the time's prompt:
the next `serve` takes the claim over (INTAKE_RETRY_SECONDS after it was made) and runs the
time, once (core/conversation/scheduled_prompts.py)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from core.chat import schedules
from core.chat.schedules import NewSchedule, Where
from core.store.models import ChatMessage, Platform, Role, RunOutcome, Schedule, ScheduleRun, utc_now
from tests.bots.slack.harness import texts
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack_payloads import CHANNEL_ID, TEAM_ID
from tests.support.durable import kill_9, world
from tests.support.replicas import about, finished_in_slack, replica, resolved, until

POST = "chat.postMessage"


async def test_kill_9_while_posting_a_scheduled_prompt_loses_no_time_and_runs_it_once(
    db: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    llm.script(text_reply("Two pull requests are open.", match=about("pull requests")))
    async with world(db, llm, tmp_path) as w:
        schedule = await schedules.create(NewSchedule(
            Where(Platform.SLACK, TEAM_ID, CHANNEL_ID), "U0ALICE", "Count the open pull requests",
            "every day at 9:00"), utc_now())
        # its last time came while nothing ran (run_once): it is run as a replica starts
        missed = schedules.recurrence(schedule).latest(utc_now() - timedelta(days=2), utc_now())
        await Schedule.filter(id=schedule.id).update(next_run_at=missed)
        settings = {**w.settings, "INTAKE_RETRY_SECONDS": "1"}
        w.slack.hang(POST)  # the prompt's post, held: the claim is made, the thread not yet open
        async with replica("first", tmp_path, settings) as first:
            await until(lambda: resolved(w.slack.faults.hanging(POST)), "the prompt on its way", first)
            await kill_9(w, first)  # the claim left unsettled
        [claim] = await ScheduleRun.all()
        assert (claim.outcome, claim.thread) == (RunOutcome.CLAIMED, "")
        async with replica("second", tmp_path, settings) as second:
            [root] = await until(lambda: resolved([m for m in w.slack.history(CHANNEL_ID)
                                                   if m.bot_id and not m.thread_ts]),
                                 "the prompt posted by the next serve", second)
            [done] = await until(lambda: resolved(finished_in_slack(w.slack, root.ts)),
                                 "the scheduled run answered", second)
            await until(lambda: ScheduleRun.filter(outcome=RunOutcome.STARTED).exists(),
                        "the time recorded started", second)
        assert "claimed by a replica that stopped before starting it" in second.output()
    assert "Count the open pull requests" in root.text
    assert "Two pull requests are open." in texts(done)
    [run] = await ScheduleRun.all()
    assert (run.id, run.thread) == (claim.id, root.ts)
    user = await ChatMessage.get(role=Role.USER)
    assert (user.author, user.session_id) == ("U0ALICE", run.session_id)
    assert run.run_id == (await ChatMessage.get(role=Role.ASSISTANT)).run_id
