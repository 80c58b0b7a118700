"""What the user reads when something is refused or fails (pure)."""

from __future__ import annotations

from core.errors import BridgeUnavailable, Busy, HermesChatError, InvalidInput, NotFound

BUSY = ("⏳ I'm still working on the previous message in this conversation. "
        "Wait for that answer, or stop it and send your message again.")
BRIDGE_DOWN = "⚠️ The agent service is unreachable right now ({detail}). Please try again in a moment."
NO_WORDS = ("📎 I can only read what a message says, not the files it shares: "
            "tell me in words what you would like me to do.")
INTERNAL = "⚠️ Something went wrong on my side; it was logged. Please try again."


def refusal_text(error: HermesChatError) -> str:
    """One clear sentence for each kind of refusal core raises."""
    if isinstance(error, Busy):
        return BUSY
    if isinstance(error, BridgeUnavailable):
        return BRIDGE_DOWN.format(detail=error.message)
    if isinstance(error, NotFound):
        return f"🔎 {_sentence(error.message)}"
    if isinstance(error, InvalidInput):
        return f"✋ {_sentence(error.message)}"
    return f"⚠️ {_sentence(error.message)}"


def _sentence(message: str) -> str:
    message = message.strip()
    return (message[:1].upper() + message[1:]) if message else "That did not work."
