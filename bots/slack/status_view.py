"""`/hermes status` and `/hermes memory` as messages (pure)."""

from __future__ import annotations

from core.bridge.types import Memory
from core.conversation.commands import Status
from core.presenting import status_line

from .blocks import Payload, clip, section
from .mrkdwn import escape

MEMORY_CHARS = 2800


def status_payload(status: Status) -> Payload:
    lines = [f"*Runs:* {status.running} running, {status.queued} queued"]
    session = status.session
    if session is not None:
        mine = status.current
        lines.append(f"*This conversation:* {escape(status_line(mine)) if mine else 'idle'}")
        lines.append(f"*Model:* `{escape(session.model_id or 'default')}` · "
                     f"*Skill:* `{escape(session.skill_folder or 'none')}`")
    text = "\n".join(lines)
    return Payload(text, [section(text)])


def memory_payload(memory: Memory) -> Payload:
    parts = [("What the agent remembers (MEMORY.md)", memory.memory),
             ("What it knows about you (USER.md)", memory.user)]
    blocks = [section(f"*{title}*\n{escape(clip(body.strip(), MEMORY_CHARS)) or '_empty_'}")
              for title, body in parts]
    return Payload("The agent's memory", blocks)
