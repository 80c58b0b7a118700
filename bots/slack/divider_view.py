"""The compaction divider (pure): "Earlier messages were summarised", the summary a click away."""

from __future__ import annotations

from . import ids
from .blocks import Payload, actions, button, divider, section

SUMMARISED = "Earlier messages were summarised"


def render_divider(summary_id: int) -> Payload:
    return Payload(SUMMARISED, [
        divider(), section(f"🗜️ _{SUMMARISED} to keep the conversation within the model's context._"),
        actions(button("Show summary", ids.SHOW_SUMMARY, ids.pack(summary_id))), divider(),
    ])
