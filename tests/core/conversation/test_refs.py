"""Each platform keeps its own part of a row's platform_refs and never drops another's."""

from __future__ import annotations

from bots.discord.refs import DiscordRefs
from bots.discord.refs import Slot as DiscordSlot
from bots.slack import refs as slack_refs
from bots.slack.refs import Posted, Slot
from core.chat import sessions, tree
from core.conversation import refs
from core.store.models import ChatMessage, ClarifyPause, MessageStatus


async def test_both_platforms_merge_their_refs_of_a_pause_and_a_turn(db: str) -> None:
    session = await sessions.create_session()
    user = await tree.append_user(session.id, "q", platform_refs={"other": {"id": 7}})
    answer = await tree.append_assistant(session.id, user.id, status=MessageStatus.RUNNING,
                                         run_id="r1")
    pause = await ClarifyPause.create(run_id="r1", message_id=answer.id, clarify_id="c1",
                                      question="?", choices=[], platform_refs={"other": {"id": 8}})

    await slack_refs.save_pause_message(pause.id, Posted("T1", "C1", "1.2"))
    await DiscordRefs().save_pause(pause.id, {"channel": "9", "message": "10"})
    await slack_refs.save_slot(answer.id, Slot("T1", "C1", "1.0", "1.1"))

    stored = (await ClarifyPause.get(id=pause.id)).platform_refs
    assert stored == {"other": {"id": 8}, "slack": {"team": "T1", "channel": "C1", "ts": "1.2"},
                      "discord": {"channel": "9", "message": "10"}}
    assert await slack_refs.pause_message(pause.id) == Posted("T1", "C1", "1.2")
    turn = (await ChatMessage.get(id=user.id)).platform_refs  # a turn's record: its user message
    assert turn["other"] == {"id": 7} and turn["slack"]["ts"] == "1.1"
    assert (await ChatMessage.get(id=answer.id)).platform_refs is None


async def test_a_turn_is_recorded_on_its_user_message_for_every_platform(db: str) -> None:
    """One place: each platform records and finds a turn's messages on its user message,
    whether it names that message or a version of its answer (Regenerate, ◀ ▶ share them)."""
    session = await sessions.create_session()
    user = await tree.append_user(session.id, "q", platform_message_id="55")
    first = await tree.append_assistant(session.id, user.id, status=MessageStatus.SUCCESS,
                                        run_id="r1")
    second = await tree.regenerate(first.id, session.id, run_id="r2")
    slot = Slot("T1", "C1", "1.0", "1.1", final=first.id)

    await slack_refs.save_slot(first.id, slot)
    await DiscordRefs().save_turn(user.id, DiscordSlot(9, [10, 11]))

    stored = (await ChatMessage.get(id=user.id)).platform_refs
    assert set(stored) == {"slack", "discord"}
    for message_id in (user.id, first.id, second.id):
        assert await slack_refs.slot_of(message_id) == slot
        turn = await refs.turn_refs(message_id, "discord")
        assert turn is not None and turn.user_message_id == user.id
        assert turn.refs["messages"] == ["10", "11"]
    found = await DiscordRefs().turn(session.id, user.id)
    assert found is not None and (found.channel_id, found.message_ids) == (9, [10, 11])
    assert await refs.turn_refs(second.id + 1000, "slack") is None


async def test_a_message_and_a_pause_are_read_and_set_by_id_alone(db: str) -> None:
    session = await sessions.create_session()
    user = await tree.append_user(session.id, "q", platform_message_id="55")
    answer = await tree.append_assistant(session.id, user.id, status=MessageStatus.RUNNING,
                                         run_id="r1")
    pause = await ClarifyPause.create(run_id="r1", message_id=answer.id, clarify_id="c1",
                                      question="?", choices=[])

    assert await refs.message_refs(user.id, "discord") == {}
    assert await refs.message_refs(user.id + 1000, "discord") is None  # no such message
    await refs.save_message_refs(user.id, "discord", {"channel": "9"})
    await refs.save_pause_refs(pause.id, "discord", {"message": "10"})

    assert await refs.message_refs(user.id, "discord") == {"channel": "9"}
    assert await refs.pause_refs(pause.id, "discord") == {"message": "10"}
    assert await refs.pause_refs(pause.id + 1000, "discord") == {}
    assert await refs.turn_refs(user.id, "discord") == refs.TurnRefs(user.id, {"channel": "9"},
                                                                      "55", False)
    assert await refs.turn_refs(answer.id, "discord") == refs.TurnRefs(user.id, {"channel": "9"},
                                                                        "55", False)
    assert await refs.turn_refs(user.id + 1000, "discord") is None
