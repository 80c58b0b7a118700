"""The files of a Slack message, downloaded from their `url_private` with the bot token
(scope `files:read`). The token goes only to Slack's own hosts over https, or to the origin of
SLACK_API_URL (a proxy, a test double); a redirect is followed only within those, and no more
than the cap is read of any file (bots/downloads.py)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import aiohttp
from slack_sdk.web.async_client import AsyncWebClient

from bots.downloads import download
from core.conversation.vocabulary import FileOffer
from core.edge.urls import Origins, origin_of

from .inbound import SlackFile

WHERE = "Slack's file servers"


class SlackFiles:
    """Turns a message's files into offers the core reads (`core.conversation.written`)."""

    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client
        self._api = Origins(exact=frozenset({origin_of(client.base_url)}))

    def offers(self, files: Sequence[SlackFile]) -> list[FileOffer]:
        return [FileOffer(f.name, f.mimetype, f.size, functools.partial(self._download, f))
                for f in files]

    async def _download(self, file: SlackFile, limit: int) -> bytes:
        if file.url is None:
            raise ValueError("Slack gave no URL to download it from")
        headers = {"Authorization": f"Bearer {self._client.token}"}
        fetch = functools.partial(download, url=file.url, limit=limit, allowed=self.trusts,
                                  where=WHERE, headers=headers,
                                  check=functools.partial(_not_sign_in, file.mimetype))
        session = self._client.session
        if session is None:  # not started (a test calling a listener directly)
            async with aiohttp.ClientSession() as own:
                return await fetch(own)
        return await fetch(session)

    def trusts(self, url: str) -> bool:
        """Whether the bot token may go to `url`: SLACK_API_URL's origin, or Slack over https."""
        if self._api.allow(url):
            return True
        try:
            scheme, host, _ = origin_of(url)
        except ValueError:
            return False
        return scheme == "https" and (host == "slack.com" or host.endswith(".slack.com"))


def _not_sign_in(declared: str | None, response: aiohttp.ClientResponse) -> None:
    if response.content_type == "text/html" and declared != "text/html":
        # Slack's sign-in page, not the file: the token lacks the files:read scope
        raise PermissionError("Slack answered its sign-in page: is files:read granted?")
