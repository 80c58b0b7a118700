"""Clicks and the Custom answer modal: one `DynamicItem` per action (discord.py's own hook).

discord.py matches a click's custom id against each item's `template` (registered with
`client.add_dynamic_items` in `setup_hook`), builds the item from the match (its groups are
the action's arguments: the database keys a click needs, so buttons posted before a restart
still work) and calls `interaction_check`, then `callback`. `ActionItem` holds what every
action shares: `interaction_check` refuses a click naming another conversation
(`core.conversation.bindings`) and, for actions on a turn, one by somebody who may not act on
it (the policy, with the turn's asker: `core.conversation.askers`), privately and before
anything changes; `callback` runs the action inside the error boundary. Handlers acknowledge
within Discord's 3 seconds (they defer first when the work may take longer).

discord.py routes neither a modal submission it did not open nor a click on a button the
message no longer has (a second click racing the edit that removed it):
`on_unrouted_interaction` sends both through the same items.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from typing import Any, ClassVar

import discord

from bots.discord import ids
from bots.discord.boundary import interaction_boundary, tell
from bots.discord.delivery import view_of
from bots.discord.inbound import component_data, modal_submission
from bots.discord.render.approval import decided_refusal
from bots.discord.render.clarify import refusal
from bots.discord.render.pages import summary_part, thinking_page, thinking_pages
from bots.discord.render.parts import Part, clip
from bots.discord.services import DiscordServices, services_of
from core.conversation import askers, bindings, feedback, questions, turns, views
from core.conversation.refusals import ELSEWHERE, FINISHED, SWITCH_BUSY
from core.conversation.vocabulary import ClarifyOutcome, PauseStatus, PauseView, Platform
from core.errors import Busy, Conflict, NotFound

ID = r"[0-9]{1,20}"
RUN = r"[0-9A-Za-z_-]{1,64}"
NEVER = r"(?!)"  # the shared base is never registered
ANSWER_FIELD = "answer"
ANSWER_CHARS = 4000


class ActionItem(discord.ui.DynamicItem[discord.ui.Item[Any]], template=NEVER):
    """A component of the bot; subclasses give the template, `session_of`, `run` and, when
    the action is on a turn, `asker_of`."""

    on_turn: ClassVar[bool] = False  # an action on a turn: for its asker and the chat admins

    def __init__(self, item: discord.ui.Item[Any], args: Mapping[str, str] | None = None) -> None:
        super().__init__(item)
        self.args = dict(args or {})

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> ActionItem:
        return cls(item, match.groupdict())

    def number(self, name: str) -> int:
        return int(self.args[name])

    async def session_of(self) -> int | None:
        """The session the custom id names (None: it names nothing; `run` says so)."""
        return None

    async def asker_of(self) -> str | None:
        """Who started the turn this action is on."""
        return None

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        """Refused (privately, in the boundary) unless the click is on this conversation and,
        on a turn, by somebody who may act on it."""
        async with interaction_boundary(interaction, f"interaction {self.custom_id}"):
            await self._check(interaction, services_of(interaction))
            return True
        return False

    async def _check(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        session_id = await self.session_of()
        if session_id is not None and not await _bound_here(session_id, interaction.channel_id):
            raise NotFound(ELSEWHERE)
        if self.on_turn:
            services.intake.policy.check_act(str(interaction.user.id), await self.asker_of())

    async def callback(self, interaction: discord.Interaction) -> None:
        async with interaction_boundary(interaction, f"interaction {self.custom_id}"):
            await self.run(interaction, services_of(interaction))

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        raise NotImplementedError


async def _bound_here(session_id: int, channel_id: int | None) -> bool:
    """Whether the session is bound to channel `channel_id`: a thread, or a DM channel."""
    here = str(channel_id)
    return channel_id is not None and (
        await bindings.is_bound(session_id, Platform.DISCORD, thread=here)
        or await bindings.is_bound(session_id, Platform.DISCORD, channel=here, thread=""))


class OnMessage(ActionItem, template=NEVER):
    """An action whose custom id names a message (`message` group)."""

    async def session_of(self) -> int | None:
        return await bindings.session_of_message(self.number("message"))

    async def asker_of(self) -> str | None:
        return await askers.of_message(self.number("message"))


class OnPause(ActionItem, template=NEVER):
    """An action on a clarify question or a tool approval (`pause` group): for the turn's asker."""

    on_turn = True

    async def session_of(self) -> int | None:
        return await bindings.session_of_pause(self.number("pause"))

    async def asker_of(self) -> str | None:
        return await askers.of_pause(self.number("pause"))

    async def pause(self) -> PauseView:
        return await questions.question(self.number("pause"))

    async def answer(self, interaction: discord.Interaction, services: DiscordServices,
                     pause: PauseView, answer: str) -> None:
        """The first answer wins; anyone later is told, privately, who answered what."""
        outcome = await services.pool.answer(pause.clarify_id, answer, user=str(interaction.user.id),
                                             pause_id=pause.pause_id)
        await self.settled(interaction, services, outcome, refusal(outcome.pause))

    @staticmethod
    async def settled(interaction: discord.Interaction, services: DiscordServices,
                      outcome: ClarifyOutcome, refused: str) -> None:
        """Show the pause as it now is; tell the clicker `refused` if their answer was not taken."""
        if interaction.channel_id is not None:  # also when the run is not driven by this process
            services.updater.pauses.show(outcome.pause, False, interaction.channel_id)
        if not outcome.accepted:
            await tell(interaction, refused)


