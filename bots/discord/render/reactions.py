"""The reaction on the person's message while the bot works on it: 👀 once its run is
running (a run queued for a free slot gets it when it starts), then ✅ answered or ❌ failed;
a stopped run only loses its 👀 (the answer says "Stopped"; a stop is not a failure). Put on
the message by bots/discord/delivery/reactions.py.
"""

from __future__ import annotations

from core.conversation.vocabulary import MessageStatus

WORKING, ANSWERED, FAILED = "👀", "✅", "❌"
# The mark of each status ("" none); a status not here (queued) changes nothing.
MARKS = {
    MessageStatus.RUNNING: WORKING,
    MessageStatus.SUCCESS: ANSWERED,
    MessageStatus.FAILED: FAILED,
    MessageStatus.STOPPED: "",
}


def mark_of(status: MessageStatus) -> str | None:
    """The reaction a run of `status` shows ("" none), or None: leave it as it is."""
    return MARKS.get(status)
