"""`hermes-chat chat`: conversations through a real `serve` in a pseudo-terminal
(tests/hermes_chat/terminal.py), the model scripted."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from hermes_chat.chat import EXIT_NO_SESSION, EXIT_SERVICE_DOWN, command_of
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.hermes_chat.terminal import Terminal
from tests.support.newcomer import Service, newcomer_env, service
from tests.support.processes import free_port
from tests.fakes.changes import WAIT


async def _finished(served: Service, session_id: int) -> bool:
    response = await served.get(f"/api/chat/sessions/{session_id}/messages?limit=1")
    return response.json()["messages"][-1]["status"] == "SUCCESS"


async def _until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    async with asyncio.timeout(WAIT):
        while not await check():
            await asyncio.sleep(0.05)  # polling the service's effects, with a deadline
    assert await check(), what


async def test_a_question_left_waiting_is_asked_again_and_answered(
    served: Service, llm: ScriptedLLM
) -> None:
    llm.script(
        tool_reply(ToolCall("todo", {"todos": [{"id": "1", "content": "pick", "status": "done"}]})),
        tool_reply(ToolCall("clarify", {"question": "Which size?", "choices": ["S", "M"]})),
        text_reply("Medium it is."),
    )
    with served.chat() as first:
        await first.expect("you> ")
        first.type("order a shirt\nand a hat")  # pasted: the 2nd line is no answer to come
        await first.expect("🔧 todo")
        await first.expect("? Which size?")
        await first.expect("2. M")
        await first.expect("your answer")
        first.ctrl_c()  # at the answer prompt: it leaves the prompt and offers what to do
        await first.expect("s, l or Enter? ")
        first.type("l")
        await first.expect("come back with: hermes-chat chat --session 1")
        assert await first.exit_code() == 0
    with served.chat("--session", "1") as again:
        await again.expect("you> order a shirt")  # the history, then the question again
        await again.expect("? Which size?")
        await again.expect("your answer")
        again.type("2")
        await again.expect("hermes> Medium it is.")
        await again.expect("you> ")
        again.ctrl_d()
        assert await again.exit_code() == 0
    assert again.output.count("? Which size?") == 1, again.output  # asked once
    assert '"user_response": "M"' in llm.requests[-1]["messages"][-1]["content"]
    assert "and a hat" not in str(llm.requests)


async def test_ctrl_c_during_a_run_leaves_it_running_or_stops_it(
    served: Service, llm: ScriptedLLM
) -> None:
    gate = asyncio.Event()
    llm.script(text_reply("A slow answer, at last.", gate=gate))
    with served.chat() as chat:
        await chat.expect("you> ")
        chat.type("take your time")
        await llm.wait_for_requests(1)
        chat.ctrl_c()
        await chat.expect("leave it running and quit")
        chat.type("l")
        await chat.expect("come back with: hermes-chat chat --session 1")
        assert await chat.exit_code() == 0
    runs = (await served.get("/api/chat/runs")).json()
    assert [r["sessionId"] for r in runs["running"]] == [1]  # the service's run, for operators
    gate.set()
    await _until(lambda: _finished(served, 1), "the run left going finished")
    with served.chat("--list") as listing:
        assert await listing.exit_code() == 0
    assert "    1  take your time  (terminal/API, " in listing.output, listing.output
    with served.chat("--last") as later:
        await later.expect("hermes> A slow answer, at last.")  # in the history
        await later.expect("you> ")
        llm.script(text_reply("Never seen.", gate=asyncio.Event()))
        later.type("and another")
        await llm.wait_for_requests(2)
        later.ctrl_c()
        await later.expect("s, l or Enter? ")
        later.type("s")
        await later.expect("⏹ Stopped")
        await later.expect("you> ")
        later.type("quit")
        assert await later.exit_code() == 0
    assert "Never seen." not in later.output


async def test_commands_and_quit_words_never_reach_the_agent(
    served: Service, llm: ScriptedLLM
) -> None:
    with served.chat() as chat:
        await chat.expect("you> ")
        assert (await served.get("/api/chat/sessions")).json()["items"] == []  # none at start
        chat.type("/help")
        await chat.expect("A line starting with // is sent")
        chat.type("/frobnicate now")
        await chat.expect("unknown command /frobnicate")
        chat.type("/sessions")
        await chat.expect("no conversations yet")
        chat.type("/new")
        await chat.expect("a new conversation starts with your next message")
        chat.type("exit")
        assert await chat.exit_code() == 0
    assert llm.requests == []
    assert (await served.get("/api/chat/sessions")).json()["items"] == []


async def test_a_session_that_is_not_there_says_how_to_list_them(served: Service) -> None:
    with served.chat("--session", "999") as chat:
        assert await chat.exit_code() == EXIT_NO_SESSION
    assert "no session 999: list them with `hermes-chat chat --list`" in chat.output


async def test_no_service_is_one_clear_line_and_its_own_exit_code(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with Terminal.start(["-m", "hermes_chat", "chat", "--url", url], tmp_path, newcomer_env()) as chat:
        assert await chat.exit_code() == EXIT_SERVICE_DOWN
    assert chat.output == (f"hermes-chat: no hermes-chat service on {url}: start it with "
                           "./scripts/serve\n")


async def test_a_tool_approval_is_decided_at_the_prompt(tmp_path: Path, llm: ScriptedLLM) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    rm = ToolCall("terminal", {"command": f"rm -rf {victim}"})
    llm.script(tool_reply(rm), text_reply("Kept it."), tool_reply(rm), text_reply("Gone."))
    async with service(tmp_path, llm, "BRIDGE_TOOLSETS=terminal,clarify,todo") as served:
        with served.chat() as chat:
            await chat.expect("you> ")
            chat.type("clean up")
            await chat.expect(f"rm -rf {victim}")
            await chat.expect("4. Deny")
            await chat.expect("your decision (a number): ")
            chat.ctrl_c()
            await chat.expect("s, l or Enter? ")
            chat.type("")  # keep watching: the approval still waits, so it is asked again
            await chat.expect(f"rm -rf {victim}")
            await chat.expect("your decision (a number): ")
            chat.type("maybe")  # anything but an offered decision is Deny
            await chat.expect("⛔ Denied by admin")
            await chat.expect("hermes> Kept it.")
            assert victim.exists()
            chat.type("clean up again")
            await chat.expect("1. Allow once")
            await chat.expect("your decision (a number): ")
            chat.type("1")
            await chat.expect("✅ Allowed once by admin")
            await chat.expect("hermes> Gone.")
            chat.type("/quit")
            assert await chat.exit_code() == 0
    assert not victim.exists()


async def test_with_the_bridge_down_nothing_is_sent_and_no_session_made(
    tmp_path: Path, llm: ScriptedLLM
) -> None:
    async with service(tmp_path, llm, "HERMES_BRIDGE_URL=http://127.0.0.1:9",
                       bridge="unreachable") as served:
        with served.chat() as chat:
            await chat.expect("does not answer (unreachable)")
            await chat.expect("you> ")
            chat.type("hello?")
            await chat.expect("nothing was sent")
            chat.ctrl_d()
            assert await chat.exit_code() == 0
        assert (await served.get("/api/chat/sessions")).json()["items"] == []
    assert llm.requests == []


def test_which_lines_are_commands() -> None:
    assert command_of("/help") == "/help" and command_of("/STOP now") == "/stop"
    assert command_of("exit") == "exit" and command_of("Quit") == "quit"
    assert command_of("exit the loop early, please") is None  # a message that starts so
    assert command_of("/etc/hosts is empty") is None  # a path is text
    assert command_of("//help") is None  # the escape: sent as "/help"


async def test_the_chat_finds_the_service_s_token_in_the_same_env_file(
    tmp_path: Path, llm: ScriptedLLM
) -> None:
    async with service(tmp_path, llm, "ADMIN_TOKEN=token-of-the-env-file") as served:
        with served.chat() as chat:  # nothing given by hand: .env has it
            await chat.expect("you> ")
            chat.type("/sessions")
            await chat.expect("no conversations yet")
            chat.ctrl_d()
            assert await chat.exit_code() == 0
        wrong = {**served.env, "ADMIN_TOKEN": "another-token"}
        with Terminal.start(["-m", "hermes_chat", "chat"], tmp_path, wrong) as refused:
            assert await refused.exit_code() == 1
    assert "refused our ADMIN_TOKEN: give `chat` the same ADMIN_TOKEN as `serve`" in refused.output


async def test_a_restart_of_the_service_does_not_end_the_chat_or_the_run(
    served: Service, llm: ScriptedLLM
) -> None:
    # The first Bridge never answers (it stops with serve); the next one re-drives the step.
    llm.script(text_reply("Lost with the first Bridge.", gate=asyncio.Event()),
               text_reply("Survived the restart."))
    with served.chat() as chat:
        await chat.expect("you> ")
        chat.type("a long job")
        await llm.wait_for_requests(1)
        await served.stop()
        await chat.expect("went away: waiting for it to come back")
        await served.start()
        await chat.expect("(the service is back)")
        await chat.expect("hermes> Survived the restart.")
        await chat.expect("you> ")
        chat.type("/quit")
        assert await chat.exit_code() == 0
    assert "Lost with the first Bridge." not in chat.output
    # the run's own time, across the restart, not the moment it took to catch up on it
    assert "(✅ Done in 0s" not in chat.output, chat.output


async def test_stop_ends_a_run_started_elsewhere(served: Service, llm: ScriptedLLM) -> None:
    llm.script(text_reply("Never finished.", gate=asyncio.Event()))
    session = (await served.call("POST", "/api/chat/sessions", json={})).json()["id"]
    with served.chat("--session", str(session)) as chat:
        await chat.expect("you> ")
        chat.type("/stop")
        await chat.expect("nothing to stop")
        started = await served.call("POST", f"/api/chat/sessions/{session}/runs",
                                    json={"message": "from the admin API"})
        await llm.wait_for_requests(1)
        chat.type("me too")  # refused while that run goes, saying what to do
        await chat.expect("(/stop stops it)")
        chat.type("/stop")
        await chat.expect("(⏹ stopped)")
        chat.type("/quit")
        assert await chat.exit_code() == 0
    state = f"/api/chat/runs/{started.json()['runId']}/state"

    async def stopped() -> bool:
        return bool((await served.get(state)).json()["status"] == "STOPPED")

    await _until(stopped, "the run stopped")
    assert len(llm.requests) == 1  # "me too" never reached the agent


async def test_a_spend_limit_stops_the_operators_run_and_refuses_the_next_saying_why(
    tmp_path: Path, llm: ScriptedLLM
) -> None:
    """The LIMIT_* settings of `serve` (the composition root) reach the run pool: the
    terminal chat's runs count as the operators', as the admin API's do."""
    held = asyncio.Event()  # the third call streams until the abort ends it
    todo = ToolCall("todo", {"todos": [{"id": "1", "content": "go on", "status": "pending"}]})
    llm.script(tool_reply(todo), tool_reply(todo), tool_reply(todo, text="Third", gate=held))
    async with service(tmp_path, llm, "LIMIT_USER_DAY_TOKENS=150") as served:
        with served.chat() as chat:
            await chat.expect("you> ")
            chat.type("go on")
            await chat.expect("so I stopped this answer")
            await chat.expect("you> ")
            chat.type("and again")
            await chat.expect("so I did not answer")
            chat.ctrl_d()
            assert await chat.exit_code() == 0
    held.set()
    assert "The operators have used 220 tokens of the 150 tokens they may use a day" in chat.output
    assert "the bot's operators can raise it" in chat.output and "Stopped" not in chat.output
    # The limit is checked as the third step begins (core/runtime/spending.py) and the abort
    # races the Bridge's third model request: that call is begun or not, never answered.
    assert len(llm.requests) in (2, 3)
