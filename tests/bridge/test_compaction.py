"""A long conversation makes hermes-agent compact it; the summary reaches the stream."""

from __future__ import annotations

from tests.bridge.harness import RunningBridge, names, run_body, run_to_end
from tests.fakes.llm_server import ScriptedLLM, ToolCall, request_text, text_reply, tool_reply

SUMMARY = "## Goal\nThe user asked 30 questions about lorem ipsum. SUMMARY-MARKER-7"


def is_summary_request(body: dict) -> bool:
    return "summarization agent" in request_text(body)


def long_history(exchanges: int) -> list[dict[str, str]]:
    history = []
    for i in range(exchanges):
        history.append({"role": "user", "content": f"question {i} " + "lorem ipsum " * 50})
        history.append({"role": "assistant", "content": f"answer {i} " + "dolor sit " * 50})
    return history


async def test_compaction_yields_the_real_summary(bridge: RunningBridge, llm: ScriptedLLM) -> None:
    # The provider reports a prompt far over the context window after the first call,
    # so hermes-agent compacts before its next call; the summary comes from the same LLM.
    llm.script(
        tool_reply(ToolCall("todo", {"todos": [{"id": "1", "content": "a", "status": "pending"}]}),
                   prompt_tokens=900_000),
        text_reply(SUMMARY, match=is_summary_request),
        text_reply("continuing after compaction"),
    )
    history = long_history(30)

    events = await run_to_end(bridge, run_body(llm, "one more question", history=history))

    compacted = next(e for e in events if e.name == "context_compacted")
    summary = compacted.data["summary"]
    assert summary.endswith(SUMMARY)  # hermes puts its own task snapshot before the model's text
    assert "CONTEXT COMPACTION" not in summary  # the handoff boilerplate is stripped
    # Messages from `compacted_until` on are still sent verbatim; those before it are
    # summarised (hermes also keeps the first few as they were).
    until = compacted.data["compacted_until"]
    assert 3 < until < len(history)
    seen = [str(m["content"]).strip() for m in llm.requests[-1]["messages"]]
    assert history[until]["content"].strip() in seen
    assert history[until - 2]["content"].strip() not in seen
    assert names(events)[-2:] == ["context_compacted", "done"]
    statuses = [e.data for e in events if e.name == "status"]
    assert statuses and statuses[0]["category"] == "lifecycle"
    assert "compacting" in statuses[0]["message"].lower()  # while the summary is written
    assert events[-1].data["final_text"] == "continuing after compaction"
    summary_requests = [r for r in llm.requests if is_summary_request(r)]
    assert len(summary_requests) == 1
    assert len(llm.requests[-1]["messages"]) < len(history)  # the model saw the short version
