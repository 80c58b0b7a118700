"""A file a chat platform names, downloaded only from where that platform keeps its files.

Both adapters' downloads go through `download`: every URL, and every redirect's target, must
pass `allowed` (redirects are followed by hand, only within it, at most MAX_REDIRECTS), and no
more than `limit` bytes are read from the body, however large it is or says it is. A URL
refused is `Refused` (`core.conversation.vocabulary`): the chat names the file and why (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import aiohttp
from yarl import URL

from core.conversation.vocabulary import Refused
from core.edge.urls import redacted_url

CHUNK = 65536
MAX_REDIRECTS = 5
REDIRECTS = frozenset({301, 302, 303, 307, 308})
Check = Callable[[aiohttp.ClientResponse], None]


async def download(session: aiohttp.ClientSession, url: str, limit: int, *,
                   allowed: Callable[[str], bool], where: str,
                   headers: Mapping[str, str] | None = None, check: Check | None = None) -> bytes:
    """At most `limit` bytes of the file at `url`; `where` names the allowed places for the
    chat ("Discord's file servers"); `check` may refuse an answer by raising."""
    for hop in range(MAX_REDIRECTS + 1):
        if not allowed(url):
            reason = f"it is not stored on {where}" if hop == 0 else \
                f"its download is redirected away from {where}"
            raise Refused(reason, f"{redacted_url(url)} is not allowed")
        async with session.get(url, headers=headers, allow_redirects=False) as response:
            if response.status in REDIRECTS and "Location" in response.headers:
                url = str(response.url.join(URL(response.headers["Location"])))
                continue
            response.raise_for_status()
            if check is not None:
                check(response)
            return await read_at_most(response.content, limit)
    raise Refused(f"its download is redirected more than {MAX_REDIRECTS} times",
                  f"last at {redacted_url(url)}")


async def read_at_most(body: aiohttp.StreamReader, limit: int) -> bytes:
    """The body's first `limit` bytes: never more is taken from the stream."""
    data = bytearray()
    while len(data) < limit:
        chunk = await body.read(min(CHUNK, limit - len(data)))
        if not chunk:
            break
        data += chunk
    return bytes(data)
