"""Every `/hermes` command, with autocomplete and the select menus, on the fake Bridge."""

from __future__ import annotations

import json

import pytest

from core.conversation import commands as conversation_commands
from core.conversation.refusals import BRIDGE_DOWN, INTERNAL
from core.runtime.pool import RunPool
from core.store.models import ChatSession, ConversationBinding
from tests.bots.discord.harness import (
    answered,
    bot_messages,
    mention,
    refused_acknowledgements,
    reply_of,
    running_bot,
    text_of,
)
from tests.fakes.discordfake import FakeDiscord, InteractionRecord, ManualClock
from tests.fakes.fake_bridge import FakeBridge
from tests.fakes.changes import WAIT


async def conversation(fake: FakeDiscord, text: str = "hello") -> int:
    """A thread with one finished turn; its id."""
    asked = await fake.send_user_message(mention(fake, text))
    await fake.wait_until(lambda: answered(fake, asked["id"], "done"), WAIT, "the answer")
    return int(asked["id"])


def ephemeral(fake: FakeDiscord, record: InteractionRecord) -> bool:
    return bool(fake.message(record.original_message_id)["flags"] & 64)


async def test_model_and_skill_with_autocomplete_menus_and_refusals(
    fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge
) -> None:
    async with running_bot(fake, fake_runs):
        thread = await conversation(fake)
        models = await fake.autocomplete("hermes", "model", focused="name", options={"name": "sm"},
                                         channel_id=thread)
        skills = await fake.autocomplete("hermes", "skill", focused="name", options={"name": "read"},
                                         channel_id=thread)
        await fake.wait_for_response(models)
        await fake.wait_for_response(skills)
        chosen = await reply_of(fake, await fake.run_command(
            "hermes", "model", options={"name": "smart"}, channel_id=thread))
        unknown = await reply_of(fake, await fake.run_command(
            "hermes", "model", options={"name": "gpt-99"}, channel_id=thread))
        skill = await reply_of(fake, await fake.run_command(
            "hermes", "skill", options={"name": "readme-gen"}, channel_id=thread))
        no_skill = await reply_of(fake, await fake.run_command(
            "hermes", "skill", options={"name": "none"}, channel_id=thread))
        skill_again = await reply_of(fake, await fake.run_command(
            "hermes", "skill", options={"name": "readme-gen"}, channel_id=thread))
        no_such_skill = await reply_of(fake, await fake.run_command(
            "hermes", "skill", options={"name": "no-such-skill"}, channel_id=thread))
        menu_command = await fake.run_command("hermes", "model", channel_id=thread)
        menu = await reply_of(fake, menu_command)
        select = menu["components"][0]["components"][0]
        picked = await fake.click(menu["id"], select["custom_id"], component_type=3, values=["fast"])
        await fake.wait_for_response(picked)
        await fake.send_user_message("and again", channel_id=thread)
        await fake.wait_until(lambda: len(fake_bridge.requests_to("POST", "/run")) == 2, WAIT)

    smart = {"name": "Smart (smart)", "value": "smart"}
    assert models.response == {"type": 8, "data": {"choices": [smart]}}
    readme = {"name": "readme-gen", "value": "readme-gen"}
    assert skills.response == {"type": 8, "data": {"choices": [readme]}}
    assert "now uses **Smart**" in text_of(chosen) and not chosen["flags"] & 64
    assert "✋ Unknown model 'gpt-99' (models: fast, smart)" in text_of(unknown) and unknown["flags"] & 64
    assert "skill **readme-gen**" in text_of(skill) and "skill **readme-gen**" in text_of(skill_again)
    assert "now uses no skill" in text_of(no_skill)
    assert "✋ Unknown skill 'no-such-skill'" in text_of(no_such_skill) and no_such_skill["flags"] & 64
    assert [o["value"] for o in select["options"]] == ["fast", "smart"] and menu["flags"] & 64
    assert "now uses **Fast**" in text_of(fake.message(menu["id"]))
    session = await ChatSession.get()
    assert (session.model_id, session.skill_folder) == ("fast", "readme-gen")
    run = fake_bridge.requests_to("POST", "/run")[-1].body
    assert run["model"]["name"] == "small-model" and "README" in run["system_prompt"]


