"""`hermes-chat chat`: a terminal conversation through the real runtime and the real Bridge."""

from __future__ import annotations

import asyncio
import io
import re
from datetime import datetime, UTC

from core import sessions
from core.events import Done, Step, ToolProgress, ToolStart
from core.models import MessageStatus
from core.runtime.pool import RunPool
from core.runtime.updates import RunUpdate
from core.thinking import ThinkingState, fold
from hermes_chat.chat import MODEL_TEXT, PROMPT, TerminalView, converse
from tests.core.runtime.conftest import pool, skills_dir  # noqa: F401
from tests.core.runtime.test_approvals import (  # noqa: F401 (fixtures)
    runs as terminal_pool,
    terminal_bridge,
    terminal_settings,
)
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.hermes_chat.test_serve import code_path

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def lines(*typed: str):
    queue = list(typed)

    def read() -> asyncio.Future[str]:
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        future.set_result(queue.pop(0) if queue else "")
        return future

    return read


async def test_a_terminal_conversation_with_a_clarify(pool: RunPool, llm: ScriptedLLM) -> None:
    llm.script(
        tool_reply(ToolCall("todo", {"todos": [{"id": "1", "content": "pick", "status": "done"}]})),
        tool_reply(ToolCall("clarify", {"question": "Which size?", "choices": ["S", "M"]})),
        text_reply("Medium it is."),
    )
    session = await sessions.create_session()
    out = io.StringIO()
    await converse(pool, session.id, lines("\n", "order a shirt\n", "2\n", "/quit\n"), out)
    text = out.getvalue()
    assert "🔧 todo" in text and "? Which size?" in text and "2. M" in text
    assert "hermes> Medium it is." in text and "✅ Done" in text
    assert text.count("Medium it is.") == 1 and text.count(PROMPT) == 3, text  # /quit: the 3rd
    assert '"user_response": "M"' in llm.requests[-1]["messages"][-1]["content"]


async def test_a_terminal_conversation_decides_a_tool_approval(
    terminal_pool: RunPool, llm: ScriptedLLM, tmp_path  # noqa: ANN001
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    rm = ToolCall("terminal", {"command": f"rm -rf {victim}"})
    llm.script(tool_reply(rm), text_reply("Kept it."), tool_reply(rm), text_reply("Gone."))
    session = await sessions.create_session()
    out = io.StringIO()
    await converse(terminal_pool, session.id,
                   lines("clean up\n", "maybe\n", "clean up again\n", "1\n", "/quit\n"), out)
    text = out.getvalue()
    assert f"rm -rf {victim}" in text and "1. Allow once" in text and "4. Deny" in text
    assert "⛔ Denied by terminal" in text  # anything but an offered decision is Deny
    assert "✅ Allowed once by terminal" in text and "hermes> Gone." in text
    assert not victim.exists()


def test_the_view_prints_only_what_changed() -> None:
    out = io.StringIO()
    view = TerminalView(out)
    update = RunUpdate("r", 1, 1, 2, MessageStatus.RUNNING, ThinkingState())
    view.show(update)
    view.show(update)
    assert out.getvalue().count("Thinking") == 1


async def test_the_chat_command_in_a_subprocess(bridge, llm: ScriptedLLM, tmp_path) -> None:  # noqa: ANN001
    import os
    import sys

    llm.script(text_reply("Hello from the agent."))
    models = tmp_path / "models.toml"
    models.write_text(f'[[models]]\nid = "s"\nmodel = "{llm.model}"\nbase_url = "{llm.base_url}"\n'
                      "default = true\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": code_path(), "HERMES_BRIDGE_URL": bridge.url,
           "MODELS_FILE": str(models),
           "DATABASE_URL": f"sqlite://{tmp_path / 'chat.sqlite3'}"}
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hermes_chat", "chat", cwd=tmp_path, env=env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(child.communicate(b"hi there\n"), 30)
    assert child.returncode == 0, err.decode()
    assert "hermes> Hello from the agent." in out.decode()
    _assert_a_clean_terminal(out.decode(), err.decode(), "Hello from the agent.")


def _assert_a_clean_terminal(out: str, err: str, answer: str) -> None:
    """What the person sees: a prompt before each line they type, the answer once (not first
    as a thinking status), the time once in the closing line, and no log line anywhere."""
    assert out.count(answer) == 1, out
    assert out.count(PROMPT) == 2, out  # their line, then the end of input
    closing = out.strip().splitlines()[-2]
    assert closing.startswith("  (✅ Done in") and len(re.findall(r"\d+s\b", closing)) == 1, out
    assert not re.search(r"\b(DEBUG|INFO|WARNING)\b", out + err), out + err


def _model_says(text: str, seq: int) -> ToolProgress:
    """hermes-agent's relay of a reply of the model (the Bridge passes it on as it comes)."""
    return ToolProgress(event_name="reasoning.available", tool_name=MODEL_TEXT, preview=text,
                        seq=seq, at=T0)


def test_the_model_s_words_show_as_thinking_only_when_the_run_goes_on() -> None:
    out = io.StringIO()
    view = TerminalView(out)
    events = [Step(iteration=1, seq=1, at=T0), _model_says("Let me look it up.", 2),
              ToolStart(tool_call_id="a", tool_name="web", args={}, seq=3, at=T0),
              _model_says("It is sunny.", 4)]
    state = ThinkingState()
    for event in events:
        state = fold([event], state)
        view.show(RunUpdate("r", 1, 1, 2, MessageStatus.RUNNING, state))
    done = fold([Done(final_text="It is sunny.", seq=5, at=T0)], state)
    view.finish(RunUpdate("r", 1, 1, 2, MessageStatus.SUCCESS, done))
    text = out.getvalue()
    assert "💭 Let me look it up." in text  # the run went on: it was thinking
    assert text.count("It is sunny.") == 1 and "hermes> It is sunny." in text, text
