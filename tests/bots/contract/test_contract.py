"""The conversation contract: each scenario runs on Slack and on Discord and asserts the
same outcome in core terms (the database, core's result and refusal words). A rule that
drifts on one platform fails there."""

from __future__ import annotations

import logging
from datetime import timedelta
from collections.abc import Awaitable, Callable

import pytest

from core.chat import tree
from core.conversation import commands, refusals
from core.agent.events import Usage
from core.edge.run_quota import RunQuota
from core.errors import BridgeUnavailable
from core.runtime.pool import RunPool
from core.conversation.scheduled_prompts import ScheduledPrompts
from core.conversation.vocabulary import FileReader
from core.store.models import (
    ChatMessage,
    ChatSession,
    ClarifyPause,
    ConversationBinding,
    MessageStatus,
    PauseStatus,
    Platform,
    Role,
    RunOutcome,
    Schedule,
    utc_now,
)
from core.usage import ledger, limits
from core.usage.spenders import Spender
from tests.bots.contract.drivers import Chat
from tests.core.runtime.waiting import until
from tests.fakes.fake_bridge import FakeBridge, Stall, WaitAnswer, ev
from tests.support.contract import (
    answers,
    assistants,
    holding,
    run_starts,
    session,
    started,
    working,
)

Scenario = Callable[[Chat, RunPool, RunPool, FakeBridge], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(function: Scenario) -> Scenario:
    SCENARIOS[function.__name__] = function
    return function


# -- mention, live, answer ------------------------------------------------------------------

@scenario
async def mention_live_answer(chat: Chat, runs: RunPool, other: RunPool, bridge: FakeBridge) -> None:
    bridge.default_script = holding("pondering the question", "Forty-two.")
    conv = await chat.start("the answer?")
    live = await chat.shown(conv, "pondering the question", "stop")
    bridge.release(next(iter(bridge.runs)))
    await chat.shown(conv, "Forty-two.", "regenerate")
    [answer] = await assistants()
    assert (answer.status, answer.content) == (MessageStatus.SUCCESS, "Forty-two.")
    assert [m.content for m in await tree.active_branch(answer.session_id)] == [
        "the answer?", "Forty-two."]
    assert chat.showing(live)
    assert await ConversationBinding.filter(platform=chat.name).count() == 1


# -- clarify ----------------------------------------------------------------------------------

def asks(answer_text: str) -> Callable[[str], list]:
    return lambda run_id: [
        ev("clarify_request", clarify_id=f"c-{run_id}", question="Which colour?",
           choices=["red", "blue"]),
        WaitAnswer(f"c-{run_id}"), ev("done", final_text=answer_text)]


async def answered_question(chat: Chat, bridge: FakeBridge, how: str, answer: str) -> None:
    """Ask "Which colour?" and answer it by `how` (a choice button, or a custom answer): the
    agent gets the answer, and the question shows who answered what, its buttons gone."""
    bridge.default_script = asks("Done.")
    conv = await chat.start("paint it")
    question = await chat.shown(conv, "Which colour?", how)
    assert chat.labels(question) == ["red", "blue", "Custom answer…"]
    if how == "custom":
        modal = await chat.custom_answer(question, answer)
        assert "Which colour?" in modal and "Your answer" in modal
    else:
        await chat.click(question, how)
    await chat.shown(conv, "Done.", "regenerate")
    pause = await ClarifyPause.get()
    assert (pause.status, pause.answer, pause.answered_by) == (
        PauseStatus.ANSWERED, answer, chat.me)
    [run] = bridge.runs.values()
    assert run.answers == {f"c-{run.run_id}": answer}, "the Bridge was given the answer"
    closed = await chat.shown(conv, f"✅ answered by <@{chat.me}>: {answer}")
    assert chat.key(closed) == chat.key(question) and chat.labels(closed) == []


@scenario
async def clarify_by_button(chat: Chat, runs: RunPool, other: RunPool, bridge: FakeBridge) -> None:
    await answered_question(chat, bridge, "choice:1", "blue")


@scenario
async def clarify_by_custom_answer(chat: Chat, runs: RunPool, other: RunPool,
                                   bridge: FakeBridge) -> None:
    await answered_question(chat, bridge, "custom", "teal please")


@scenario
async def a_stopped_runs_question_closes_and_late_clicks_are_told_it_expired(
        chat: Chat, runs: RunPool, other: RunPool, bridge: FakeBridge) -> None:
    """A message while the agent waits for an answer is refused as busy; its Stop ends the
    run, the question closes, and clicks on it (a client that has not seen the edit still
    shows the buttons) are told privately that it expired: no modal, no answer."""
    bridge.default_script = asks("never")
    conv = await chat.start("paint it")
    question = await chat.shown(conv, "Which colour?", "custom")
    await chat.say(conv, "are you there?")
    refusal = await chat.shown(conv, refusals.BUSY, "stop")
    await chat.click(refusal, "stop")
    await chat.shown(conv, "⏹ Stopped", "regenerate")
    closed = await chat.shown(conv, chat.words["question expired"])
    assert chat.key(closed) == chat.key(question) and chat.labels(closed) == []
    await chat.click(question, "choice:0", as_shown=True)
    await chat.click(question, "custom", as_shown=True)
    await chat.told_privately(refusals.QUESTION_EXPIRED, count=2)
    assert chat.modals() == 0, "no modal for a question nobody can answer any more"
    pause = await ClarifyPause.get()
    assert (pause.status, pause.answer) == (PauseStatus.EXPIRED, None)
    assert not bridge.requests_to("POST", "/clarify/") and len(run_starts(bridge)) == 1
    assert await ChatMessage.filter(content="are you there?").count() == 0


# -- regenerate, edit, versions ---------------------------------------------------------------

@scenario
async def regenerate(chat: Chat, runs: RunPool, other: RunPool, bridge: FakeBridge) -> None:
    conv = await started(chat, bridge, answer="Joke one.")
    bridge.default_script = answers("Joke two.")
    await chat.click(await chat.shown(conv, "Joke one.", "regenerate"), "regenerate")
    await chat.shown(conv, "Joke two.", "previous")
    first, second = await assistants()
    assert (first.is_active, second.is_active, second.parent_id) == (False, True, first.parent_id)


@scenario
async def edit_branches(chat: Chat, runs: RunPool, other: RunPool, bridge: FakeBridge) -> None:
    """An edited message is answered in a new branch, in a message of its own that says so;
    the old answer stays as it was, and the agent gets the edited message without the old
    branch."""
    conv = await started(chat, bridge, "what is 2+2?", "Four.")
    old = await chat.shown(conv, "Four.", "regenerate")
    bridge.default_script = answers("Six.")
    await chat.edit_first(conv, "what is 3+3?")
    new = await chat.shown(conv, "Six.", "regenerate")
    assert chat.words["branched"] in chat.showing(new)
    assert chat.posted(conv) == [chat.key(old), chat.key(new)]
    assert "Four." in chat.showing(old)
    users = await ChatMessage.filter(role=Role.USER).order_by("id")
    assert [(u.content, u.is_active, u.branch_order) for u in users] == [
        ("what is 2+2?", False, 0), ("what is 3+3?", True, 1)]
    assert users[0].platform_message_id == users[1].platform_message_id == conv.first
    assert [v.id for v in await tree.versions(users[1].id)] == [users[0].id, users[1].id]
    run = run_starts(bridge)[-1]
    assert (run["user_message"], run["history"]) == ("what is 3+3?", [])


@scenario
async def versions(chat: Chat, runs: RunPool, other: RunPool, bridge: FakeBridge) -> None:
    """Regenerate runs live in the answer's own message, then shows "2/2" with ◀ only; ◀ and
    ▶ switch the version shown there and the branch the conversation goes on from."""
    conv = await started(chat, bridge, "a haiku", answer="Version one.")
    answer = await chat.shown(conv, "Version one.", "regenerate")
    assert not chat.offers(answer, "previous") and not chat.offers(answer, "next")
    assert "2/2" not in str(answer)
    bridge.default_script = holding("rewriting", "Version two.")
    await chat.click(answer, "regenerate")
    live = await chat.shown(conv, "rewriting", "stop")
    bridge.release(list(bridge.runs)[-1])
    second = await chat.shown(conv, "Version two.", "previous")
    assert "2/2" in str(second) and not chat.offers(second, "next")
    assert chat.key(live) == chat.key(second) == chat.key(answer)
    await chat.click(second, "previous")
    back = await chat.shown(conv, "Version one.", "next")
    assert "1/2" in str(back) or "1/2" in chat.showing(back)
    first, other_version = await assistants()
    assert (first.is_active, other_version.is_active) == (True, False)
    assert [m.content for m in await tree.active_branch(first.session_id)] == [
        "a haiku", "Version one."]
    await chat.click(back, "next")
    await chat.shown(conv, "Version two.", "previous")
    assert [m.is_active for m in await assistants()] == [False, True]
    assert [m.content for m in await tree.active_branch(first.session_id)] == [
        "a haiku", "Version two."]
    assert chat.posted(conv) == [chat.key(answer)], "one message, edited"


@scenario
async def a_stored_answer_shows_its_content_of_record(chat: Chat, runs: RunPool, other: RunPool,
                                                    bridge: FakeBridge) -> None:
    conv = await started(chat, bridge, answer="Version one.")
    bridge.default_script = answers("Version two.")
    await chat.click(await chat.shown(conv, "Version one.", "regenerate"), "regenerate")
    second = await chat.shown(conv, "Version two.", "previous")
    first, _ = await assistants()
    await ChatMessage.filter(id=first.id).update(content="Version one, as stored.")
    await chat.click(second, "previous")
    await chat.shown(conv, "Version one, as stored.", "next")


@scenario
async def a_version_switch_waits_for_a_run_of_any_replica(chat: Chat, runs: RunPool,
                                                         other: RunPool, bridge: FakeBridge) -> None:
    conv = await started(chat, bridge, answer="Version one.")
    bridge.default_script = answers("Version two.")
    await chat.click(await chat.shown(conv, "Version one.", "regenerate"), "regenerate")
    second = await chat.shown(conv, "Version two.", "previous")
    bridge.default_script = lambda run_id: [Stall(run_id), ev("done", final_text="late")]
    asker = (await ChatMessage.filter(role=Role.USER).order_by("id").first()).author
    # the same person, through another replica: Stop is theirs (CONVERSATION_ACTIONS=asker)
    running = await other.start((await session()).id, "from another replica", author=asker)
    await chat.click(second, "previous")
    await chat.told(conv, refusals.SWITCH_BUSY)
    assert [m.is_active for m in await assistants()] == [False, True, True]
    bridge.release(running.run_id)


# -- commands ---------------------------------------------------------------------------------

@scenario
async def command_new_keeps_model_and_skill(chat: Chat, runs: RunPool, other: RunPool,
                                            bridge: FakeBridge) -> None:
    conv = await started(chat, bridge)
    old = await session()
    await ChatSession.filter(id=old.id).update(model_id="smart", skill_folder="readme-gen")
    said = await chat.command(conv, "new")
    assert "New conversation" in said
    new = await ChatSession.exclude(id=old.id).get()
    assert (new.model_id, new.skill_folder) == ("smart", "readme-gen")
    bound = await ConversationBinding.filter(platform=chat.name).order_by("-id").first()
    assert bound is not None and bound.session_id == new.id


@scenario
async def command_reset(chat: Chat, runs: RunPool, other: RunPool, bridge: FakeBridge) -> None:
    conv = await started(chat, bridge)
    before = (await session()).hermes_session
    said = await chat.command(conv, "reset")
    assert "reset" in said.lower()
    assert (await session()).hermes_session != before
    assert bridge.requests_to("POST", "/sessions/")


@scenario
async def command_reset_with_the_bridge_failing_is_done_and_says_so(
        chat: Chat, runs: RunPool, other: RunPool, bridge: FakeBridge) -> None:
    conv = await started(chat, bridge)
    before = (await session()).hermes_session
    bridge.fail("reset", 503)
    said = await chat.command(conv, "reset")
    assert "reset" in said.lower() and commands.AGENT_NOT_DROPPED in said
    assert (await session()).hermes_session != before, "the next message starts a fresh agent"
    assert "503" not in said and "/sessions/" not in said


@scenario
async def command_reset_waits_for_a_run_of_any_replica(chat: Chat, runs: RunPool,
                                                       other: RunPool, bridge: FakeBridge) -> None:
    conv = await started(chat, bridge)
    before = (await session()).hermes_session
    bridge.default_script = lambda run_id: [Stall(run_id), ev("done", final_text="late")]
    asker = (await ChatMessage.filter(role=Role.USER).order_by("id").first()).author
    # the same person, through another replica: Stop is theirs (CONVERSATION_ACTIONS=asker)
    running = await other.start((await session()).id, "from another replica", author=asker)
    said = await chat.command(conv, "reset")
    assert refusals.BUSY in said
    assert (await session()).hermes_session == before, "nothing renewed"
    assert not bridge.requests_to("POST", "/sessions/"), "the agent was not dropped"
    bridge.release(running.run_id)


@scenario
async def command_model_and_skill(chat: Chat, runs: RunPool, other: RunPool,
                                  bridge: FakeBridge) -> None:
    conv = await started(chat, bridge)
    assert "Smart" in await chat.command(conv, "model", "smart")
    assert "readme-gen" in await chat.command(conv, "skill", "readme-gen")
    unknown_model = await chat.command(conv, "model", "gpt-99")
    unknown_skill = await chat.command(conv, "skill", "nope")
    assert "Unknown model 'gpt-99'" in unknown_model and "Unknown skill 'nope'" in unknown_skill
    current = await session()
    assert (current.model_id, current.skill_folder) == ("smart", "readme-gen")


@scenario
async def command_export_memory_status(chat: Chat, runs: RunPool, other: RunPool,
                                       bridge: FakeBridge) -> None:
    conv = await started(chat, bridge)
    exported = await chat.command(conv, "export", "json")
    memory = await chat.command(conv, "memory")
    status = await chat.command(conv, "status")
    assert "export" in exported.lower() or "conversation" in exported.lower()
    assert "MEMORY.md" in memory and "USER.md" in memory
    assert "0 running" in status and "0 queued" in status
    hermes = (await session()).hermes_session
    assert bridge.requests_to("GET", f"/sessions/{hermes}/memory")


# -- refusals ---------------------------------------------------------------------------------

@scenario
async def busy_is_refused_with_a_stop_that_works(chat: Chat, runs: RunPool, other: RunPool,
                                                 bridge: FakeBridge) -> None:
    conv, _ = await working(chat, bridge, "long job", "busy…")
    await chat.say(conv, "are you there?")
    refusal = await chat.shown(conv, refusals.BUSY, "stop")
    await chat.click(refusal, "stop")
    [answer] = await assistants()
    await until(runs, answer.run_id, lambda u: u.finished)
    assert (await ChatMessage.get(id=answer.id)).status == MessageStatus.STOPPED
    assert await ChatMessage.filter(content="are you there?").count() == 0
    await chat.shown(conv, "⏹ Stopped", "regenerate")
    await chat.click(refusal, "stop", as_shown=True)  # again, once it is over: told so, privately
    await chat.told_privately(refusals.FINISHED)


@scenario
async def an_edit_while_busy_is_refused_with_a_stop_that_works(
        chat: Chat, runs: RunPool, other: RunPool, bridge: FakeBridge) -> None:
    conv, _ = await working(chat, bridge, "first version", "working")
    await chat.edit_first(conv, "second version")
    refusal = await chat.shown(conv, refusals.EDIT_BUSY, "stop")
    [answer] = await assistants()
    going = runs.view(answer.run_id)
    assert going is not None and not going.finished, "the refused edit leaves the run going"
    await chat.click(refusal, "stop")
    await until(runs, answer.run_id, lambda u: u.finished)
    await chat.shown(conv, "⏹ Stopped", "regenerate")
    assert await ChatMessage.filter(role=Role.USER).values_list("content", flat=True) == [
        "first version"]


@scenario
async def the_live_turns_stop_stops_it(chat: Chat, runs: RunPool, other: RunPool,
                                       bridge: FakeBridge) -> None:
    """The Stop a turn shows while it runs (our button; Slack's native Stop of a streamed
    turn's agent session) stops it, and the turn ends as stopped, not broken."""
    conv, live = await working(chat, bridge, "a long job", "working hard")
    await chat.click(live, "stop")
    [answer] = await assistants()
    await until(runs, answer.run_id, lambda u: u.finished)
    assert (await ChatMessage.get(id=answer.id)).status == MessageStatus.STOPPED
    assert bridge.runs[answer.run_id].aborted and runs.active() == []
    stopped = await chat.shown(conv, "⏹ Stopped", "regenerate")
    assert chat.posted(conv) == [chat.key(live)] == [chat.key(stopped)], "the same message"


@scenario
async def stop_works_for_a_run_of_another_replica(chat: Chat, runs: RunPool, other: RunPool,
                                                  bridge: FakeBridge) -> None:
    conv = await started(chat, bridge)
    bridge.default_script = holding("elsewhere")
    # started on the other replica for the person who asked first: they may stop it from here
    asker = await ChatMessage.filter(role=Role.USER).order_by("id").first().values_list(
        "author", flat=True)
    running = await other.start((await session()).id, "from another replica", author=asker)
    await chat.say(conv, "and now?")
    refusal = await chat.shown(conv, refusals.BUSY, "stop")
    await chat.click(refusal, "stop")
    await until(other, running.run_id, lambda u: u.finished)
    stopped = await ChatMessage.get(id=running.message_id)
    assert (stopped.status, stopped.error) == (MessageStatus.STOPPED, "Stopped.")
    assert bridge.runs[running.run_id].aborted


@scenario
async def queued_shows_its_position(chat: Chat, runs: RunPool, other: RunPool,
                                    bridge: FakeBridge) -> None:
    """Beyond the cap (one run here) a turn shows its place in the line, status counts it,
    and it runs once a slot is free."""
    bridge.default_script = lambda run_id: [Stall("hold"), ev("done", final_text="done")]
    first = await chat.start("first job")
    await chat.shown(first, "", "stop")
    second = await chat.start("second job")
    await chat.shown(second, "⏳ Queued (#1 in line)")
    queued = [u for u in runs.active() if u.status == MessageStatus.QUEUED]
    assert [u.position for u in queued] == [1]
    status = await chat.command(first, "status")
    assert "1 running" in status and "1 queued" in status
    bridge.release("hold")
    await chat.shown(first, "done", "regenerate")
    await chat.shown(second, "done", "regenerate")


@scenario
async def bridge_down_is_said(chat: Chat, runs: RunPool, other: RunPool,
                              bridge: FakeBridge) -> None:
    conv = await started(chat, bridge)
    bridge.fail("memory", status=503, times=10)
    said = await chat.command(conv, "memory")
    assert refusals.BRIDGE_DOWN in said and "🔌 The agent service is unreachable right now" in said


@scenario
async def a_model_or_skill_gone_from_the_catalogue_is_refused(
        chat: Chat, runs: RunPool, other: RunPool, bridge: FakeBridge) -> None:
    """The conversation's model or skill went away (the catalogue changed): a message is
    refused in the conversation, nothing half-written, nothing run."""
    conv = await started(chat, bridge)
    await ChatSession.all().update(model_id="retired")
    await chat.say(conv, "still there?")
    await chat.shown(conv, "🔎 Unknown model 'retired' (models: fast, smart)")
    await ChatSession.all().update(model_id="fast", skill_folder="retired-skill")
    await chat.say(conv, "and now?")
    await chat.shown(conv, "Unknown skill 'retired-skill'")
    assert await ChatMessage.filter(role=Role.USER).values_list("content", flat=True) == ["hello"]
    assert len(run_starts(bridge)) == 1


@scenario
async def over_quota_is_refused(chat: Chat, runs: RunPool, other: RunPool,
                                bridge: FakeBridge) -> None:
    conv = await started(chat, bridge)
    runs.quota = RunQuota(1)
    bridge.default_script = answers("Second.")
    await chat.say(conv, "one more")
    await chat.shown(conv, "Second.", "regenerate")
    await chat.say(conv, "and another")
    said = await chat.shown(conv, "the most allowed per person")
    assert "⚠️ You have started 1 runs in the last minute" in chat.showing(said)
    assert await ChatMessage.filter(content="and another").count() == 0


# Each spend limit, what the earlier call spent of it (1,100 tokens, $0.50), and its words.
LIMITED = [(key, 1000 if key[2] == "tokens" else 0.25) for key in limits.KEYS]


@scenario
async def each_spend_limit_is_refused_saying_which_when_it_resets_and_who_raises_it(
        chat: Chat, runs: RunPool, other: RunPool, bridge: FakeBridge) -> None:
    """Who asked, the channel or the workspace spent what a limit allows: the next message is
    refused in the thread, naming the limit, its reset and who can raise it; nothing runs."""
    conv = await started(chat, bridge)
    binding = await ConversationBinding.get()
    asker = (await ChatMessage.filter(role=Role.USER).first()).author
    spender = Spender(str(binding.platform), binding.workspace, binding.channel, asker or "")
    call = Usage(seq=1, at=utc_now(), model="fast", prompt_tokens=1000, completion_tokens=100,
                 cost=0.5)
    await ledger.record(ledger.Call(1, "earlier", 1, spender, call))
    place = "server" if binding.platform == "discord" else "workspace"
    for key, amount in LIMITED:
        runs.limits = limits.SpendLimits({key: amount})
        await chat.say(conv, f"and under {limits.setting_name(key)}?")
        used, allowed = ("1,100 tokens", "1,000 tokens") if key[2] == "tokens" else ("$0.50", "$0.25")
        who, may = {"user": ("You have", "you may"), "channel": ("This channel has", "it may"),
                    "workspace": (f"This {place} has", "it may")}[key[0]]
        verb = "use" if key[2] == "tokens" else "spend"
        refusal = f"{who} used {used} of the {allowed} {may} {verb} a {key[1]}, so I did not answer"
        words = chat.showing(await chat.shown(conv, refusal))
        assert words.startswith(f"🪙 {refusal}. It resets ")
        assert words.endswith("; the bot's operators can raise it.")
    assert await ChatMessage.filter(content__startswith="and under").count() == 0
    assert len(run_starts(bridge)) == 1


@scenario
async def a_run_over_a_spend_limit_is_stopped_at_its_next_step_saying_why(
        chat: Chat, runs: RunPool, other: RunPool, bridge: FakeBridge) -> None:
    usage = ev("usage", model="fast", prompt_tokens=1000, completion_tokens=100)
    bridge.default_script = lambda run_id: [
        ev("step", iteration=1), usage, ev("step", iteration=2), Stall(run_id),
        ev("done", final_text="Never shown.")]
    runs.limits = limits.SpendLimits({("user", "day", "tokens"): 1000})
    conv = await chat.start("a long job")
    said = await chat.shown(conv, "so I stopped this answer")
    assert "You have used 1,100 tokens of the 1,000 tokens you may use a day" in chat.showing(said)
    answer = await ChatMessage.get(role=Role.ASSISTANT)
    assert answer.status == MessageStatus.FAILED and "the bot's operators" in (answer.error or "")


@pytest.mark.parametrize("name", SCENARIOS)
async def test_conversation_contract(name: str, chat: Chat, runs: RunPool, other_replica: RunPool,
                                     fake_bridge: FakeBridge) -> None:
    await SCENARIOS[name](chat, runs, other_replica, fake_bridge)


# -- the Bridge down: plain words for people, the details in the log ---------------------------

def asks_approval(answer_text: str) -> Callable[[str], list]:
    return lambda run_id: [
        ev("approval_request", approval_id=f"a-{run_id}", command="rm -rf /tmp/x",
           reason="recursive delete", choices=["once", "deny"]),
        WaitAnswer(f"a-{run_id}"), ev("done", final_text=answer_text)]


INTERNALS = ("Hermes Bridge", "/runs/", "/clarify/", "503", "127.0.0.1", "injected")


@pytest.mark.parametrize(("asking", "shown", "control", "route"), [
    (asks, "Which colour?", "choice:1", "/clarify/c-{run_id}/answer"),
    (asks_approval, "rm -rf /tmp/x", "approve", "/runs/{run_id}/approval"),
], ids=["clarify", "approval"])
async def test_with_the_bridge_down_a_click_is_told_in_plain_words(
    asking: Callable[[str], Callable[[str], list]], shown: str, control: str, route: str,
    chat: Chat, runs: RunPool, fake_bridge: FakeBridge, caplog: pytest.LogCaptureFixture,
) -> None:
    fake_bridge.default_script = asking("Done.")
    conv = await chat.start("paint it")
    question = await chat.shown(conv, shown, control)
    fake_bridge.fail(route.split("/")[-1], 503)
    with caplog.at_level(logging.INFO):
        await chat.click(question, control)
        await chat.told(conv, refusals.BRIDGE_DOWN)
    leaked = [text for text in chat.said(conv) for word in INTERNALS if word in text]
    assert leaked == [], "the Bridge's status, route or address was shown to people"
    [run_id] = fake_bridge.runs
    details = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING
               and "503" in r.getMessage() and route.format(run_id=run_id) in r.getMessage()]
    assert details, "the log has what the Bridge answered"
    await chat.click(await chat.shown(conv, shown, control), control)  # the Bridge is back
    await chat.shown(conv, "Done.", "regenerate")


