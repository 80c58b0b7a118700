"""Clicks: where every click enters, who may act, and whether it belongs here.

`click_listener` acks at once, then runs the work in a tracked task whose refusals and
errors reach only the user who clicked. Every click on a turn enters here, so this is where
"who may act" is asked: a listener that acts on a turn names its gate (the turn its click acts
on: an answer, a run, a question), and a click by anyone but the turn's asker (under
CONVERSATION_ACTIONS=asker, and not a chat admin) is refused with NotYours before its work
changes anything (core.conversation.policy).

The listeners: `turn` (Stop, Regenerate, ◀ ▶, 👍 / 👎), `clarify` (the question's buttons
and modal), `approvals` (a tool approval's decisions: who may decide is the runtime's rule,
`pool.decide` with the policy), `thinking` (Show thinking, a compaction's summary); the model and skill menus
live with their commands (commands.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from slack_bolt.async_app import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext

from core.conversation import bindings, views
from core.conversation.refusals import ELSEWHERE
from core.conversation.vocabulary import ChatMessage, Platform, Policy
from core.errors import NotFound

from ..inbound import Click, is_dm
from ..intake import to_clicker, typed
from ..services import SlackServices

Work = Callable[[Click], Awaitable[None]]
Gate = Callable[[Policy, Click], Awaitable[None]]  # NotYours unless the clicker may act on its turn
Listener = Callable[[AsyncAck, AsyncBoltContext], Awaitable[None]]


def click_listener(services: SlackServices, work: Work, what: str,
                   gate: Gate | None = None) -> Listener:
    """A listener for `work`; with `gate`, only the turn's asker and the admins may click."""
    async def gated(clicked: Click) -> None:
        if gate is not None:
            await gate(services.policy, clicked)
        await work(clicked)

    async def listener(ack: AsyncAck, context: AsyncBoltContext) -> None:
        await ack()
        clicked = typed(context, Click)
        services.background.spawn(gated(clicked), to_clicker(services.sender, clicked), what)
    return listener


# --- belongs to this conversation ---------------------------------------------------------
# A click acts only on the conversation it was clicked in (`core.conversation.bindings`).
#
# Buttons and menus carry database ids (message, pause, run, session) so they work after a
# restart; a request that names an id of another conversation (another thread or channel, or a
# conversation `/hermes new` replaced) is refused before anything changes.

async def check_session(clicked: Click, session_id: int | None) -> None:
    """NotFound unless session `session_id` is bound to the channel (and thread) of the click.
    A click outside any thread (the menu a slash command answers with) names only a channel.
    None (the id named nothing) is left to the handler, which says so."""
    if session_id is None:
        return
    thread = clicked.thread_ts if clicked.thread_ts and not is_dm(clicked.channel or "") else None
    if not clicked.channel or not await bindings.is_bound(
            session_id, Platform.SLACK, workspace=clicked.team, channel=clicked.channel,
            thread=thread):
        raise NotFound(ELSEWHERE)


async def message_here(clicked: Click, message_id: int) -> ChatMessage:
    """The message `message_id`, if it is of the click's conversation."""
    message = await views.stored_message(message_id)
    await check_session(clicked, message.session_id)
    return message


async def pause_here(clicked: Click, pause_id: int) -> None:
    """NotFound unless the clarify question `pause_id` was asked in the click's conversation."""
    await check_session(clicked, await bindings.session_of_pause(pause_id))


async def run_here(clicked: Click, run_id: str) -> None:
    """NotFound unless run `run_id` answers in the click's conversation."""
    await check_session(clicked, await bindings.session_of_run(run_id))
