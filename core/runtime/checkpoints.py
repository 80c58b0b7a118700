"""The latest checkpoint of each run (`run_checkpoint`): the agent's messages so far, from
which any Bridge process continues the turn (docs/bridge-protocol.md).

Written by the log buffer's flush (core/runtime/log_buffer.py) next to the log rows, one
statement per checkpoint: a checkpoint is stored whole or not at all, and only over one of a
lower or equal seq (a checkpoint's seq is the id of the event before it: a replayed older one
never moves a run back). Never split like a batch of log rows: a
checkpoint the database refuses for another reason than an outage is dropped with an error in
the log, and the run keeps the one before it.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import msgspec
from tortoise import connections

from core.agent.events import Checkpoint
from core.store.models import RunCheckpoint, utc_now
from core.store.outage import is_outage

log = logging.getLogger(__name__)

_UPSERT = ("INSERT INTO run_checkpoint (message_id, seq, messages_json, clarify_json, updated_at) "
           "VALUES ({0}, {1}, {2}, {3}, {4}) ON CONFLICT (message_id) DO UPDATE SET "
           "seq = excluded.seq, messages_json = excluded.messages_json, "
           "clarify_json = excluded.clarify_json, updated_at = excluded.updated_at "
           "WHERE run_checkpoint.seq <= excluded.seq")


@dataclass(frozen=True, slots=True)
class StoredCheckpoint:
    """A run's latest checkpoint as read back: its seq, messages and the pause it waits on
    (a clarify, or a tool approval: `clarify_json` holds either)."""

    seq: int
    messages: list[dict[str, Any]]
    call_id: str | None = None  # the clarify tool call the turn waited on, if it did
    clarify_id: str | None = None
    approval_id: str | None = None  # the approval the turn waited on (messages end before it)


async def store_checkpoints(points: dict[int, Checkpoint]) -> None:
    """Upsert each message's checkpoint; an outage raises (the caller keeps them for later)."""
    for message_id, point in points.items():
        try:
            await _upsert(message_id, point)
        except Exception as error:
            if is_outage(error):
                raise
            log.error("the checkpoint (seq %s) of message %s was refused and is dropped; the "
                      "run keeps its previous one: %s: %s", point.seq, message_id,
                      type(error).__name__, str(error).splitlines()[0] if str(error) else "")


async def load_checkpoint(message_id: int) -> StoredCheckpoint | None:
    """The message's stored checkpoint, if it has one."""
    row = await RunCheckpoint.get_or_none(message_id=message_id)
    if row is None:
        return None
    pause = json.loads(row.clarify_json) if row.clarify_json else {}
    return StoredCheckpoint(row.seq, json.loads(row.messages_json), pause.get("call_id"),
                            pause.get("clarify_id"), pause.get("approval_id"))


async def _upsert(message_id: int, point: Checkpoint) -> None:
    connection = connections.get("default")
    dialect = str(connection.capabilities.dialect)
    marks = [f"${i}" for i in range(1, 6)] if dialect == "postgres" else ["?"] * 5
    waits_on = point.clarify or point.approval
    clarify = msgspec.json.encode(waits_on).decode() if waits_on else None
    values = [message_id, point.seq, msgspec.json.encode(point.messages).decode(), clarify,
              utc_now()]
    await connection.execute_query(_UPSERT.format(*marks), values)
