"""Every Discord message of one assistant turn: the live view while it runs, then the answer.

A turn's messages are shared by all versions of the answer (regenerate, switcher): the first
one is edited in place, extra parts are posted below it and surplus ones deleted.
"""

from __future__ import annotations

from dataclasses import dataclass

import discord

from bots.discord import ids
from bots.discord.render.live import colour, live_part
from bots.discord.render.parts import ButtonSpec, FilePart, Part
from core.conversation.presenting import UsageShown, footer, status_line
from core.conversation.views import Versions
from core.conversation.vocabulary import MessageStatus, RunUpdate
from core.text.splitting import split_markdown

PART_CHARS = 4000  # an embed description holds 4,096; one embed per message stays under 6,000
MAX_PARTS = 4  # beyond this the whole answer is attached as a file
BRANCH_NOTE = "↪️ New branch: answering your edited message"


@dataclass(frozen=True, slots=True)
class TurnContext:
    versions: Versions | None = None
    branched: bool = False
    usage: UsageShown = UsageShown.OFF  # SHOW_USAGE: what the footer says of its model calls


def turn_parts(update: RunUpdate, context: TurnContext) -> list[Part]:
    """The messages of the turn for this state of its run."""
    note = BRANCH_NOTE if context.branched else None
    if not update.finished:
        return [live_part(update, note)]
    if update.status == MessageStatus.SUCCESS:
        return answer_parts(update, context, note)
    embed = discord.Embed(description=status_line(update), colour=colour(update.status))
    if note:
        embed.set_author(name=note)
    embed.set_footer(text=footer(update, context.usage))
    return [Part(embed, controls(update, context))]


def answer_parts(update: RunUpdate, context: TurnContext, note: str | None = None) -> list[Part]:
    """The answer split on paragraph / code-fence boundaries; footer and buttons on the last part."""
    text = update.state.final_text or "*(The agent finished without an answer.)*"
    chunks = split_markdown(text, PART_CHARS)
    file = None
    if len(chunks) > MAX_PARTS:
        chunks = [*chunks[: MAX_PARTS - 1], "📎 The answer goes on: the whole of it is attached."]
        file = FilePart("answer.md", text.encode())
    parts = [Part(discord.Embed(description=chunk, colour=colour(update.status))) for chunk in chunks]
    if note:
        parts[0].embed.set_author(name=note)
    last = parts[-1]
    last.embed.set_footer(text=footer(update, context.usage))
    parts[-1] = Part(last.embed, controls(update, context), file)
    return parts


FEEDBACK_ROW = 1  # 👍 / 👎 under the first row of buttons (a row holds five)


def controls(update: RunUpdate, context: TurnContext) -> tuple[ButtonSpec, ...]:
    """Regenerate (a prominent Retry on a failed turn: the same click), the version switcher
    "◀ 2/3 ▶", Show thinking; under an answer 👍 / 👎."""
    message_id = update.message_id
    again = ids.encode(ids.Action.REGENERATE, message_id)
    if update.status == MessageStatus.FAILED:
        buttons = [ButtonSpec("Retry", again, "primary", emoji="🔁")]
    else:
        buttons = [ButtonSpec("Regenerate", again, emoji="🔄")]
    if context.versions is not None and context.versions.total > 1:
        buttons += switcher(context.versions)
    if len(update.state.thinking) or update.state.tools:
        thinking = ids.encode(ids.Action.THINKING, message_id)
        buttons.append(ButtonSpec("Show thinking", thinking, emoji="💭"))
    if update.status == MessageStatus.SUCCESS:
        buttons += [ButtonSpec("", ids.encode(ids.Action.FEEDBACK, message_id, value), emoji=emoji,
                               row=FEEDBACK_ROW) for value, emoji in (("good", "👍"), ("bad", "👎"))]
    return tuple(buttons)


def switcher(versions: Versions) -> list[ButtonSpec]:
    """◀ n/m ▶: the arrows carry the id of the version they show; ends are disabled."""
    def arrow(label: str, target: int | None, side: str) -> ButtonSpec:
        if target is None:
            return ButtonSpec(label, ids.encode(ids.Action.NOOP, side), disabled=True)
        return ButtonSpec(label, ids.encode(ids.Action.VERSION, target))

    position = f"{versions.position}/{versions.total}"
    return [
        arrow("◀", versions.previous_id, "prev"),
        ButtonSpec(position, ids.encode(ids.Action.NOOP, "pos"), disabled=True),
        arrow("▶", versions.next_id, "next"),
    ]