# --- actions on a turn (for its asker and the chat admins) --------------------------------


class Regenerate(OnMessage, template=ids.pattern(ids.Action.REGENERATE, message=ID)):
    """Regenerate, and Retry on a failed turn: a new version, shown live in the same messages."""

    on_turn = True

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer()
        await turns.regenerate(services.pool, self.number("message"),
                               author=str(interaction.user.id))


class Version(OnMessage, template=ids.pattern(ids.Action.VERSION, message=ID)):
    """◀ ▶: show (and make active) another version of the answer."""

    on_turn = True

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer()
        try:
            message = await turns.switch_version(self.number("message"))
        except Busy:
            await tell(interaction, SWITCH_BUSY)
            return
        await services.updater.route(await views.stored_update(message.id))


class Stop(ActionItem, template=ids.pattern(ids.Action.STOP, run=RUN)):
    """Stop the run, whichever replica drives it."""

    on_turn = True

    async def session_of(self) -> int | None:
        return await bindings.session_of_run(self.args["run"])

    async def asker_of(self) -> str | None:
        return await askers.of_run(self.args["run"])

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer()
        try:
            stopped = await turns.stop_shown(services.pool, self.args["run"])
        except (Conflict, NotFound):
            await tell(interaction, FINISHED)
            return
        if stopped.show_end:
            await services.updater.route(stopped.update)


class Choice(OnPause, template=ids.pattern(ids.Action.CHOICE, pause=ID, index=ID)):
    """A choice button of a clarify question."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer()
        pause = await self.pause()
        await self.answer(interaction, services, pause, questions.choice(pause, self.number("index")))


class CustomAnswer(OnPause, template=ids.pattern(ids.Action.CUSTOM, pause=ID)):
    """"Custom answer…": open the modal (its first response, so nothing slow comes before).
    A question whose run has ended expired with it: no modal, the clicker is told."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        pause = await self.pause()
        if pause.status != PauseStatus.UNANSWERED:
            await tell(interaction, refusal(pause))
            return
        await interaction.response.send_modal(answer_modal(pause.pause_id, pause.question))