async def test_export_memory_status_and_reset(
    fake: FakeDiscord, fake_runs: RunPool, fake_bridge: FakeBridge
) -> None:
    async with running_bot(fake, fake_runs):
        thread = await conversation(fake, "remember the milk")
        session = await ChatSession.get()
        fake_bridge.memory[session.hermes_session] = {"memory": "likes milk", "user": "alice"}
        export = await reply_of(fake, await fake.run_command("hermes", "export", channel_id=thread))
        as_json = await reply_of(fake, await fake.run_command(
            "hermes", "export", options={"format": "json", "branch": "all"}, channel_id=thread))
        memory = await reply_of(fake, await fake.run_command("hermes", "memory", channel_id=thread))
        status = await reply_of(fake, await fake.run_command("hermes", "status", channel_id=thread))
        reset = await reply_of(fake, await fake.run_command("hermes", "reset", channel_id=thread))
        fake_bridge.fail("memory", 503, times=10)
        memory_down = await reply_of(fake, await fake.run_command("hermes", "memory",
                                                                  channel_id=thread))

    (md,) = export["attachments"]
    assert md["filename"].endswith(".md") and b"remember the milk" in fake.attachment(md["id"])
    document = json.loads(fake.attachment(as_json["attachments"][0]["id"]))
    assert "remember the milk" in json.dumps(document)
    assert "likes milk" in text_of(memory) and "alice" in text_of(memory) and memory["flags"] & 64
    assert "Idle" in text_of(status) and "0 running · 0 queued" in text_of(status)
    assert "♻️ Reset" in text_of(reset) and "starts afresh" in text_of(reset)
    assert fake_bridge.requests_to("POST", f"/sessions/{session.hermes_session}/reset")
    # the Bridge down: said in plain words (the contract's bridge_down_is_said), privately
    assert text_of(memory_down) == BRIDGE_DOWN and memory_down["flags"] & 64
    assert (await ChatSession.get()).hermes_session != session.hermes_session


async def test_new_starts_a_fresh_conversation_in_a_thread_a_channel_and_a_dm(
    fake: FakeDiscord, fake_runs: RunPool
) -> None:
    dm = fake.dm_channel_id()
    async with running_bot(fake, fake_runs):
        thread = await conversation(fake)
        in_thread = await reply_of(fake, await fake.run_command("hermes", "new", channel_id=thread))
        await fake.send_user_message("a fresh start", channel_id=thread)
        await fake.wait_until(lambda: len(bot_messages(fake, thread)) == 3, WAIT, "answer in thread")
        in_channel = await reply_of(fake, await fake.run_command("hermes", "new"))
        await fake.send_user_message("hi", channel_id=dm)
        await fake.wait_until(lambda: answered(fake, dm, "done"), WAIT, "dm answer")
        in_dm = await reply_of(fake, await fake.run_command("hermes", "new", channel_id=dm))

    assert "New conversation started." in text_of(in_thread)
    (opened,) = [t for t in fake.threads_of(fake.channel_id) if int(t["id"]) != thread]
    assert f"<#{opened['id']}>" in text_of(in_channel)
    assert "New conversation started." in text_of(in_dm)
    bindings = {(b.channel, b.thread): b.session_id for b in await ConversationBinding.all()}
    assert bindings[(str(fake.channel_id), str(thread))] == 2, "the thread moved to session 2"
    assert (str(fake.channel_id), opened["id"]) in bindings and bindings[(str(dm), "")] == 5
    assert await ChatSession.all().count() == 5


async def test_commands_where_they_cannot_work_say_why(fake: FakeDiscord, fake_runs: RunPool) -> None:
    other = fake.add_text_channel("elsewhere")
    async with running_bot(fake, fake_runs, channels=(str(fake.channel_id),)):
        nothing = await reply_of(fake, await fake.run_command("hermes", "export"))
        elsewhere = await reply_of(fake, await fake.run_command("hermes", "status", channel_id=other))
        status = await reply_of(fake, await fake.run_command("hermes", "status"))
    assert "There is no conversation here yet" in text_of(nothing) and nothing["flags"] & 64
    assert "I don't answer in this channel." in text_of(elsewhere)
    assert "No conversation here" in text_of(status)


@pytest.mark.parametrize(("command", "method", "said"), [
    ("memory", "GET", "What the agent remembers"), ("reset", "POST", "starts afresh")])
async def test_a_command_whose_work_is_slow_is_acknowledged_within_three_seconds(
    fake_runs: RunPool, fake_bridge: FakeBridge, command: str, method: str, said: str
) -> None:
    """The Bridge takes 10 s (on Discord's clock) to answer: Discord forgets an interaction
    not acknowledged within 3 s, so the bot defers first and answers when the work is done."""
    clock = ManualClock()
    gate = fake_bridge.hold(command)
    async with FakeDiscord(clock=clock) as fake, fake.patch_discord():
        async with running_bot(fake, fake_runs):
            used = await fake.run_command("hermes", command, channel_id=fake.dm_channel_id())
            await fake.wait_until(lambda: fake_bridge.requests_to(method, "/sessions/"), WAIT,
                                  "the Bridge call")
            assert used.response is not None and used.response["type"] == 5, "deferred at once"
            clock.advance(10.0)
            gate.set()
            reply = await reply_of(fake, used)
    assert said in text_of(reply)
    assert refused_acknowledgements(fake) == []


async def test_a_command_that_fails_is_answered_once_by_the_trees_on_error(
    fake: FakeDiscord, fake_runs: RunPool, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: object) -> None:
        raise RuntimeError("a bug in status")

    monkeypatch.setattr(conversation_commands, "status", broken)
    async with running_bot(fake, fake_runs):
        told = await reply_of(fake, await fake.run_command(
            "hermes", "status", channel_id=fake.dm_channel_id()))
    assert text_of(told) == INTERNAL and told["flags"] & 64
    (failure,) = [r for r in caplog.records if r.name == "bots.discord.boundary"]
    assert failure.levelname == "ERROR" and failure.exc_info is not None
    assert "a bug in status" in str(failure.exc_info[1])
