"""`/api/chat/messages`: regenerate an answer, edit a user message, list and switch versions."""

from __future__ import annotations


from litestar import Controller, Request, get, patch, post
from litestar.di import NamedDependency
from litestar.params import JSONBody

from admin.messages.schemas import EditOut, MessageEdit, VersionOut, versions_out
from admin.auth import unlimited
from admin.openapi import errors
from admin.params import MessageId
from admin.runs import commands
from admin.runs.schemas import RegeneratedOut, regenerated_out
from admin.services import AdminServices
from core.conversation import browsing
from core.conversation import turns


class MessageController(Controller):
    path = "/api/chat/messages"
    tags = ("messages",)

    @post("/{message_id:int}/regenerate", summary="A new version of an answer, by a new run",
          responses=errors(404, 409, 429))
    async def regenerate_message(
        self, request: Request, services: NamedDependency[AdminServices], message_id: MessageId
    ) -> RegeneratedOut:
        update = await commands.regenerate(services.runtime, message_id, unlimited(request))
        return regenerated_out(update)

    @patch("/{message_id:int}", summary="Edit a user message (a new version; no run)",
           responses=errors(404, 409, 413))
    async def edit_message(self, message_id: MessageId, data: JSONBody[MessageEdit]) -> EditOut:
        return EditOut((await turns.edit_message(message_id, data.content)).id)

    @get("/{message_id:int}/versions", summary="The message and its sibling versions",
         responses=errors(404))
    async def list_versions(self, message_id: MessageId) -> list[VersionOut]:
        return versions_out(await browsing.versions(message_id))

    @post("/{message_id:int}/activate", status_code=200, summary="Make this version the active one",
          responses=errors(404, 409))
    async def activate_version(self, message_id: MessageId) -> list[VersionOut]:
        activated = await turns.switch_version(message_id)
        return versions_out(await browsing.versions(activated.id))
