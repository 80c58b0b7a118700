"""The components: a part's buttons and selects as the view discord.py sends."""

from __future__ import annotations

import discord

from bots.discord.render.parts import Part

STYLES = {
    "primary": discord.ButtonStyle.primary,
    "secondary": discord.ButtonStyle.secondary,
    "success": discord.ButtonStyle.success,
    "danger": discord.ButtonStyle.danger,
}


def view_of(part: Part) -> discord.ui.View | None:
    """The part's components as a view to send (None: no components).

    The view is stopped before it is sent: discord.py then keeps nothing for the message
    (an ephemeral one would otherwise hold a 15-minute timer), and clicks still reach the
    DynamicItems registered in `setup_hook` (bots/discord/actions/) by their custom ids.
    """
    if not part.buttons and not part.selects:
        return None
    view = discord.ui.View(timeout=None)
    for select in part.selects:
        options = [discord.SelectOption(label=label[:100], value=value, default=value == select.current)
                   for label, value in select.options]
        view.add_item(discord.ui.Select(custom_id=select.custom_id, placeholder=select.placeholder,
                                        options=options))
    for spec in part.buttons:
        view.add_item(discord.ui.Button(label=spec.label, custom_id=spec.custom_id,
                                        style=STYLES[spec.style], disabled=spec.disabled,
                                        emoji=spec.emoji, row=spec.row))
    view.stop()
    return view
