"""The fake gateway: HELLO, IDENTIFY -> READY + GUILD_CREATE, heartbeats, RESUME with replay.

Sharding as Discord does it: IDENTIFY may carry `shard: [id, count]`; several sessions may be
open at once, and each guild's events go only to the sessions of shard
`(guild_id >> 22) % count` (DMs to shard 0); every session of that shard gets them, as on
Discord, so two clients identifying the same shard both see its events. `shard_count` is what
GET /gateway/bot recommends; a shard id outside its count is closed with 4010, and a count
below `required_shards` with 4011.

Every dispatch gets a sequence number and is kept in the session's log, so a client that
RESUMEs receives what it missed (and, if the test asks, some events it already had, to
exercise dedupe). Frames are plain JSON text; when the client asks for
`compress=zlib-stream` (discord.py does by default) they are sent as one zlib stream of
binary frames instead, each ending in a Z_SYNC_FLUSH.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import zlib
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from .notify import Notifier
from .records import Frame
from .world import World

Payload = dict[str, Any]

DISPATCH, HEARTBEAT, IDENTIFY, PRESENCE, RESUME, RECONNECT = 0, 1, 2, 3, 6, 7
REQUEST_MEMBERS, INVALID_SESSION, HELLO, HEARTBEAT_ACK = 8, 9, 10, 11
GUILDS, GUILD_MESSAGES, DIRECT_MESSAGES, MESSAGE_CONTENT = 1 << 0, 1 << 9, 1 << 12, 1 << 15
PRIVILEGED_INTENTS = (1 << 1) | (1 << 8) | MESSAGE_CONTENT
AUTHENTICATION_FAILED, DISALLOWED_INTENTS = 4004, 4014
INVALID_SHARD, SHARDING_REQUIRED = 4010, 4011
ABNORMAL_CLOSURE = 1006  # never sent in a close frame (RFC 6455): the TCP connection just drops


@dataclass
class Connection:
    """One websocket the client opened; `query` is what it asked for (v, encoding, compress)."""

    number: int
    ws: web.WebSocketResponse
    query: dict[str, str]
    transport: Any = None  # the TCP connection under `ws`, to drop it without a close frame
    zlib: Any = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass
class Session:
    id: str
    intents: int
    seq: int = 0
    log: list[tuple[int, str, Payload]] = field(default_factory=list)
    conn: Connection | None = None
    redeliver: int = 0
    shard: tuple[int, int] = (0, 1)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class Gateway:
    """Serves `/gateway`: sessions of any shards, several at once."""

    def __init__(
        self,
        world: World,
        token: str,
        notifier: Notifier,
        *,
        heartbeat_interval: float,
        compress: bool,
        privileged_intents: bool,
    ) -> None:
        self._world = world
        self._token = token
        self._notifier = notifier
        self._heartbeat_ms = int(heartbeat_interval * 1000)
        self._compress = compress
        self._allowed_privileged = PRIVILEGED_INTENTS if privileged_intents else 0
        self._open = asyncio.Event()
        self._open.set()
        self._closing = False
        self.url = ""
        self.frames: list[Frame] = []
        self.connections: list[Connection] = []
        self.sessions: list[Session] = []
        self.shard_count = 1  # what GET /gateway/bot recommends
        self.required_shards = 1  # IDENTIFY with fewer is closed with 4011

    @property
    def session(self) -> Session | None:
        """The newest session (of any shard)."""
        return self.sessions[-1] if self.sessions else None

    def session_of(self, shard: int) -> Session | None:
        """The newest session of shard `shard`."""
        return next((s for s in reversed(self.sessions) if s.shard[0] == shard), None)

    def live_sessions(self) -> list[Session]:
        """The sessions with a connection open now."""
        return [s for s in self.sessions if s.conn is not None and not s.conn.ws.closed]

    @staticmethod
    def shard_of(guild_id: str | int | None, count: int) -> int:
        """Discord's rule: a guild's shard is (guild_id >> 22) % count; DMs are shard 0."""
        return (int(guild_id) >> 22) % count if guild_id else 0

    # -- serving ----------------------------------------------------------------------

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        await self._open.wait()
        if self._closing:
            await ws.close(code=1001)
            return ws
        conn = Connection(len(self.connections), ws, dict(request.query), request.transport)
        if self._compress and conn.query.get("compress") == "zlib-stream":
            conn.zlib = zlib.compressobj()
        self.connections.append(conn)
        hello = {"heartbeat_interval": self._heartbeat_ms}
        await self._send(conn, {"op": HELLO, "d": hello, "s": None, "t": None})
        try:
            async for msg in ws:
                if msg.type is WSMsgType.TEXT:
                    await self._on_frame(conn, json.loads(msg.data))
        finally:
            for session in self.sessions:
                if session.conn is conn:
                    session.conn = None
            self._notifier.notify()
        return ws

    async def _on_frame(self, conn: Connection, frame: Payload) -> None:
        op, data = frame.get("op"), frame.get("d")
        self.frames.append(Frame("in", op, None, None, data, conn.number))
        self._notifier.notify()
        if op == HEARTBEAT:
            await self._send(conn, {"op": HEARTBEAT_ACK, "d": None, "s": None, "t": None})
        elif op == IDENTIFY:
            await self._identify(conn, data)
        elif op == RESUME:
            await self._resume(conn, data)
        elif op == REQUEST_MEMBERS:
            await self._members_chunk(data)

    async def _identify(self, conn: Connection, data: Payload) -> None:
        if data.get("token") != self._token:
            await conn.ws.close(code=AUTHENTICATION_FAILED, message=b"Authentication failed.")
            return
        intents = int(data.get("intents") or 0)
        if intents & PRIVILEGED_INTENTS & ~self._allowed_privileged:
            await conn.ws.close(code=DISALLOWED_INTENTS, message=b"Disallowed intent(s).")
            return
        shard = data.get("shard") or [0, 1]
        valid = (isinstance(shard, list) and len(shard) == 2
                 and all(isinstance(n, int) for n in shard) and 0 <= shard[0] < shard[1])
        if not valid:
            await conn.ws.close(code=INVALID_SHARD, message=b"Invalid shard.")
            return
        if shard[1] < self.required_shards:
            await conn.ws.close(code=SHARDING_REQUIRED, message=b"Sharding required.")
            return
        session = Session(secrets.token_hex(16), intents, conn=conn, shard=(shard[0], shard[1]))
        self.sessions.append(session)
        guilds = self._guilds_of(session)
        async with session.lock:
            await self._append(session, "READY", self._ready_payload(session, guilds))
            for guild_id in guilds:
                await self._append(session, "GUILD_CREATE", self._world.guild_payload(guild_id))

    def _guilds_of(self, session: Session) -> list[str]:
        shard, count = session.shard
        return [g for g in self._world.guilds if self.shard_of(g, count) == shard]

    def _ready_payload(self, session: Session, guilds: list[str]) -> Payload:
        world = self._world
        return {
            "v": 10,
            "user": world.bot,
            "guilds": [{"id": g, "unavailable": True} for g in guilds],
            "shard": list(session.shard),
            "session_id": session.id,
            "session_type": "normal",
            "resume_gateway_url": self.url,
            "application": {"id": world.application_id, "flags": (1 << 19) | (1 << 15) | (1 << 23)},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "user_settings": {},
            "geo_ordered_rtc_regions": [],
            "_trace": ["fake-discord"],
        }

    async def _resume(self, conn: Connection, data: Payload) -> None:
        session = next((s for s in self.sessions if s.id == data.get("session_id")), None)
        if session is None or data.get("token") != self._token:
            await self._send(conn, {"op": INVALID_SESSION, "d": False, "s": None, "t": None})
            return
        async with session.lock:
            session.conn = conn
            after = max(0, int(data.get("seq") or 0) - session.redeliver)
            session.redeliver = 0
            for entry in [e for e in session.log if e[0] > after]:
                await self._send_dispatch(conn, entry)
            await self._append(session, "RESUMED", {"_trace": ["fake-discord"]})

    async def _members_chunk(self, data: Payload) -> None:
        guild_id = str(data.get("guild_id"))
        guild = self._world.guilds.get(guild_id)
        members = list(guild.members.values()) if guild else []
        chunk = {"guild_id": guild_id, "members": members, "chunk_index": 0, "chunk_count": 1}
        if data.get("nonce"):
            chunk["nonce"] = data["nonce"]
        await self.dispatch("GUILD_MEMBERS_CHUNK", chunk)

    # -- sending ----------------------------------------------------------------------

    async def dispatch(self, event: str, data: Payload) -> int | None:
        """Send (or, while a client is away, queue for RESUME) one dispatch event to every
        session of its guild's shard.

        Returns its sequence number in the newest such session, or None when no session
        of that shard gets it (none yet, or the intents filter it out).
        """
        if not self.sessions:
            raise RuntimeError("fake Discord: no gateway session; wait until the client is ready")
        guild_id = data.get("guild_id") or (data.get("id") if event.startswith("GUILD_") else None)
        seq = None
        for session in list(self.sessions):
            if self.shard_of(guild_id, session.shard[1]) != session.shard[0]:
                continue
            visible = self._visible(session, event, data)
            if visible is None:
                continue
            async with session.lock:
                seq = await self._append(session, event, visible)
        return seq

    async def _append(self, session: Session, event: str, data: Payload) -> int:
        session.seq += 1
        entry = (session.seq, event, data)
        session.log.append(entry)
        if session.conn is not None:
            await self._send_dispatch(session.conn, entry)
        return session.seq

    async def _send_dispatch(self, conn: Connection, entry: tuple[int, str, Payload]) -> None:
        seq, event, data = entry
        await self._send(conn, {"op": DISPATCH, "t": event, "s": seq, "d": data})

    async def _send(self, conn: Connection, frame: Payload) -> None:
        text = json.dumps(frame)
        async with conn.lock:
            if conn.ws.closed:
                return
            try:
                if conn.zlib is not None:
                    packed = conn.zlib.compress(text.encode()) + conn.zlib.flush(zlib.Z_SYNC_FLUSH)
                    await conn.ws.send_bytes(packed)
                else:
                    await conn.ws.send_str(text)
            except ConnectionResetError:
                return
        self.frames.append(
            Frame("out", frame["op"], frame["t"], frame["s"], frame["d"], conn.number)
        )
        self._notifier.notify()

    def _visible(self, session: Session, event: str, data: Payload) -> Payload | None:
        """Apply intents: messages need (DIRECT|GUILD)_MESSAGES, content MESSAGE_CONTENT."""
        if not event.startswith("MESSAGE_") or event.startswith("MESSAGE_REACTION"):
            return data
        needed = GUILD_MESSAGES if data.get("guild_id") else DIRECT_MESSAGES
        if not session.intents & needed:
            return None
        if event == "MESSAGE_DELETE" or session.intents & MESSAGE_CONTENT:
            return data
        if self._content_exempt(data):
            return data
        return dict(data, content="", embeds=[], attachments=[], components=[])

    def _content_exempt(self, message: Payload) -> bool:
        bot_id = self._world.bot["id"]
        mentioned = any(u["id"] == bot_id for u in message.get("mentions", []))
        by_bot = message.get("author", {}).get("id") == bot_id
        return not message.get("guild_id") or by_bot or mentioned

    # -- test controls ----------------------------------------------------------------

    async def disconnect(self, *, code: int = 4000, redeliver: int = 0, hold: bool = False,
                         shard: int | None = None) -> None:
        """Close the client's socket with `code` (1006: drop the TCP connection, no close
        frame, as a network failure does); its RESUME will replay what it missed plus
        `redeliver` more. `shard`: that shard's newest session (default: the newest).

        With `hold`, new connections wait (no HELLO) until `release()`, so a test can
        dispatch events while the client is certainly away.
        """
        session = self._require_session(shard)
        if hold:
            self._open.clear()
        async with session.lock:
            session.redeliver = redeliver
            conn, session.conn = session.conn, None
        if conn is None:
            return
        if code == ABNORMAL_CLOSURE and conn.transport is not None:
            conn.transport.abort()
        else:
            await conn.ws.close(code=code)

    def release(self) -> None:
        self._open.set()

    async def send_op(self, op: int, data: Any = None, *, shard: int | None = None) -> None:
        """Send a bare opcode (RECONNECT 7, INVALID_SESSION 9) on the live connection."""
        conn = self._require_session(shard).conn
        if conn is None:
            raise RuntimeError("fake Discord: the client is not connected")
        await self._send(conn, {"op": op, "d": data, "s": None, "t": None})

    def _require_session(self, shard: int | None = None) -> Session:
        session = self.session if shard is None else self.session_of(shard)
        if session is None:
            raise RuntimeError("fake Discord: no gateway session yet")
        return session

    async def close(self) -> None:
        self._closing = True
        self._open.set()
        for conn in self.connections:
            if not conn.ws.closed:
                await conn.ws.close(code=1001)

    def received(self, op: int) -> list[Frame]:
        """Frames with opcode `op` the client sent (e.g. IDENTIFY 2, RESUME 6)."""
        return [f for f in self.frames if f.direction == "in" and f.op == op]

    def sent(self, event: str) -> list[Frame]:
        """Dispatches named `event` the fake sent, replays included."""
        return [f for f in self.frames if f.direction == "out" and f.t == event]
