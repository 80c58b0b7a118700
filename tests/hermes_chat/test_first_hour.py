"""The issue's "done when": a newcomer following only the README's first screen reaches an answer
in the terminal chat. The README's `.env` block is written to a fresh folder (the model pointed
at the scripted LLM), `serve` runs there as `./scripts/serve` would, and `hermes-chat chat` runs in
a pseudo-terminal beside it, typed at like a person would."""

from __future__ import annotations

import re

from tests.fakes.llm_server import ScriptedLLM
from tests.fakes.llm_server import text_reply
from tests.support.newcomer import Service, quick_start
from tests.support.processes import ROOT


def test_the_readme_s_first_screen_says_what_to_write_and_run() -> None:
    dotenv, commands = quick_start((ROOT / "README.md").read_text(encoding="utf-8"))
    keys = [line.split("=", 1)[0] for line in dotenv if line and not line.startswith("#")]
    assert keys == ["OPENAI_BASE_URL", "OPENAI_API_KEY", "HERMES_MODEL"]
    assert any(line.startswith("./scripts/serve") for line in commands), commands
    assert any(line.startswith(".venv/bin/hermes-chat chat") for line in commands), commands


async def test_a_newcomer_reaches_an_answer_in_the_terminal(served: Service,
                                                            llm: ScriptedLLM) -> None:
    llm.script(text_reply("Hello from the agent."))
    with served.chat() as chat:
        await chat.expect("you> ")
        chat.type("hi there")
        await chat.expect("hermes> Hello from the agent.")
        await chat.expect("you> ")
        chat.type("/quit")
        assert await chat.exit_code() == 0
    out = chat.output
    assert out.count("Hello from the agent.") == 1, out  # not first as a thinking status
    closing = next(line for line in out.splitlines() if line.startswith("  (✅ Done in"))
    assert len(re.findall(r"\d+s\b", closing)) == 1, out  # the time said once
    assert not re.search(r"\b(DEBUG|INFO|WARNING)\b", out), out  # no log line inside it
    assert llm.requests[-1]["messages"][-1]["content"] == "hi there"
    runs = (await served.get("/api/chat/sessions")).json()["items"]
    assert [s["title"] for s in runs] == ["hi there"]  # the service's own session
