"""The Conversations page (search, filters, newest activity first, paged) and a conversation's
own page with what is done to it as a whole: send a message (the composer), rename (its title
double-clicked, or Rename), export, reset, archive, delete, and its agent's long-term memory
(read and edit)."""

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
from admin.runs import commands
from admin.runs.commands import RunOrder
from admin.services import AdminServices
from admin.sessions.controller import ExportBranch, ExportFormat
from admin.sessions.downloads import attachment_response
from admin.sessions.export import export_response
from console.reading import conversation_page
from console.rendering import PREFIX, back, page
from core.conversation import browsing, session_commands
from core.conversation.session_commands import SessionChanges
from core.conversation.vocabulary import FeedbackValue, Platform, SessionStatus
from core.text.field_errors import InvalidField

Services = NamedDependency[AdminServices]
LIST_PAGE = 50
Form = Body(media_type=RequestEncodingType.URL_ENCODED)
Identifier = Annotated[str, QueryParameter(max_length=64)]  # a channel's or a person's id
Before = Annotated[int | None, QueryParameter(ge=1, le=2**63 - 1)]


@dataclass(frozen=True, slots=True)
class MessageForm:
    """The composer: the message, and the model and skill of its run (empty: the session's)."""

    text: str = ""
    model_id: str = ""
    skill_folder: str = ""


@dataclass(frozen=True, slots=True)
class StatusForm:
    status: str


@dataclass(frozen=True, slots=True)
class TitleForm:
    title: str = ""


@dataclass(frozen=True, slots=True)
class MemoryForm:
    memory: str = ""
    user: str = ""


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
    channel: str = ""  # a channel id its thread is in
    person: str = ""  # a user id who wrote in it

    def query(self, cursor: str = "") -> str:
        """This search as a query string (for the next page and the live refresh)."""
        values = {"q": self.q, "platform": self.platform, "status": self.status,
                  "waiting": "1" if self.waiting else "", "rated": self.rated,
                  "channel": self.channel, "person": self.person, "cursor": cursor}
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
        channel: Identifier = "", person: Identifier = "",
    ) -> Template:
        filters = Filters(q.strip(), platform, status or "ACTIVE", waiting == "1", rated,
                          channel.strip(), person.strip())
        listing = await browsing.list_summaries(
            q=filters.q, platform=Platform(platform) if platform else None,
            status=None if filters.status == "any" else SessionStatus(filters.status),
            waiting=filters.waiting, feedback=FeedbackValue(rated) if rated else None,
            channel=filters.channel or None, person=filters.person or None,
            limit=LIST_PAGE, cursor=cursor,
        )
        return page(request, "conversations.html", listing=listing, filters=filters,
                    cursor=cursor)

    @get("/{session_id:int}")
    async def conversation(self, request: Request[Any, Any, Any], services: Services,
                           session_id: SessionId, before: Before = None) -> Template:
        shown = await conversation_page(services.runtime, session_id, before)
        catalogue = services.catalogue
        return page(request, "conversation.html", conversation=shown, before=before,
                    models=catalogue.models, skills=catalogue.skills())

    @post("/{session_id:int}/messages")
    async def send(self, request: Request[Any, Any, Any], services: Services,
                   session_id: SessionId, data: Annotated[MessageForm, Form]) -> Redirect:
        """The composer: a user message and its run, as the API's `POST .../runs` starts it
        (the busy rule, the catalogue's checks and the spend limits hold)."""
        if not data.text.strip():
            raise InvalidField("text", "write a message first")
        order = RunOrder(data.text, model_id=data.model_id or None,
                         skill_folder=data.skill_folder or None)
        update = await commands.start(services.runtime, session_id, order)
        return back(request, "Sent: the answer is being written.",
                    to=f"{PREFIX}/conversations/{session_id}", anchor=f"m{update.message_id}")

    @post("/{session_id:int}/status")
    async def archive(self, request: Request[Any, Any, Any], services: Services,
                      session_id: SessionId, data: Annotated[StatusForm, Form]) -> Redirect:
        """Archive, or bring back to the active list."""
        if data.status not in ("ACTIVE", "ARCHIVED"):
            raise InvalidField("status", "ACTIVE or ARCHIVED")
        changes = SessionChanges(status=SessionStatus(data.status))
        await session_commands.update_session(services.catalogue, session_id, changes)
        said = "archived" if data.status == "ARCHIVED" else "back among the active ones"
        return back(request, f"The conversation is {said}.",
                    to=f"{PREFIX}/conversations/{session_id}")

    @post("/{session_id:int}/title")
    async def rename(self, request: Request[Any, Any, Any], services: Services,
                     session_id: SessionId, data: Annotated[TitleForm, Form]) -> Redirect:
        """A new title (the API's PATCH: the same checks of the text)."""
        title = data.title.strip()
        if not title:
            raise InvalidField("title", "write the new title first")
        await session_commands.update_session(services.catalogue, session_id,
                                              SessionChanges(title=title))
        return back(request, "The conversation is renamed.",
                    to=f"{PREFIX}/conversations/{session_id}")

    @get("/{session_id:int}/memory")
    async def memory(self, request: Request[Any, Any, Any], services: Services,
                     session_id: SessionId) -> Template:
        """What the conversation's agent remembers (MEMORY.md, USER.md), from its Bridge."""
        summary = await browsing.session_summary(session_id, previews=False)
        remembered = await session_commands.session_memory(services.bridge, session_id)
        return page(request, "memory.html", summary=summary, memory=remembered)

    @post("/{session_id:int}/memory")
    async def edit_memory(self, request: Request[Any, Any, Any], services: Services,
                          session_id: SessionId, data: Annotated[MemoryForm, Form]) -> Redirect:
        await session_commands.set_session_memory(services.bridge, session_id,
                                                  memory=data.memory, user=data.user)
        return back(request, "The agent's memory was saved: its next run reads it.",
                    to=f"{PREFIX}/conversations/{session_id}/memory")

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
        data: Annotated[ResetForm, Form],
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
