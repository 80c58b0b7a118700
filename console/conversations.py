"""The Conversations page (search, filters, newest activity first, paged) and a conversation's
own page with what is done to it as a whole: export, reset, delete."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.params import Body, FromQuery, QueryParameter
from litestar.response import Redirect, Stream, Template

from admin.params import AttachmentId, PageCursor, Search, SessionId
from admin.services import AdminServices
from admin.sessions.controller import ExportBranch, ExportFormat
from admin.sessions.downloads import attachment_response
from admin.sessions.export import export_response
from console.reading import conversation_page
from console.rendering import PREFIX, back, page
from core.conversation import browsing, session_commands
from core.conversation.vocabulary import FeedbackValue, Platform, SessionStatus

Services = NamedDependency[AdminServices]
LIST_PAGE = 50
Before = Annotated[int | None, QueryParameter(ge=1, le=2**63 - 1)]


@dataclass(frozen=True, slots=True)
class ResetForm:
    afresh: str = ""  # a checked box: the conversation starts afresh too


@dataclass(frozen=True, slots=True)
class Filters:
    """The list's filters as the search form sends them (empty: any)."""

    q: str = ""
    platform: str = ""
    status: str = "ACTIVE"
    waiting: bool = False
    rated: str = ""  # good or bad: an answer of the conversation was rated so

    def query(self, cursor: str = "") -> str:
        """This search as a query string (for the next page and the live refresh)."""
        values = {"q": self.q, "platform": self.platform, "status": self.status,
                  "waiting": "1" if self.waiting else "", "rated": self.rated, "cursor": cursor}
        return urlencode({k: v for k, v in values.items() if v})


class ConversationController(Controller):
    path = "/conversations"

    @get("/")
    async def conversations(
        self, request: Request[Any, Any, Any], q: Search = "", cursor: PageCursor = "",
        platform: FromQuery[Literal["", "slack", "discord"]] = "",
        status: FromQuery[Literal["", "ACTIVE", "ARCHIVED", "any"]] = "ACTIVE",
        waiting: FromQuery[Literal["", "1"]] = "",
        rated: FromQuery[Literal["", "good", "bad"]] = "",
    ) -> Template:
        filters = Filters(q.strip(), platform, status or "ACTIVE", waiting == "1", rated)
        listing = await browsing.list_summaries(
            q=filters.q, platform=Platform(platform) if platform else None,
            status=None if filters.status == "any" else SessionStatus(filters.status),
            waiting=filters.waiting, feedback=FeedbackValue(rated) if rated else None,
            limit=LIST_PAGE, cursor=cursor,
        )
        return page(request, "conversations.html", listing=listing, filters=filters,
                    cursor=cursor)

    @get("/{session_id:int}")
    async def conversation(self, request: Request[Any, Any, Any], services: Services,
                           session_id: SessionId, before: Before = None) -> Template:
        shown = await conversation_page(services.runtime, session_id, before)
        return page(request, "conversation.html", conversation=shown)

    @get("/{session_id:int}/export")
    async def export(self, session_id: SessionId, format: ExportFormat = "md",
                     branch: ExportBranch = "active") -> Stream:
        return export_response(await browsing.prepare_export(session_id, format, branch))

    @get("/{session_id:int}/files/{attachment_id:int}")
    async def file(self, session_id: SessionId, attachment_id: AttachmentId) -> Response[bytes]:
        """A file a user message came with, as the admin API gives it."""
        return attachment_response(*await browsing.download(session_id, attachment_id))

    @post("/{session_id:int}/reset")
    async def reset(
        self, request: Request[Any, Any, Any], services: Services, session_id: SessionId,
        data: Annotated[ResetForm, Body(media_type=RequestEncodingType.URL_ENCODED)],
    ) -> Redirect:
        outcome = await session_commands.reset_session(services.bridge, session_id,
                                                       keep_history=not data.afresh)
        said = "The agent was reset: the next message starts a fresh agent"
        said += "; the conversation starts afresh (the old one stays as a version)." \
            if not outcome.kept_history else ", with the conversation kept."
        return back(request, said, to=f"{PREFIX}/conversations/{session_id}")

    @get("/{session_id:int}/delete")
    async def confirm_delete(self, request: Request[Any, Any, Any],
                             session_id: SessionId) -> Template:
        summary = await browsing.session_summary(session_id, previews=False)
        return page(request, "delete.html", summary=summary)

    @post("/{session_id:int}/delete")
    async def delete(self, request: Request[Any, Any, Any], session_id: SessionId) -> Redirect:
        await session_commands.delete_session(session_id)
        return back(request, f"Conversation {session_id} was deleted.",
                    to=f"{PREFIX}/conversations")
