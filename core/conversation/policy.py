"""Who may act on a turn and who may talk, as the front ends ask it (the rules themselves are
`core.chat.policy`'s: the run pool asks them too, below this layer).

A click on a turn names an answer, a run or a question; the turn's asker is found from it and
the clicker admitted by the policy (the asker and the chat admins, or anyone under
`CONVERSATION_ACTIONS=anyone`), else refused with NotYours before anything changes. A person who
may not talk is told so once per conversation, whichever replica hears them.
"""

from __future__ import annotations

from core.chat import policy as rules
from core.chat.policy import Policy
from core.chat.sessions import ThreadKey


async def asker_of_message(message_id: int) -> str | None:
    """Who started the turn a message belongs to (None: nobody on a platform wrote it)."""
    return await rules.asker_of_message(message_id)


async def asker_of_run(run_id: str) -> str | None:
    """Who started the turn a run answers."""
    return await rules.asker_of_run(run_id)


async def asker_of_pause(pause_id: int) -> str | None:
    """Who started the turn that asked a clarify question or a tool approval."""
    return await rules.asker_of_pause(pause_id)


async def check_act_on_message(policy: Policy, user: str, message_id: int) -> None:
    """NotYours unless `user` may act on the turn of a message (its question or its answer),
    as the policy of its conversation's channel settings says."""
    channel = await rules.settings_of_message(message_id)
    policy.in_channel(channel).check_act(user, await asker_of_message(message_id))


async def check_act_on_run(policy: Policy, user: str, run_id: str) -> None:
    """NotYours unless `user` may act on the turn a run answers."""
    channel = await rules.settings_of_run(run_id)
    policy.in_channel(channel).check_act(user, await asker_of_run(run_id))


async def check_act_on_question(policy: Policy, user: str, pause_id: int) -> None:
    """NotYours unless `user` may act on the turn that asked a clarify question."""
    message_id = await rules.message_of_pause(pause_id)
    channel = await rules.settings_of_message(message_id) if message_id is not None else {}
    policy.in_channel(channel).check_act(user, await asker_of_pause(pause_id))


async def check_act(policy: Policy, user: str, asker: str | None,
                    session_id: int | None) -> None:
    """NotYours unless `user` may act on a turn `asker` started in the session (as its
    channel settings' who may act says)."""
    channel = await rules.settings_of_session(session_id) if session_id is not None else {}
    policy.in_channel(channel).check_act(user, asker)


async def first_refusal(key: ThreadKey, user: str) -> bool:
    """Whether `user`, who may not talk, is refused for the first time in the conversation
    `key` (recorded now, in the database): then they are told NOT_ALLOWED."""
    return await rules.first_refusal(key, user)
