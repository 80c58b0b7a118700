"""Who may act on a turn and who may talk to the bot: the rule both adapters ask."""

from __future__ import annotations

import pytest

from core.chat import policy, sessions
from core.chat.policy import ActionMode, Policy
from core.chat.sessions import ThreadKey
from core.config import Settings
from core.conversation.refusals import ADMIN_ONLY, refusal_text
from core.errors import AdminOnly, InvalidInput, NotYours
from core.store.models import ChatMessage, ClarifyPause, Platform
from tests.core.chat.tree_helpers import answer, user_turn


def test_asker_mode_admits_the_asker_and_the_admins_only() -> None:
    rule = Policy.of("asker", admins=["UADMIN"])
    assert rule.may_act("U1", "U1") and rule.may_act("UADMIN", "U1")
    assert not rule.may_act("U2", "U1")
    assert not rule.may_act("U2", None) and rule.may_act("UADMIN", None)
    with pytest.raises(NotYours) as refused:
        rule.check_act("U2", "U1")
    assert refused.value.code == "not_yours" and refused.value.asker == "U1"


def test_anyone_mode_admits_everybody() -> None:
    rule = Policy.of("anyone")
    assert rule.actions is ActionMode.ANYONE
    assert rule.may_act("U2", "U1") and rule.may_act("U2", None)


@pytest.mark.parametrize("actions", ["asker", "anyone"])
def test_a_tool_approval_is_the_askers_or_an_admins_whatever_the_mode(actions: str) -> None:
    rules = Policy.of(actions, admins=["UADMIN"])
    for decision in ("once", "session", "deny"):
        rules.check_approve("UASKER", "UASKER", decision)
        rules.check_approve("UADMIN", "UASKER", decision)
        with pytest.raises(NotYours):
            rules.check_approve("UOTHER", "UASKER", decision)
        with pytest.raises(NotYours):  # a turn nobody on a platform started: admins only
            rules.check_approve("UOTHER", None, decision)
    rules.check_approve("UADMIN", None, "always")
    with pytest.raises(AdminOnly):
        rules.check_approve("UASKER", "UASKER", "always")
    with pytest.raises(NotYours):
        rules.check_approve("UOTHER", "UASKER", "always")


def test_who_may_talk() -> None:
    assert Policy.of().may_talk("anybody"), "no lists: everyone"
    rule = Policy.of(admins=["UADMIN"], allowed_users=["U1"], allowed_roles=["42"])
    assert rule.may_talk("U1") and rule.may_talk("UADMIN")
    assert rule.may_talk("U9", roles=[7, 42]) and not rule.may_talk("U9", roles=[7])
    assert not rule.may_talk("U9")


def test_settings_name_the_bad_value() -> None:
    settings = Settings.from_env({"CONVERSATION_ACTIONS": "Anyone", "CHAT_ADMINS": "U1, U2",
                                  "ALLOWED_USERS": "U3", "DISCORD_ALLOWED_ROLES": "99"})
    assert settings.policy == Policy(ActionMode.ANYONE, frozenset({"U1", "U2"}),
                                     frozenset({"U3"}), frozenset({"99"}))
    assert Settings().policy.actions is ActionMode.ASKER
    with pytest.raises(InvalidInput, match="CONVERSATION_ACTIONS"):
        Settings.from_env({"CONVERSATION_ACTIONS": "everyone"})


async def test_the_asker_of_a_turn_is_the_author_of_its_user_message(db: str) -> None:
    session = await sessions.create_session()
    question = await user_turn(session.id, "hi")
    await ChatMessage.filter(id=question.id).update(author="U1")
    reply = await answer(session.id, question, "hello")
    pause = await ClarifyPause.create(run_id=reply.run_id, message_id=reply.id,
                                      clarify_id="c-policy", question="which?")
    assert await policy.asker_of_message(question.id) == "U1"
    assert await policy.asker_of_message(reply.id) == "U1"
    assert await policy.asker_of_run(reply.run_id) == "U1"
    assert await policy.asker_of_pause(pause.id) == "U1"
    assert await policy.asker_of_message(10**9) is None
    assert await policy.asker_of_run("no-such-run") is None


async def test_a_refused_person_is_told_once_per_conversation_by_any_replica(db: str) -> None:
    here = ThreadKey(Platform.DISCORD, "1", "2", "3")
    elsewhere = ThreadKey(Platform.DISCORD, "1", "2", "4")
    assert await policy.first_refusal(here, "bob")
    assert not await policy.first_refusal(here, "bob"), "the row is shared: a restart or replica"
    assert await policy.first_refusal(elsewhere, "bob") and await policy.first_refusal(here, "eve")
    assert not await policy.first_refusal(elsewhere, "bob")


def test_an_admin_only_refusal_says_what_to_do_instead() -> None:
    assert refusal_text(AdminOnly("only a chat admin may always allow a command")) == ADMIN_ONLY
    assert "once or in this conversation" in ADMIN_ONLY
