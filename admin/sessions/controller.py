"""`/api/chat/sessions`: thin handlers over core."""

from __future__ import annotations

from typing import Annotated, Literal

from litestar import Controller, Response, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromQuery, JSONBody, QueryParameter
from litestar.response import Stream

from admin.messages.schemas import MessagePageOut, message_page_out
from admin.openapi import OptionalBodyOperation, errors
from admin.params import AttachmentId, BeforeId, PageCursor, PageLimit, Search, SessionId
from admin.services import AdminServices
from admin.sessions import schemas as out
from admin.sessions.downloads import AttachmentOperation, attachment_response
from admin.sessions.export import ExportOperation, export_response
from admin.sessions.schemas import (
    MemoryOut,
    ResetIn,
    ResetOut,
    SessionCreate,
    SessionDetailOut,
    SessionOut,
    SessionPageOut,
    SessionPatch,
)
from core.conversation import browsing
from core.conversation import session_commands
from core.conversation.vocabulary import FeedbackValue, Platform, SessionStatus

ExportFormat = Annotated[Literal["md", "json"], QueryParameter(description="the file format")]
ExportBranch = Annotated[
    Literal["active", "all"], QueryParameter(description="the active branch, or every version")
]
Services = NamedDependency[AdminServices]


class SessionController(Controller):
    path = "/api/chat/sessions"
    tags = ("sessions",)

    @post("/", summary="Create a session", responses=errors(413))
    async def create_session(self, services: Services, data: JSONBody[SessionCreate]) -> SessionOut:
        session = await session_commands.create_session(
            services.catalogue, title=data.title, model_id=data.model_id,
            skill_folder=data.skill_folder,
        )
        return await out.describe(session)

    @get("/", summary="List sessions, newest activity first", responses=errors())
    async def list_sessions(
        self, limit: PageLimit = 50, cursor: PageCursor = "",
        status: FromQuery[SessionStatus | None] = None,
        platform: FromQuery[Platform | None] = None,
        q: Search = "",
        feedback: FromQuery[FeedbackValue | None] = None,
    ) -> SessionPageOut:
        page = await browsing.list_summaries(
            status=status, platform=platform, q=q, limit=limit, cursor=cursor, feedback=feedback
        )
        return out.session_page_out(page)

    @get("/{session_id:int}", summary="A session and its active branch", responses=errors(404))
    async def get_session(self, session_id: SessionId) -> SessionDetailOut:
        return out.detail_out(await browsing.session_detail(session_id))

    @patch("/{session_id:int}", summary="Rename, re-model, re-skill or archive",
           responses=errors(404, 413))
    async def update_session(
        self, services: Services, session_id: SessionId, data: JSONBody[SessionPatch]
    ) -> SessionOut:
        changed = await session_commands.update_session(services.catalogue, session_id, data.changes())
        return await out.describe(changed)

    @delete("/{session_id:int}", summary="Delete with every message", responses=errors(404, 409))
    async def delete_session(self, session_id: SessionId) -> None:
        await session_commands.delete_session(session_id)

    @post(
        "/{session_id:int}/reset", status_code=200, summary="Reset the agent",
        responses=errors(404, 409, 413, 503), operation_class=OptionalBodyOperation,
    )
    async def reset_session(
        self, services: Services, session_id: SessionId, data: JSONBody[ResetIn | None] = None
    ) -> ResetOut:
        keep = data.keep_history if data is not None else True
        return await out.reset_out(
            await session_commands.reset_session(services.bridge, session_id, keep)
        )

    @get(
        "/{session_id:int}/export", summary="Download as Markdown or JSON",
        responses=errors(404), operation_class=ExportOperation,
    )
    async def export_session(
        self, session_id: SessionId, format: ExportFormat = "md",
        branch: ExportBranch = "active",
    ) -> Stream:
        return export_response(await browsing.prepare_export(session_id, format, branch))

    @get(
        "/{session_id:int}/attachments/{attachment_id:int}",
        summary="Download a file a user message came with", responses=errors(404),
        operation_class=AttachmentOperation,
    )
    async def download_attachment(
        self, session_id: SessionId, attachment_id: AttachmentId
    ) -> Response[bytes]:
        return attachment_response(*await browsing.download(session_id, attachment_id))

    @get(
        "/{session_id:int}/messages", summary="Page the active branch backwards",
        responses=errors(404),
    )
    async def list_messages(
        self, session_id: SessionId, before: BeforeId = None, limit: PageLimit = 50
    ) -> MessagePageOut:
        return message_page_out(await browsing.message_page(session_id, before, limit))

    @get("/{session_id:int}/memory", summary="The agent's memory files", responses=errors(404, 503))
    async def get_memory(self, services: Services, session_id: SessionId) -> MemoryOut:
        return out.memory_out(await session_commands.session_memory(services.bridge, session_id))
