"""`/hermes channel …` read and run (the words both platforms take), and what a conversation's
channel settings decide in core: who may talk in it, who may act on its turns and who decides
its tool approvals (a run pool on the fake Bridge)."""

from __future__ import annotations

import pytest

from core.chat import channel_settings, sessions
from core.chat.attachments import FileReader
from core.chat.policy import Policy
from core.chat.sessions import ThreadKey
from core.conversation import channels, policy, turns
from core.errors import ChannelAdminOnly, InvalidInput, NotYours
from core.runtime.pool import RunPool
from core.store.models import ChatSession, ClarifyPause, PauseKind, Platform
from tests.core.runtime.waiting import finished, until
from tests.fakes.fake_bridge import FakeBridge, WaitAnswer, ev

KEY = ThreadKey(Platform.SLACK, "T1", "C1", "1.0")
PLACE = channels.Place.of_key(KEY)
SERVICE = Policy.of("asker", admins=["ADMIN"])


@pytest.mark.parametrize(("words", "command"), [
    (None, channels.ChannelCommand()),
    ("show", channels.ChannelCommand()),
    ("workspace", channels.ChannelCommand(workspace=True)),
    ("set busy_mode queue", channels.ChannelCommand("set", False, "busy_mode", "queue")),
    ("Workspace SET Model fast", channels.ChannelCommand("set", True, "model", "fast")),
    ("set system_prompt Be brief.\nCite the runbook.",
     channels.ChannelCommand("set", False, "system_prompt", "Be brief.\nCite the runbook.")),
    ("unset toolsets", channels.ChannelCommand("unset", False, "toolsets")),
    ("apply", channels.ChannelCommand("apply")),
])
def test_the_words_of_the_command(words: str | None, command: channels.ChannelCommand) -> None:
    assert channels.parse_command(words) == command


@pytest.mark.parametrize("words", ["frobnicate", "set", "set busy_mode", "unset", "apply now"])
def test_words_that_make_no_command_say_how_it_goes(words: str) -> None:
    with pytest.raises(InvalidInput, match="/hermes channel"):
        channels.parse_command(words)


def test_values_as_a_command_writes_them() -> None:
    assert channels.value_of("toolsets", "todo, memory") == ["todo", "memory"]
    assert channels.value_of("allowed_users", "-") == []
    assert channels.value_of("thread_context", "5") == 5
    assert channels.value_of("day_tokens", "1000") == 1000.0
    assert channels.value_of("busy_mode", "QUEUE") == "queue"


async def test_only_a_chat_admin_changes_and_a_bad_value_names_its_key(fake_pool: RunPool) -> None:
    run = channels.run_command
    defaults, catalogue = fake_pool.channel_defaults, fake_pool.catalogue
    with pytest.raises(ChannelAdminOnly):
        await run(defaults, catalogue, frozenset({"ADMIN"}), PLACE, "U1",
                  channels.parse_command("set busy_mode queue"))
    with pytest.raises(InvalidInput, match="`thread_context`"):
        await run(defaults, catalogue, frozenset({"ADMIN"}), PLACE, "ADMIN",
                  channels.parse_command("set thread_context many"))
    reply = await run(defaults, catalogue, frozenset({"ADMIN"}), PLACE, "ADMIN",
                      channels.parse_command("set day_tokens 500"))
    assert reply.public is not None and "<@ADMIN> changed this channel's settings" in reply.public
    assert "`day_tokens` 500" in reply.private
    shown = await run(defaults, catalogue, frozenset(), PLACE, "U1", channels.parse_command(None))
    assert shown.public is None and "`busy_mode`: `refuse` (service)" in shown.private


async def _session_with(settings: dict) -> ChatSession:
    await channel_settings.save(Platform.SLACK, "T1", "C1", settings, "ADMIN")
    session, _ = await sessions.session_for_thread(KEY)
    return session


async def nothing_first(notices: tuple[str, ...]) -> None:
    raise AssertionError(notices)


async def test_who_may_talk_in_a_conversation_is_its_channels(
        fake_pool: RunPool, fake_bridge: FakeBridge) -> None:
    fake_bridge.default_script = lambda run_id: [ev("done", final_text="hi")]
    session = await _session_with({"allowed_users": ["U2"]})
    refused = await turns.take(fake_pool, turns.Arrival(
        session, True, "hello", "U1", "1.0", policy=SERVICE), FileReader(), nothing_first, 0)
    assert refused == turns.Taken(not_allowed=True)
    taken = await turns.take(fake_pool, turns.Arrival(
        session, True, "hello", "U2", "1.1", policy=SERVICE), FileReader(), nothing_first, 0)
    assert taken.run is not None
    await finished(fake_pool, taken.run.run_id)


async def test_who_may_act_and_decide_is_the_channels(
        fake_pool: RunPool, fake_bridge: FakeBridge) -> None:
    fake_bridge.default_script = lambda run_id: [
        ev("approval_request", approval_id=f"a-{run_id}", command="rm -rf /tmp/x",
           reason="recursive delete", choices=["once", "deny"]),
        WaitAnswer(f"a-{run_id}"), ev("done", final_text="done")]
    session = await _session_with({"actions": "anyone", "approvals": "admins"})
    run = await fake_pool.start(session.id, "clean up", author="U1")
    await policy.check_act_on_run(SERVICE, "U3", run.run_id)  # anyone may act here
    await until(fake_pool, run.run_id, lambda u: u.approval is not None)
    pause = await ClarifyPause.get(run_id=run.run_id, kind=PauseKind.APPROVAL)
    with pytest.raises(NotYours):  # but only a chat admin decides, not even the asker
        await fake_pool.decide(pause.clarify_id, "once", "U1", SERVICE)
    await fake_pool.decide(pause.clarify_id, "once", "ADMIN", SERVICE)
    await finished(fake_pool, run.run_id)