class AnswerSubmitted(OnPause, template=ids.pattern(ids.Action.ANSWER, pause=ID)):
    """What was typed in the Custom answer modal (routed by `on_unrouted_interaction`)."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        alone = interaction.message is None  # no message to update: "thinking…" just for them
        await interaction.response.defer(ephemeral=alone, thinking=alone)
        answer = modal_submission(interaction.data).values.get(ANSWER_FIELD, "").strip()
        await self.answer(interaction, services, await self.pause(), answer)


class Decide(OnPause, template=ids.pattern(ids.Action.DECIDE, pause=ID, decision=r"[a-z]{1,10}")):
    """A tool approval's button: Allow once, Allow in this conversation, Always allow, Deny.
    Only the asker or a chat admin decides, whatever CONVERSATION_ACTIONS says, and "Always
    allow" is a chat admin's only: anyone else is refused privately before anything changes."""

    async def _check(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await super()._check(interaction, services)
        services.intake.policy.check_approve(str(interaction.user.id), await self.asker_of(),
                                             self.args["decision"])

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer()
        outcome = await services.pool.decide(None, self.args["decision"], str(interaction.user.id),
                                             services.intake.policy, pause_id=self.number("pause"))
        await self.settled(interaction, services, outcome,
                           decided_refusal(outcome.pause, outcome.reason))


def answer_modal(pause_id: int, question: str) -> discord.ui.Modal:
    """A modal asking for a free answer, not kept in discord.py's store: its submission is
    routed by its custom id, so one opened before a restart still answers after it, and one
    the user closes leaves nothing behind."""
    modal = discord.ui.Modal(title="Answer Hermes", custom_id=ids.encode(ids.Action.ANSWER, pause_id),
                             timeout=None)
    text: discord.ui.TextInput[discord.ui.Modal] = discord.ui.TextInput(
        custom_id=ANSWER_FIELD, style=discord.TextStyle.paragraph, max_length=ANSWER_CHARS)
    modal.add_item(discord.ui.Label(text="Your answer", description=clip(question, 100), component=text))
    modal.stop()  # finished: send_modal will not store it
    return modal


# --- open to everyone in the conversation -------------------------------------------------


class Feedback(OnMessage, template=ids.pattern(ids.Action.FEEDBACK, message=ID, value=r"[a-z]+")):
    """👍 / 👎: the clicker's rating of the answer (one per person, changeable)."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        thanks = await feedback.rate(self.number("message"), Platform.DISCORD,
                                     str(interaction.user.id), self.args["value"])
        await tell(interaction, thanks)


class ShowThinking(OnMessage, template=ids.pattern(ids.Action.THINKING, message=ID)):
    """Show thinking: the whole thinking of an answer, privately, in pages."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        await _show_thinking(interaction, services, self.number("message"), 0)


class ThinkingPage(OnMessage, template=ids.pattern(ids.Action.PAGE, message=ID, page=ID)):
    """◀ ▶ of Show thinking's pages."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer()
        await _show_thinking(interaction, services, self.number("message"), self.number("page"))


class ShowSummary(OnMessage, template=ids.pattern(ids.Action.SUMMARY, message=ID)):
    """The summary behind a compaction's divider, privately."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        summary = await views.summary(self.number("message"))
        await interaction.edit_original_response(**_edit_kwargs(summary_part(summary)))


class Label(ActionItem, template=ids.pattern(ids.Action.NOOP, side=r"[a-z]+")):
    """A disabled label such as "2/3": nothing to do."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer()


async def _show_thinking(interaction: discord.Interaction, services: DiscordServices,
                         message_id: int, page: int) -> None:
    pages = thinking_pages(await views.thinking_of(services.pool, message_id))
    part = thinking_page(pages, page, message_id)
    await interaction.edit_original_response(**_edit_kwargs(part))


def _edit_kwargs(part: Part) -> dict[str, Any]:
    files = [discord.File(io.BytesIO(part.file.data), filename=part.file.filename)] if part.file else []
    return {"embed": part.embed, "view": view_of(part), "attachments": files}


BUTTONS: tuple[type[ActionItem], ...] = (
    Regenerate, Version, Stop, Choice, CustomAnswer, Decide, Feedback, ShowThinking, ThinkingPage,
    ShowSummary, Label)


async def on_unrouted_interaction(interaction: discord.Interaction,
                                  items: tuple[type[ActionItem], ...]) -> None:
    """A modal submission of the bot, or a click on a component its message no longer has,
    through the item whose template matches (as discord.py would); anything else of ours (a
    retired button) is acknowledged and changes nothing."""
    custom_id = component_data(interaction.data).custom_id
    if not custom_id.startswith("hermes:") or interaction.type not in ROUTED:
        return
    candidates: tuple[type[ActionItem], ...] = (*items, AnswerSubmitted)
    for cls in candidates:
        match = cls.__discord_ui_compiled_template__.fullmatch(custom_id)
        if match is not None:
            if not _shown(interaction, custom_id):  # discord.py calls the items it shows
                item = cls(discord.ui.Button(custom_id=custom_id), match.groupdict())
                if await item.interaction_check(interaction):
                    await item.callback(interaction)
            return
    async with interaction_boundary(interaction, f"interaction {custom_id}"):
        await interaction.response.defer()


ROUTED = (discord.InteractionType.component, discord.InteractionType.modal_submit)


def _shown(interaction: discord.Interaction, custom_id: str) -> bool:
    """Whether a click's message still carries the component (a modal has none)."""
    if interaction.type is discord.InteractionType.modal_submit:
        return False
    rows = interaction.message.components if interaction.message else []
    children = [child for row in rows for child in getattr(row, "children", [row])]
    return any(getattr(child, "custom_id", None) == custom_id for child in children)
