"""One vocabulary of refusals, beside `core.conversation.presenting`: each adapter lays a refusal out
(a section, an embed, an ephemeral) and adds its controls (a Stop button for a busy
conversation), but says the same thing in the same words.

Plain text with `code` spans only: both platforms render those alike.
"""

from __future__ import annotations

import logging

from core.errors import (
    AdminOnly,
    BridgeUnavailable,
    Busy,
    ChannelAdminOnly,
    HermesChatError,
    InvalidInput,
    NotFound,
    SpendLimitReached,
)
from core.runtime.updates import PauseView
from core.store.models import PauseStatus

BUSY = ("⏳ I'm still working on the previous message in this conversation. "
        "Wait for that answer, or press Stop to end it and send your message again.")
BUSY_CHOICES = (f"{BUSY} Or queue yours to run next, or give it to the answer being written "
                "as guidance.")
QUEUE_IT, STEER_WITH_IT = "Queue it", "Steer with it"  # the busy notice's choices


def chosen(choice: str, who: str) -> str:
    """What a busy notice says once its message's author chose (`who`: as the platform
    mentions them)."""
    if choice == "queue":
        return f"📥 {who} queued their message: it runs after the answer being written."
    return f"🧭 {who} gave their message to the answer being written as guidance."
STEERED = "🧭 Your message reached the answer being written: it will take it into account."
CHANNEL_ONLY_ADMINS = ("🔒 Only a chat admin may change this channel's settings, so nothing "
                       "was changed.")
EDIT_BUSY = ("⏳ I'm still working on this conversation, so your edit was not answered. "
             "Edit the message again once I'm done, or press Stop first.")
SWITCH_BUSY = "⏳ This conversation is still working; switch versions once it is done."
BRIDGE_DOWN = f"🔌 {BridgeUnavailable.PUBLIC}"  # the details go to the log, not to people
INTERNAL = "💥 Something went wrong on my side (it was logged). Please try again."
FINISHED = "That run has already finished."
INTERRUPTED = ("⚠️ A restart interrupted `{command}` before it was answered, and I do not run a "
               "command again on my own. If it did not take effect, please send it again.")
ELSEWHERE = ("That button belongs to another conversation (another thread, or one replaced by "
             "`/hermes new`), so nothing was changed.")
NO_WORDS = ("📎 I read a message's words, images, text files and PDFs, not the other files, "
            "stickers, cards or polls it shares: tell me in words what you would like me to do.")
EMPTY_MENTION = "Hi! Ask me something: mention me with your question."
NO_CONVERSATION = ("There is no conversation here yet: mention me to start one (in a channel it "
                   "gets its own thread), or write to me in a DM.")
NOT_HERE = "I don't answer in this channel."
QUESTION_EXPIRED = "This question has expired: the run that asked it is over."
EMPTY_ANSWER = "Please write an answer."
ADMIN_ONLY = ("🔒 Only a chat admin may always allow a command everywhere, so nothing was "
              "changed. Allow it once or in this conversation instead.")
NOT_ALLOWED = ("🔒 You are not on the list of people who may talk to me here, so I did not "
               "answer. Ask an admin of this bot to add you.")


def not_yours(asker: str | None, mention: str | None = None) -> str:
    """Why a click on someone else's turn changed nothing (said only to who clicked);
    `mention` is the asker as the platform mentions them ("<@U1>")."""
    who = mention or (f"<@{asker}>" if asker else None)
    if who is None:
        return "🔒 Only a chat admin may do that in this conversation, so nothing was changed."
    return f"🔒 Only {who}, who asked, or a chat admin may do that, so nothing was changed."


def refusal_text(error: BaseException) -> str:
    """One clear sentence for what stopped a request: core's refusals as they are, anything
    else as INTERNAL (its details go to the log, not to the user)."""
    if isinstance(error, Busy):
        return BUSY
    if isinstance(error, ChannelAdminOnly):
        return CHANNEL_ONLY_ADMINS
    if isinstance(error, AdminOnly):
        return ADMIN_ONLY
    if isinstance(error, BridgeUnavailable):
        return BRIDGE_DOWN
    if isinstance(error, NotFound):
        return f"🔎 {_sentence(error.public)}"
    if isinstance(error, InvalidInput):
        return f"✋ {_sentence(error.public)}"
    if isinstance(error, SpendLimitReached):
        return f"🪙 {error.public}"
    if isinstance(error, HermesChatError):
        return f"⚠️ {_sentence(error.public)}"
    return INTERNAL


def log_refusal(log: logging.Logger, error: BaseException, what: str) -> None:
    """The log's side of a refusal, the same on every surface: the Bridge down as a warning
    with everything it said (status, method, path, body), another refusal at info, anything
    else (a bug) with its traceback."""
    if isinstance(error, BridgeUnavailable):
        log.warning("%s refused, the Bridge is unavailable: %s", what, error.message)
    elif isinstance(error, HermesChatError):
        log.info("%s refused: %s", what, error.message)
    else:
        log.error("%s failed", what, exc_info=error)


def question_closed(pause: PauseView, answer: str) -> str:
    """Why a question takes no more answers (said only to the person who tried); `answer` is
    who answered what, as the platform mentions them ("<@U1>: blue")."""
    if pause.status == PauseStatus.ANSWERED:
        return f"This question was already answered by {answer}"
    return QUESTION_EXPIRED


def _sentence(message: str) -> str:
    message = message.strip()
    return (message[:1].upper() + message[1:]) if message else "That did not work."
