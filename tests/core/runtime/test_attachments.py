"""A user message's files through the real runtime, Bridge and hermes-agent to the scripted LLM:
the image as an `image_url` part, the text file fenced in the text; kept by regenerate and
edit, in later turns' history, and deleted with the session."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from core.agent.bridge.client import BridgeClient
from core.chat import attachment_store, sessions
from core.chat.attachments import StoredFile
from core.runtime.pool import RunPool
from core.runtime.recovery import recover
from core.store.models import Attachment
from tests.core.runtime.waiting import finished, until
from tests.fakes.fake_bridge import FakeBridge, Stall, ev
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.files import PNG
from tests.support.runtime import FAST, catalogue_for

IMAGE = StoredFile("shot.png", "image/png", PNG)
NOTES = StoredFile("notes.md", "text/markdown", b"# Plan\nship it", "# Plan\nship it")
PNG_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()
EXPECTED = [{"type": "text", "text": "What now?\n\nFile: notes.md\n```\n# Plan\nship it\n```"},
            {"type": "image_url", "image_url": {"url": PNG_URL}}]


def user_contents(request: dict[str, Any]) -> list[Any]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


async def test_files_reach_the_model_and_stay_with_the_message(pool: RunPool, llm: ScriptedLLM):
    llm.script(text_reply("Ship it."), text_reply("Ship it again."), text_reply("Later."),
               text_reply("Done."))
    session = await sessions.create_session()
    first = await finished(pool, (await pool.start(session.id, "What now?",
                                                   files=[NOTES, IMAGE])).run_id)
    assert user_contents(llm.requests[0]) == [EXPECTED]

    again = await finished(pool, (await pool.regenerate(first.message_id)).run_id)
    assert again.user_message_id == first.user_message_id
    assert user_contents(llm.requests[1]) == [EXPECTED]

    edited = await finished(pool, (await pool.edit(first.user_message_id, "And then?")).run_id)
    assert [f.name for f in await attachment_store.files_of(edited.user_message_id)] == [
        "notes.md", "shot.png"]
    assert user_contents(llm.requests[2])[0][0]["text"].startswith("And then?\n\nFile: notes.md")

    await finished(pool, (await pool.start(session.id, "Thanks")).run_id)
    assert user_contents(llm.requests[3])[0][1] == EXPECTED[1]  # the history keeps the image
    assert user_contents(llm.requests[3])[-1] == "Thanks"

    await sessions.delete_session(session.id)
    assert await Attachment.all().count() == 0


async def test_a_turn_continued_on_a_new_bridge_sends_its_files_again(db: str, skills_dir: Path):
    async with FakeBridge() as fake:
        fake.default_script = lambda run_id: [
            ev("text", text="half"), Stall(run_id), ev("done", final_text="x")]
        first = await _pool(fake.url, skills_dir)
        run = await first.start((await sessions.create_session()).id, "What now?",
                                files=[NOTES, IMAGE])
        await until(first, run.run_id, lambda u: u.state.last_seq == 1)
        await first.close()
        await first.bridge.aclose()  # type: ignore[attr-defined]
        fake.runs.clear()  # the Bridge restarted and lost its runs
        fake.default_script = lambda run_id: [ev("done", final_text="whole")]
        again = await _pool(fake.url, skills_dir)
        try:
            assert await recover(again) == 1
            await finished(again, run.run_id)
        finally:
            await again.close()
            await again.bridge.aclose()  # type: ignore[attr-defined]
    [start, resumed] = [r.body for r in fake.requests if r.path == "/run"]
    assert start["user_content"] == EXPECTED and "user_content" not in resumed
    assert resumed["resume"]["messages"] == [{"role": "user", "content": EXPECTED}]


async def _pool(url: str, skills: Path) -> RunPool:
    pool = RunPool(BridgeClient(url, policy=FAST), catalogue_for(None, skills))
    await pool.open()
    return pool
