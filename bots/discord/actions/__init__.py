"""Clicks and the Custom answer modal: one `DynamicItem` per action (discord.py's own hook).

discord.py matches a click's custom id against each item's `template` (registered with
`client.add_dynamic_items` in `setup_hook`), builds the item from the match (its groups are
the action's arguments: the database keys a click needs, so buttons posted before a restart
still work) and calls `interaction_check`, then `callback`. `ActionItem` holds what every
action shares: `interaction_check` refuses a click naming another conversation
(`core.conversation.bindings`) and, for actions on a turn, one by somebody who may not act on
it (the policy, with the turn's asker: `core.conversation.policy`), privately and before
anything changes; `callback` runs the action inside the error boundary. Handlers acknowledge
within Discord's 3 seconds (they defer first when the work may take longer).

The items: `turn` (Regenerate and Retry, ◀ ▶, Stop, 👍 / 👎), `clarify` (the question's
choices, Custom answer… and its modal), `approvals` (a tool approval's decisions: who may
decide is the runtime's rule, `pool.decide` with the policy), `thinking` (Show thinking and
its pages, a compaction's summary); the model and skill menus live with their commands
(commands.py), and the label between ◀ and ▶ (`Label`) here.

discord.py routes neither a modal submission it did not open nor a click on a button the
message no longer has (a second click racing the edit that removed it):
`on_unrouted_interaction` sends both through the same items.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

import discord

from bots.discord import ids
from bots.discord.boundary import interaction_boundary, tell
from bots.discord.inbound import component_data
from bots.discord.services import DiscordServices, services_of
from core.conversation import bindings, policy
from core.conversation.refusals import ELSEWHERE
from core.conversation.vocabulary import ClarifyOutcome, Platform
from core.errors import NotFound

ID = r"[0-9]{1,20}"
RUN = r"[0-9A-Za-z_-]{1,64}"
NEVER = r"(?!)"  # the shared base is never registered


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
            await policy.check_act(services.intake.policy, str(interaction.user.id),
                                   await self.asker_of(), session_id)

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
        return await policy.asker_of_message(self.number("message"))


class OnPause(ActionItem, template=NEVER):
    """An action on a clarify question or a tool approval (`pause` group): for the turn's asker."""

    on_turn = True

    async def session_of(self) -> int | None:
        return await bindings.session_of_pause(self.number("pause"))

    async def asker_of(self) -> str | None:
        return await policy.asker_of_pause(self.number("pause"))

    @staticmethod
    async def settled(interaction: discord.Interaction, services: DiscordServices,
                      outcome: ClarifyOutcome, refused: str) -> None:
        """Show the pause as it now is; tell the clicker `refused` if their answer was not taken."""
        if interaction.channel_id is not None:  # also when the run is not driven by this process
            services.follower.pauses.show(outcome.pause, False, interaction.channel_id)
        if not outcome.accepted:
            await tell(interaction, refused)


class Label(ActionItem, template=ids.pattern(ids.Action.NOOP, side=r"[a-z]+")):
    """A disabled label such as "2/3": nothing to do."""

    async def run(self, interaction: discord.Interaction, services: DiscordServices) -> None:
        await interaction.response.defer()


async def on_unrouted_interaction(interaction: discord.Interaction,
                                  items: tuple[type[ActionItem], ...]) -> None:
    """A modal submission of the bot, or a click on a component its message no longer has,
    through the item of `items` (the bot's components and modals) whose template matches (as
    discord.py would); anything else of ours (a retired button) is acknowledged and changes
    nothing."""
    custom_id = component_data(interaction.data).custom_id
    if not custom_id.startswith("hermes:") or interaction.type not in ROUTED:
        return
    for cls in items:
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

