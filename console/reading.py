"""What the console's pages show, read through the conversation layer: a page of a
conversation's active branch (each answer live where this process drives its run, else
replayed from its log; its versions; the questions it asked), and one answer alone."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.conversation import browsing, views, waiting
from core.conversation.browsing import MessageView, SessionSummary
from core.conversation.views import Versions
from core.conversation.vocabulary import ChatMessage, MessageStatus, RunPool, RunUpdate, Role
from core.conversation.waiting import Asked

PAGE_MESSAGES = 40  # of the active branch, the newest; "Earlier messages" pages back


@dataclass(frozen=True, slots=True)
class Shown:
    """One message of the branch as the page shows it; `answer` for an assistant message
    (`asked`: its questions, with who answered), `versions` where it has siblings."""

    view: MessageView
    versions: Versions = field(default_factory=Versions)
    answer: RunUpdate | None = None
    asked: tuple[Asked, ...] = ()

    @property
    def message(self) -> ChatMessage:
        return self.view.message

    @property
    def kind(self) -> str:
        """`user`, `answer` or `summary` (a compaction's divider)."""
        role = Role(self.message.role)
        if role == Role.SYSTEM:
            return "summary"
        return "answer" if role == Role.ASSISTANT else "user"

    @property
    def in_flight(self) -> bool:
        return self.answer is not None and self.answer.status in (MessageStatus.QUEUED,
                                                                   MessageStatus.RUNNING)


@dataclass(frozen=True, slots=True)
class ConversationPage:
    summary: SessionSummary
    shown: list[Shown]
    earlier: int | None  # the first message shown, when there are earlier ones


async def conversation_page(pool: RunPool, session_id: int,
                            before: int | None = None) -> ConversationPage:
    """The newest PAGE_MESSAGES of the active branch (before message `before`)."""
    summary = await browsing.session_summary(session_id, previews=False)  # the page shows them
    messages = await browsing.message_page(session_id, before, PAGE_MESSAGES)
    shown = await _shown(pool, session_id, messages.messages)
    first = messages.messages[0].message.id if messages.messages and messages.has_more else None
    return ConversationPage(summary, shown, first)


async def one_answer(pool: RunPool, message_id: int) -> Shown:
    """One message as its page shows it (what a live answer's refresh fetches)."""
    message = await views.stored_message(message_id)
    [view] = await browsing.message_views([message_id])
    [shown] = await _shown(pool, message.session_id, [view])
    return shown


async def _shown(pool: RunPool, session_id: int, items: list[MessageView]) -> list[Shown]:
    switchers = await views.versions_along(session_id, [v.message for v in items])
    answers = [v.message.id for v in items if v.message.role == Role.ASSISTANT]
    asked = await waiting.asked_in(answers)
    return [
        Shown(v, switchers.get(v.message.id, Versions()), _answer(pool, v),
              tuple(asked.get(v.message.id, ())))
        for v in items
    ]


def _answer(pool: RunPool, view: MessageView) -> RunUpdate | None:
    if view.message.role != Role.ASSISTANT:
        return None
    live = pool.view(view.message.run_id) if view.message.run_id else None
    return live if live is not None else views.update_of(view)
