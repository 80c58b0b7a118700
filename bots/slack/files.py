"""The files of a Slack message, downloaded from their `url_private` with the bot token
(scope `files:read`). The token goes only to Slack's own hosts (or the API host configured in
SLACK_API_URL), and no more than the cap is read of any file."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.web.async_client import AsyncWebClient

from core.attachments import FileOffer

from .inbound import SlackFile

CHUNK = 65536


class SlackFiles:
    """Turns a message's files into offers the core reads (`core.conversation.written`)."""

    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client
        self._api_host = urlsplit(client.base_url).hostname or ""

    def offers(self, files: Sequence[SlackFile]) -> list[FileOffer]:
        return [FileOffer(f.name, f.mimetype, f.size, functools.partial(self._download, f))
                for f in files]

    async def _download(self, file: SlackFile, limit: int) -> bytes:
        url = file.url
        if url is None or not self._trusted(url):
            raise ValueError(f"no Slack URL to download from ({url!r})")
        headers = {"Authorization": f"Bearer {self._client.token}"}
        session = self._client.session
        if session is None:  # not started (a test calling a listener directly)
            async with aiohttp.ClientSession() as own:
                return await _read(own, url, file.mimetype, headers, limit)
        return await _read(session, url, file.mimetype, headers, limit)

    def _trusted(self, url: str) -> bool:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if host == self._api_host:
            return True
        return parts.scheme == "https" and (host == "slack.com" or host.endswith(".slack.com"))


async def _read(session: aiohttp.ClientSession, url: str, declared: str | None,
                headers: dict[str, str], limit: int) -> bytes:
    async with session.get(url, headers=headers) as response:
        response.raise_for_status()
        if response.content_type == "text/html" and declared != "text/html":
            # Slack's sign-in page, not the file: the token lacks the files:read scope
            raise PermissionError("Slack answered its sign-in page: is files:read granted?")
        data = bytearray()
        async for chunk in response.content.iter_chunked(CHUNK):
            data += chunk
            if len(data) >= limit:
                break
        return bytes(data[:limit])
