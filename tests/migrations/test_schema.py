"""The schema the migrations build, on SQLite and PostgreSQL: the models' own, with the seed's
indexes (000 §4.1) and the unique keys the service relies on."""

from __future__ import annotations

import pytest
from tortoise import Tortoise, connections
from tortoise.exceptions import IntegrityError
from tortoise.migrations.autodetector import MigrationAutodetector

from core.chat import sessions, tree
from core.store.db import tortoise_config
from core.store.models import ChatMessageLog, ChatSession, ClarifyPause, ConversationBinding
from tests.conftest import BACKEND

SEED_INDEXES = {
    "chat_session": {"idx_chat_session_last_msg"},
    "chat_message": {"idx_chat_message_session", "idx_chat_message_parent", "idx_chat_message_run"},
    "chat_message_log": {"idx_chat_log_kind"},
}


async def test_the_migration_files_hold_every_model_change(db: str) -> None:
    """A model edited without its migration (docs/development.md: Changing the data model) fails here."""
    apps = tortoise_config(db)["apps"]
    pending = await MigrationAutodetector(Tortoise.apps, apps).changes()
    assert [op.describe() for writer in pending for op in writer.operations] == []


async def test_the_seed_indexes_exist(db: str) -> None:
    for table, names in SEED_INDEXES.items():
        assert names <= await _index_names(table), table


async def _index_names(table: str) -> set[str]:
    if BACKEND == "postgres":
        sql, key = "SELECT indexname FROM pg_indexes WHERE tablename = $1", "indexname"
    else:
        sql, key = "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", "name"
    rows = await connections.get("default").execute_query_dict(sql, [table])
    return {row[key] for row in rows}


async def test_the_unique_keys_hold(db: str) -> None:
    s = await sessions.create_session()
    u = await tree.append_user(s.id, "hello")
    a = await tree.append_assistant(s.id, u.id, run_id="r1")
    await ChatMessageLog.create(message_id=a.id, seq=1, kind="text")
    await ClarifyPause.create(run_id="r1", message_id=a.id, clarify_id="c1", question="?")
    await ConversationBinding.create(session_id=s.id, platform="slack", workspace="T",
                                     channel="C", thread="1")
    duplicates = [
        lambda: ChatMessageLog.create(message_id=a.id, seq=1, kind="text"),  # a replayed event
        lambda: ClarifyPause.create(run_id="r1", message_id=a.id, clarify_id="c1", question="?"),
        lambda: ConversationBinding.create(session_id=s.id, platform="slack", workspace="T",
                                           channel="C", thread="1"),  # one thread, one session
        lambda: ChatSession.create(uuid=s.uuid, hermes_session="chat-x"),  # the public id
    ]
    for insert in duplicates:
        with pytest.raises(IntegrityError):
            await insert()
    await ChatMessageLog.create(message_id=a.id, seq=2, kind="text")  # the next seq is fine
    assert await ChatSession.filter(uuid=s.uuid).count() == 1
