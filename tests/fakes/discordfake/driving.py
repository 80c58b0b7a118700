"""The verbs of FakeDiscord that make things happen on the gateway (mixed into FakeDiscord):
what users do, raw dispatches, and dropping or resetting the connection.

Users act as alice (`fake.user`) unless another user payload is passed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import actions
from .core import FakeCore
from .gateway import INVALID_SESSION, RECONNECT
from .records import InteractionRecord

Payload = dict[str, Any]
Id = int | str


class Driving:
    """Messages, edits, clicks, modal submissions, slash commands, dispatches, disconnects."""

    core: FakeCore

    def _user(self, user: Payload | None) -> Payload:
        return user or self.core.world.human

    def _channel(self, channel_id: Id | None) -> str:
        return str(channel_id or self.core.world.channel_id)

    async def send_user_message(
        self,
        content: str,
        *,
        channel_id: Id | None = None,
        author: Payload | None = None,
        files: Mapping[str, bytes] | None = None,
        reply_to: Id | None = None,
        stated_sizes: Mapping[str, int] | None = None,
    ) -> Payload:
        """A user posts (MESSAGE_CREATE); write `<@{fake.bot_id}>` in content to mention the bot.
        `stated_sizes`: a size the attachment payload gives for a file instead of its own."""
        return await actions.user_message(
            self.core,
            content,
            channel_id=self._channel(channel_id),
            author=self._user(author),
            files=files,
            stated_sizes=stated_sizes,
            reply_to=str(reply_to) if reply_to else None,
        )

    async def create_post(
        self, forum_id: Id, name: str, content: str, *, author: Payload | None = None
    ) -> Payload:
        """A user opens a post in a forum channel (its starter message has the post's id)."""
        return await actions.user_post(
            self.core, str(forum_id), name, content, author=self._user(author)
        )

    async def edit_user_message(self, message_id: Id, content: str) -> Payload:
        """A user edits their message (MESSAGE_UPDATE)."""
        return await actions.user_edit(self.core, str(message_id), content)

    async def click(
        self,
        message_id: Id,
        custom_id: str,
        *,
        user: Payload | None = None,
        component_type: int = 2,
        values: Sequence[str] | None = None,
    ) -> InteractionRecord:
        """A user clicks a button (or picks `values` in a select, component_type 3)."""
        return await actions.click(
            self.core,
            str(message_id),
            custom_id,
            user=self._user(user),
            component_type=component_type,
            values=values,
        )

    async def submit_modal(
        self,
        opened_by: InteractionRecord,
        values: Mapping[str, str],
        *,
        user: Payload | None = None,
    ) -> InteractionRecord:
        """A user fills in and submits the modal the bot opened in answer to `opened_by`."""
        return await actions.submit_modal(self.core, opened_by.id, values, user=self._user(user))

    async def run_command(
        self,
        name: str,
        *path: str,
        options: Mapping[str, Any] | None = None,
        user: Payload | None = None,
        channel_id: Id | None = None,
    ) -> InteractionRecord:
        """A user runs a synced slash command: `run_command("hermes", "status")`."""
        return await actions.command(
            self.core, name, path, options or {}, user=self._user(user),
            channel_id=self._channel(channel_id),
        )

    async def autocomplete(
        self,
        name: str,
        *path: str,
        focused: str,
        options: Mapping[str, Any],
        user: Payload | None = None,
        channel_id: Id | None = None,
    ) -> InteractionRecord:
        """A user types into option `focused` of a synced command (autocomplete)."""
        return await actions.command(
            self.core, name, path, options, user=self._user(user), focused=focused,
            channel_id=self._channel(channel_id),
        )

    async def dispatch(self, event: str, data: Payload) -> int | None:
        """Send any gateway event as is; returns its sequence number."""
        return await self.core.gateway.dispatch(event, data)

    async def dispatch_interaction(self, payload: Payload) -> InteractionRecord:
        """Dispatch a hand-built interaction (see discord_payloads) and accept callbacks to it."""
        return await actions.dispatch_interaction(self.core, payload)

    async def disconnect(self, *, code: int = 4000, redeliver: int = 0, hold: bool = False) -> None:
        """Close the gateway socket with `code` (1006 drops the TCP connection, 4004 / 4014
        say the token / intents are refused); on RESUME replay missed events plus `redeliver`
        delivered ones.

        With `hold=True` the client cannot reconnect until `release_gateway()`.
        """
        await self.core.gateway.disconnect(code=code, redeliver=redeliver, hold=hold)

    def release_gateway(self) -> None:
        self.core.gateway.release()

    async def request_reconnect(self) -> None:
        """Send op 7 RECONNECT; discord.py closes and RESUMEs."""
        await self.core.gateway.send_op(RECONNECT)

    async def invalidate_session(self, *, resumable: bool = False) -> None:
        """Send op 9; with resumable=False discord.py re-IDENTIFYs (after sleeping 5 s)."""
        await self.core.gateway.send_op(INVALID_SESSION, resumable)
