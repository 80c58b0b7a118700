"""What one Discord message of the bot shows, as plain data: an embed, buttons, a file.

Renderers return `Part`s; only the delivery (bots/discord/delivery/) turns them into discord.py
views and REST calls, so rendering stays pure and testable without an event loop.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Literal

import discord

Style = Literal["primary", "secondary", "success", "danger"]
BUTTON_LABEL = 80  # Discord's limit
ROW_WIDTH = 5
ROWS = 5


@dataclass(frozen=True, slots=True)
class ButtonSpec:
    label: str
    custom_id: str
    style: Style = "secondary"
    disabled: bool = False
    emoji: str | None = None
    row: int | None = None


@dataclass(frozen=True, slots=True)
class SelectSpec:
    custom_id: str
    placeholder: str
    options: tuple[tuple[str, str], ...]  # (label, value)
    current: str | None = None


@dataclass(frozen=True, slots=True)
class FilePart:
    filename: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Part:
    embed: discord.Embed
    buttons: tuple[ButtonSpec, ...] = ()
    file: FilePart | None = None
    selects: tuple[SelectSpec, ...] = field(default=())

    def signature(self) -> str:
        """Equal for parts that would look the same: an unchanged part is not sent again."""
        shape = {
            "embed": self.embed.to_dict(),
            "buttons": [[b.label, b.custom_id, b.style, b.disabled, b.emoji, b.row]
                        for b in self.buttons],
            "selects": [[s.custom_id, s.options, s.current] for s in self.selects],
            "file": [self.file.filename, hashlib.sha256(self.file.data).hexdigest()]
                    if self.file else None,
        }
        return json.dumps(shape, sort_keys=True, default=str)


def clip(text: str, limit: int) -> str:
    """`text` within `limit` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fit_lines(lines: list[str], limit: int) -> str:
    """As many whole lines as fit in `limit` characters, saying how many were left out."""
    lines = [clip(line, limit // 2) for line in lines]
    if len("\n".join(lines)) <= limit:
        return "\n".join(lines)
    kept: list[str] = []
    for index, line in enumerate(lines):
        note = f"… and {len(lines) - index} more"
        if len("\n".join([*kept, line, note])) > limit:
            return "\n".join([*kept, note])
        kept.append(line)
    return "\n".join(kept)