async def test_with_the_bridge_down_a_message_fails_in_plain_words(
    chat: Chat, runs: RunPool, fake_bridge: FakeBridge, caplog: pytest.LogCaptureFixture
) -> None:
    fake_bridge.fail("run", 503, times=50)
    with caplog.at_level(logging.WARNING):
        conv = await chat.start("anyone there?")
        failed = await chat.shown(conv, "⚠️ Failed", "retry")
    assert f"⚠️ Failed: {BridgeUnavailable.PUBLIC}" in chat.showing(failed)
    leaked = [text for text in chat.said(conv) for word in INTERNALS if word in text]
    assert leaked == [], "the Bridge's status, route or address was shown to people"
    assert any("503" in r.getMessage() and "/run" in r.getMessage() for r in caplog.records)


# -- a scheduled prompt's thread ----------------------------------------------------------------

async def test_a_schedules_thread_is_a_conversation_of_its_author(
    chat: Chat, runs: RunPool, fake_bridge: FakeBridge
) -> None:
    """Scheduled with the platform's own command in the channel: at its time (an injected
    clock) a new thread starts with the prompt's run, as the author's message, answered live
    and finished with its buttons; a reply in the thread continues it as any conversation."""
    fake_bridge.default_script = answers("Three pull requests are open.", "Two were closed.")
    said = await chat.schedule("every weekday at 9:00", "Summarize the open pull requests")
    assert "⏰ Scheduled #" in said and "At 09:00, Monday through Friday (UTC)" in said
    [schedule] = await Schedule.all()
    assert (schedule.author, schedule.timezone) == (chat.me, "UTC")
    assert schedule.next_run_at is not None
    due = schedule.next_run_at + timedelta(seconds=1)
    prompts = ScheduledPrompts(runs, FileReader(), clock=lambda: due)
    prompts.serve(Platform(chat.name.split("-")[0]), chat.scheduled_threads())
    [run] = await prompts.due()
    assert run.outcome == RunOutcome.STARTED, run.detail
    conv = chat.opened(run.thread)
    assert "Summarize the open pull requests" in conv.first_text
    await chat.shown(conv, "Three pull requests are open.", "regenerate")
    await chat.say(conv, "and the closed ones?")
    await chat.shown(conv, "Two were closed.", "regenerate")
    branch = await tree.active_branch(run.session_id)
    assert [(m.content, m.author) for m in branch if m.role == Role.USER] == [
        ("Summarize the open pull requests", chat.me), ("and the closed ones?", chat.me)]
    assert await prompts.due() == []  # fired once
