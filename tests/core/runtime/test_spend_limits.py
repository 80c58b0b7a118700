"""Spend limits in the run pool (core/usage/limits.py): a start over a limit is refused before
anything is written; a long run is stopped at its next model call once it reached one."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from core.chat import sessions
from core.errors import SpendLimitReached
from core.store.models import ChatMessage, LimitPeriod, LimitScope, LimitUnit, MessageStatus, UsageCall
from core.usage.limits import SpendLimits
from tests.bridge.harness import RunningBridge
from tests.core.runtime.waiting import finished
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.support.runtime import catalogue_for, opened_pool

DAY_TOKENS = (LimitScope.USER, LimitPeriod.DAY, LimitUnit.TOKENS)
TODO = {"todos": [{"id": "1", "content": "go on", "status": "in_progress"}]}


async def test_a_start_over_a_limit_is_refused_before_anything_is_written(
    db: str, bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path
) -> None:
    llm.script(text_reply("One."), text_reply("For Bob."))
    session = (await sessions.create_session()).id
    limits = SpendLimits({DAY_TOKENS: 100})
    async with opened_pool(bridge.url, catalogue_for(llm, skills_dir), limits=limits) as runs:
        await finished(runs, (await runs.start(session, "one", author="U1")).run_id)
        with pytest.raises(SpendLimitReached, match="^You have used 110 tokens of the 100"):
            await runs.start(session, "two", author="U1")
        first = await ChatMessage.filter(content="One.").first()
        with pytest.raises(SpendLimitReached):
            await runs.regenerate(first.id, author="U1")
        other = await finished(runs, (await runs.start(session, "bob", author="U2")).run_id)
    assert other.status == MessageStatus.SUCCESS  # his own limit, not U1's
    assert await ChatMessage.filter(content="two").count() == 0
    assert await ChatMessage.filter(role="ASSISTANT").count() == 2


async def test_a_long_run_is_stopped_at_its_next_model_call_once_over_a_limit(
    db: str, bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path
) -> None:
    held = asyncio.Event()  # the third call streams until the test is done: the abort ends it
    llm.script(tool_reply(ToolCall("todo", TODO)), tool_reply(ToolCall("todo", TODO)),
               tool_reply(ToolCall("todo", TODO), text="Third", gate=held),
               text_reply("Never."))
    session = (await sessions.create_session()).id
    limits = SpendLimits({DAY_TOKENS: 150})
    async with opened_pool(bridge.url, catalogue_for(llm, skills_dir), limits=limits) as runs:
        stopped = await finished(runs, (await runs.start(session, "go on", author="U1")).run_id)
    held.set()
    assert stopped.status == MessageStatus.FAILED
    assert stopped.error.startswith("You have used 220 tokens of the 150 tokens you may use a "
                                    "day, so I stopped this answer. It resets at midnight UTC")
    assert (await ChatMessage.get(id=stopped.message_id)).error == stopped.error
    assert len(llm.requests) == 3  # the first call under the limit went on; the third was cut
    assert await UsageCall.filter(message_id=stopped.message_id).count() == 2
