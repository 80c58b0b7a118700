"""A runtime in its own process, for the kill -9 test: it starts one run, reports once some of
its log rows are stored, then waits to be killed.

    python -m tests.core.runtime.child_runtime DATABASE_URL BRIDGE_URL LLM_BASE_URL MODEL
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from core.agent.bridge.client import BridgeClient
from core.agent.catalogue import Catalogue, ModelEntry
from core.chat import sessions
from core.runtime.pool import RunPool
from core.store import db


async def main(database_url: str, bridge_url: str, llm_url: str, model: str) -> None:
    await db.open_database(database_url)
    catalogue = Catalogue((ModelEntry("scripted", "Scripted", model, llm_url, None, True),), Path("."))
    async with BridgeClient(bridge_url) as client:
        pool = RunPool(client, catalogue)
        await pool.open()
        session = await sessions.create_session()
        run = await pool.start(session.id, "tell me a long story")
        subscription = pool.subscribe(run.run_id)
        async for update in subscription:
            if update.state.last_seq >= 1:
                await pool.buffer.flush()
                print(run.run_id, run.message_id, pool.buffer.persisted_seq(run.message_id), flush=True)
                break
        await asyncio.Event().wait()  # until SIGKILL


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
