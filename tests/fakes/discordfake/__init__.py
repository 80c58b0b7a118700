"""A fake Discord (REST + gateway) for testing discord.py code without the network.

It models one bot in a guild ("Hermes Test", channel #general, human member alice):
login (`/users/@me`, `/oauth2/applications/@me`), the gateway (HELLO, IDENTIFY -> READY
with unavailable guilds then GUILD_CREATE, heartbeats, RESUME with replay, zlib-stream),
messages (JSON and multipart), threads (renamed by PATCH), forum channels and their posts
(a starter message with the post's id), typing, reactions (per message: `reactions_on`),
interaction callbacks (types 4-9) and their webhook, and application commands. It enforces Discord's documented
limits (see `Limits`), records every REST call and gateway frame, and can inject faults.
Use `discord_payloads` builders for hand-made events.

Known gaps: permissions are not enforced, no voice, no presence updates,
no audit log, archived threads still accept messages.
"""

from ..clock import ManualClock
from .faults import Hang, Outage
from .limits import Limits
from .records import Call, Frame, InteractionRecord, UploadedFile
from .server import FakeDiscord

__all__ = [
    "Call",
    "FakeDiscord",
    "Frame",
    "Hang",
    "InteractionRecord",
    "Limits",
    "ManualClock",
    "Outage",
    "UploadedFile",
]
