"""Clarify clicks: a choice button, "Custom answer…" (a modal, opened within the trigger's 3 s),
and the modal's submission; what they show is render/clarify.py's. The first answer wins;
later ones learn who answered.
"""

from __future__ import annotations

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from core.conversation import policy, questions
from core.conversation.refusals import EMPTY_ANSWER
from core.conversation.vocabulary import ClarifyOutcome, PauseStatus, PauseView, Policy

from .. import ids, refs
from ..inbound import Click, ViewSubmission
from ..intake import Reply, to_clicker, to_user, typed
from ..render.clarify import custom_answer_modal, not_open
from ..services import SlackServices
from . import click_listener, pause_here


class ClarifyListeners:
    def __init__(self, services: SlackServices) -> None:
        self._services = services

    def register(self, app: AsyncApp) -> None:
        services = self._services
        app.action(ids.CLARIFY_CHOICE_PATTERN)(click_listener(services, self._choose, "clarify choice",
                                                              _on_question))
        app.action(ids.CLARIFY_CUSTOM)(click_listener(services, self._open, "custom answer",
                                                      _on_question))
        app.view(ids.CUSTOM_ANSWER_VIEW)(self.on_submit)

    async def on_submit(self, ack: AsyncAck, context: AsyncBoltContext) -> None:
        """Errors show in the modal (it stays open: a refusal raised here is answered so by
        the error boundary); an accepted answer closes it."""
        submitted = typed(context, ViewSubmission)
        pause, answer = await _submission(submitted, self._services.policy)
        if not answer or pause.status != PauseStatus.UNANSWERED:
            error_text = EMPTY_ANSWER if not answer else not_open(pause)
            await ack(response_action="errors", errors={ids.ANSWER_BLOCK: error_text})
            return
        await ack()
        user, team = submitted.user, submitted.team
        posted = await refs.pause_message(pause.pause_id)
        reply = to_user(self._services.sender, team, posted.channel, user) if posted else _nowhere
        self._services.background.spawn(self._answer(pause, answer, user, reply), reply, "custom answer")

    async def _choose(self, clicked: Click) -> None:
        pause_id, index = ids.unpack(clicked.value, 2)
        await pause_here(clicked, pause_id)
        pause = await questions.clarify_question(pause_id)
        if not 0 <= index < len(pause.choices):
            raise IndexError(f"choice {index} of pause {pause_id}")
        await self._answer(pause, pause.choices[index], clicked.user, to_clicker(self._services.sender, clicked))

    async def _open(self, clicked: Click) -> None:
        (pause_id,) = ids.unpack(clicked.value, 1)
        await pause_here(clicked, pause_id)
        pause = await questions.clarify_question(pause_id)
        if pause.status != PauseStatus.UNANSWERED:
            await to_clicker(self._services.sender, clicked)(not_open(pause))
            return
        await self._services.sender.open_view(clicked.trigger_id, custom_answer_modal(pause.pause_id, pause.question))

    async def _answer(self, pause: PauseView, answer: str, user: str, reply: Reply) -> None:
        outcome: ClarifyOutcome = await self._services.pool.answer(
            pause.clarify_id, answer, user, pause_id=pause.pause_id)
        if not outcome.accepted:
            await reply(not_open(outcome.pause))


async def _on_question(rules: Policy, clicked: Click) -> None:
    """A choice carries the question's pause id and the choice; "Custom answer…" the id."""
    await policy.check_act_on_question(rules, clicked.user, ids.first_id(clicked.value))


async def _submission(modal: ViewSubmission, rules: Policy) -> tuple[PauseView, str]:
    pause_id = ids.unpack(modal.private_metadata, 1)[0]
    await policy.check_act_on_question(rules, modal.user, pause_id)
    answer = modal.value(ids.ANSWER_BLOCK, ids.ANSWER_INPUT).strip()
    return await questions.clarify_question(pause_id), answer


async def _nowhere(text: str) -> None:
    return None
