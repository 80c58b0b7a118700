"""Bad data never poisons a replica (issue 12 §4): NUL and lone surrogates in model text, tool
arguments and results, on both backends (PostgreSQL refuses NUL in text); the run succeeds and a
run beside it on the same pool is stored whole. A malformed `done` or `clarify_request` fails
its run with a clear reason instead of leaving it to hang."""

from __future__ import annotations

import asyncio
import json

from core.chat import sessions
from core.runtime.pool import RunPool
from core.store.models import ChatMessageLog, ClarifyPause, MessageStatus
from core.text.safe_text import REPLACEMENT as R
from tests.core.runtime.waiting import finished, message, stored_seqs, until
from tests.fakes.fake_bridge import FakeBridge, Raw, Stall, ev
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply

NUL, LONE = "\x00", "\ud83d"  # json.dumps sends them as the escapes \u0000 and \ud83d


def _storable(text: str | None) -> bool:
    return text is None or (NUL not in text and all(not 0xD800 <= ord(c) <= 0xDFFF for c in text))


async def _rows(message_id: int) -> list[ChatMessageLog]:
    return await ChatMessageLog.filter(message_id=message_id).order_by("seq")


async def test_unstorable_characters_from_the_bridge_are_replaced_and_the_run_succeeds(
    fake_pool: RunPool, fake_bridge: FakeBridge
) -> None:
    """What reaches the runtime over the wire, whatever sent it (another Bridge, a proxy)."""
    bad_script = [
        ev("text", text=f"thinking {NUL} with {LONE} halves"),
        ev("tool_start", tool_call_id="c1", tool_name=f"search{NUL}",
           args={f"q{LONE}": [f"x{NUL}", {"deep": LONE}]}),
        Stall("bad"),  # the run beside it writes its rows in between
        ev("tool_end", tool_call_id="c1", tool_name=f"search{NUL}", result=f"found {NUL}{LONE}"),
        ev("todo_update", todos=[{"id": "1", "content": f"t{NUL}", "status": "pending"}]),
        ev("done", final_text=f"answer {NUL} and {LONE}."),
    ]
    good_script = [*(ev("text", text=f"word{i} ") for i in range(40)), Stall("good"),
                   ev("done", final_text="the whole story")]
    fake_bridge.default_script = lambda run_id: good_script
    session = (await sessions.create_session()).id
    bad = await fake_pool.start(session, "go")
    fake_bridge.script(bad.run_id, bad_script)  # before its driver task first runs
    good = await fake_pool.start((await sessions.create_session()).id, "tell me")
    await until(fake_pool, good.run_id, lambda u: u.state.last_seq == 40)
    fake_bridge.release("bad")
    fake_bridge.release("good")
    bad_end, good_end = await finished(fake_pool, bad.run_id), await finished(fake_pool, good.run_id)

    assert bad_end.status == MessageStatus.SUCCESS, bad_end.error
    assert (await message(bad_end.message_id)).content == f"answer {R} and {R}."
    rows = await _rows(bad_end.message_id)
    assert [r.seq for r in rows] == [1, 2, 3, 4, 5]
    assert all(_storable(r.content) and _storable(r.meta_json) and _storable(r.tool_name)
               for r in rows)
    assert rows[0].content == f"thinking {R} with {R} halves"
    assert json.loads(rows[1].meta_json or "")["args"] == {f"q{R}": [f"x{R}", {"deep": R}]}
    assert (rows[1].tool_name, rows[2].content) == (f"search{R}", f"found {R}{R}")
    assert bad_end.state.todos[0].content == f"t{R}"

    assert good_end.status == MessageStatus.SUCCESS, good_end.error
    assert await stored_seqs(good_end.message_id) == list(range(1, 42))
    assert (await message(good_end.message_id)).content == "the whole story"


async def test_the_real_agent_streams_nul_and_lone_surrogates_and_both_runs_succeed(
    pool: RunPool, llm: ScriptedLLM
) -> None:
    """The scripted model sends them in its streamed text, in a tool's arguments (the todo
    tool, which echoes them in its result) and in its answer; hermes-agent passes them on."""
    gate = asyncio.Event()
    todos = {"todos": [{"id": "1", "content": f"buy {NUL} milk {LONE}", "status": "pending"}]}
    llm.script(
        tool_reply(ToolCall("todo", todos), text=f"Plan {NUL} first {LONE}.",
                   match=lambda body: "shopping" in json.dumps(body)),
        text_reply(f"Bought {NUL} it {LONE}.",
                   match=lambda body: "shopping" in json.dumps(body)),
        text_reply("A long and clean story. " * 8, gate=gate, chunk_size=12,
                   match=lambda body: "story" in json.dumps(body)),
    )
    story = await pool.start((await sessions.create_session()).id, "a story please")
    await until(pool, story.run_id, lambda u: u.state.last_seq >= 1)
    shopping = await pool.start((await sessions.create_session()).id, "my shopping")
    bought = await finished(pool, shopping.run_id)
    gate.set()
    told = await finished(pool, story.run_id)

    assert bought.status == MessageStatus.SUCCESS, bought.error
    assert (await message(bought.message_id)).content == f"Bought {R} it {R}."
    rows = await _rows(bought.message_id)
    kinds = [r.kind for r in rows]
    assert {"text", "tool_start", "tool_end", "todo_update", "done"} <= set(kinds)
    assert all(_storable(r.content) and _storable(r.meta_json) for r in rows)
    start = next(r for r in rows if r.kind == "tool_start")
    assert json.loads(start.meta_json or "")["args"]["todos"][0]["content"] == f"buy {R} milk {R}"
    assert R in next(r for r in rows if r.kind == "tool_end").content
    assert bought.state.todos[0].content == f"buy {R} milk {R}"
    assert f"Plan {R} first {R}." in "".join(r.content or "" for r in rows if r.kind == "text")

    assert told.status == MessageStatus.SUCCESS, told.error
    seqs = await stored_seqs(told.message_id)
    assert seqs == list(range(1, len(seqs) + 1)) and seqs[-1] == told.state.last_seq
    assert (await message(told.message_id)).content == ("A long and clean story. " * 8).strip()


async def test_a_malformed_done_fails_the_run_with_its_reason(
    fake_pool: RunPool, fake_bridge: FakeBridge
) -> None:
    fake_bridge.default_script = lambda run_id: [
        ev("text", text="almost"), Raw('id: 2\nevent: done\ndata: {"final": "no text"}\n\n'),
        Stall("never"),
    ]
    run = await fake_pool.start((await sessions.create_session()).id, "go")
    ended = await finished(fake_pool, run.run_id)
    assert ended.status == MessageStatus.FAILED
    assert ended.error is not None and "malformed done event (id '2')" in ended.error
    assert (await message(ended.message_id)).error == ended.error
    assert await stored_seqs(ended.message_id) == [1]  # what came before is kept


async def test_a_malformed_question_fails_the_run_instead_of_waiting_forever(
    fake_pool: RunPool, fake_bridge: FakeBridge
) -> None:
    too_long = json.dumps({"clarify_id": "k" * 100, "question": "Which?", "choices": ["a"]})
    fake_bridge.default_script = lambda run_id: [
        ev("text", text="let me ask"), Raw(f"id: 2\nevent: clarify_request\ndata: {too_long}\n\n"),
        Stall("never"),
    ]
    run = await fake_pool.start((await sessions.create_session()).id, "go")
    ended = await finished(fake_pool, run.run_id)
    assert ended.status == MessageStatus.FAILED
    assert ended.error is not None and "malformed clarify_request event" in ended.error
    assert not await ClarifyPause.exists()
