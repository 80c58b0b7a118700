"""Persistent components: every button and select the bot sends is a DynamicItem.

discord.py matches a click's custom id against these templates (registered in
`setup_hook`), builds the item from the id and calls it, so clicks work after a restart and
nothing is kept in memory per message. The callbacks hand the decoded id to the bot's
actions through `interaction.client`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import discord

from bots.discord import ids
from bots.discord.render.parts import ButtonSpec, Part, SelectSpec

if TYPE_CHECKING:
    from bots.discord.client import HermesClient

STYLES = {
    "primary": discord.ButtonStyle.primary,
    "secondary": discord.ButtonStyle.secondary,
    "success": discord.ButtonStyle.success,
    "danger": discord.ButtonStyle.danger,
}


class ActionButton(discord.ui.DynamicItem[discord.ui.Button], template=ids.template(ids.BUTTONS)):
    """Any button of the bot."""

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ActionButton:
        assert isinstance(item, discord.ui.Button)
        return cls(item)

    async def callback(self, interaction: discord.Interaction[HermesClient]) -> None:
        await interaction.client.hermes.actions.dispatch(interaction, self.custom_id)


class ActionSelect(discord.ui.DynamicItem[discord.ui.Select], template=ids.template(ids.SELECTS)):
    """A select menu of the bot (model, skill)."""

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ActionSelect:
        assert isinstance(item, discord.ui.Select)
        return cls(item)

    async def callback(self, interaction: discord.Interaction[HermesClient]) -> None:
        await interaction.client.hermes.actions.dispatch(interaction, self.custom_id)


def button(spec: ButtonSpec) -> ActionButton:
    return ActionButton(discord.ui.Button(
        label=spec.label, custom_id=spec.custom_id, style=STYLES[spec.style],
        disabled=spec.disabled, emoji=spec.emoji, row=spec.row,
    ))


def select(spec: SelectSpec) -> ActionSelect:
    options = [discord.SelectOption(label=label[:100], value=value, default=value == spec.current)
               for label, value in spec.options]
    return ActionSelect(discord.ui.Select(custom_id=spec.custom_id, placeholder=spec.placeholder,
                                          options=options))


def view_of(part: Part) -> discord.ui.View | None:
    """The part's components as a view to send (None: no components).

    The view is stopped before it is sent: discord.py then keeps nothing for the message
    (an ephemeral one would otherwise hold a 15-minute timer), and clicks still reach the
    DynamicItems registered in `setup_hook`.
    """
    if not part.buttons and not part.selects:
        return None
    view = discord.ui.View(timeout=None)
    for spec in part.selects:
        view.add_item(select(spec))
    for spec in part.buttons:
        view.add_item(button(spec))
    view.stop()
    return view
