"""What the agent's model calls spent, as operators read it: each answer's usage and the
session's totals in the detail and both exports; `/api/usage`, summed by user, channel,
workspace, model or day."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from admin.app import create_app
from admin.services import AdminServices
from core.agent.events import Usage
from core.chat import sessions
from core.config import Settings
from core.runtime.pool import RunPool
from core.store.models import ChatMessage, LimitPeriod, LimitScope, LimitUnit, MessageStatus
from core.usage import ledger
from core.usage.limits import SpendLimits
from core.usage.spenders import Spender
from tests.admin.conftest import AUTH, TOKEN, admin_on
from tests.admin.server import serving
from tests.bridge.harness import RunningBridge
from tests.support.runtime import PRICE, catalogue_for, opened_pool
from tests.core.runtime.waiting import finished
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply

TODO = {"todos": [{"id": "1", "content": "add up", "status": "in_progress"}]}
CALL = 280e-6  # a scripted call (100 + 10 tokens) at PRICE (tests/support/runtime.py)


def _usage(calls: int, cost: float | None) -> dict:
    return {"calls": calls, "promptTokens": 100 * calls, "completionTokens": 10 * calls,
            "cachedTokens": 0, "tokens": 110 * calls,
            "cost": None if cost is None else pytest.approx(cost)}


async def test_the_detail_and_exports_show_each_answers_usage_and_the_sessions_totals(
    priced_pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(tool_reply(ToolCall("todo", TODO)), text_reply("Added up."), text_reply("Again."))
    session = (await sessions.create_session()).id
    async with admin_on(priced_pool) as url, httpx.AsyncClient(base_url=url, headers=AUTH) as api:
        for words in ("add up", "again"):
            started = (await api.post(f"/api/chat/sessions/{session}/runs",
                                      json={"message": words})).json()
            await finished(priced_pool, started["runId"])
        detail = (await api.get(f"/api/chat/sessions/{session}")).json()
        markdown = (await api.get(f"/api/chat/sessions/{session}/export?format=md")).text
        exported = (await api.get(f"/api/chat/sessions/{session}/export?format=json")).json()

    answers = [m for m in detail["messages"] if m["role"] == "ASSISTANT"]
    assert [a["usage"] for a in answers] == [_usage(2, 2 * CALL), _usage(1, CALL)]
    assert [m.get("usage") for m in detail["messages"] if m["role"] == "USER"] == [None, None]
    assert detail["usage"] == _usage(3, 3 * CALL)
    assert exported["session"]["usage"] == _usage(3, 3 * CALL)
    assert [m["usage"] for m in exported["messages"] if m["role"] == "ASSISTANT"] == [
        _usage(2, 2 * CALL), _usage(1, CALL)]
    assert "- Usage: 3 model calls · 330 tokens (300 in, 30 out) · $0.00084" in markdown
    assert "_Usage: 2 model calls · 220 tokens (200 in, 20 out) · $0.00056_" in markdown


async def _spend(seq: int, spender: Spender, day: int, model: str = "small") -> None:
    usage = Usage(seq=seq, at=datetime(2026, 8, day, 12, tzinfo=UTC), model=model,
                  prompt_tokens=100, completion_tokens=10, cost=0.25)
    await ledger.record(ledger.Call(1, "run", 1, spender, usage))


@pytest.fixture
async def spent(db: str) -> None:
    alice, bob = Spender("slack", "T1", "C1", "U1"), Spender("discord", "G1", "D1", "D9")
    for seq, (spender, day, model) in enumerate([(alice, 1, "small"), (alice, 2, "large"),
                                                 (bob, 2, "small")], start=1):
        await _spend(seq, spender, day, model)


async def test_usage_sums_calls_by_what_is_asked_over_a_range_of_days(
    api: httpx.AsyncClient, spent: None
) -> None:
    by_user = (await api.get("/api/usage", params={"by": "user"})).json()
    assert by_user["by"] == "user" and by_user["from"] is None and by_user["nextCursor"] is None
    assert [(i["key"], i["usage"]["calls"], i["usage"]["tokens"]) for i in by_user["items"]] == [
        ({"platform": "discord", "user": "D9"}, 1, 110), ({"platform": "slack", "user": "U1"}, 2, 220)]
    assert by_user["items"][1]["usage"]["cost"] == pytest.approx(0.5)
    day = (await api.get("/api/usage", params={"by": "model", "from": "2026-08-02",
                                               "to": "2026-08-02", "platform": "slack"})).json()
    assert (day["from"], day["to"]) == ("2026-08-02", "2026-08-02")
    assert [(i["key"], i["usage"]["calls"]) for i in day["items"]] == [({"model": "large"}, 1)]
    first = (await api.get("/api/usage", params={"by": "day", "limit": 1})).json()
    rest = (await api.get("/api/usage", params={"by": "day", "cursor": first["nextCursor"]})).json()
    assert [i["key"]["day"] for i in first["items"] + rest["items"]] == ["2026-08-01", "2026-08-02"]
    assert rest["nextCursor"] is None


@pytest.mark.parametrize(("params", "field"), [
    ({}, None), ({"by": "team"}, "by"), ({"by": "user", "from": "yesterday"}, "from"),
    ({"by": "user", "from": "2026-08-02", "to": "2026-08-01"}, "from"),
    ({"by": "user", "platform": "irc"}, "platform"), ({"by": "user", "limit": 0}, "limit"),
    ({"by": "user", "cursor": "not-ours"}, None),
])
async def test_a_bad_question_is_400_naming_what_is_wrong(
    api: httpx.AsyncClient, spent: None, params: dict, field: str | None
) -> None:
    answer = await api.get("/api/usage", params=params)
    assert answer.status_code == 400, answer.text
    assert answer.json()["code"] == "invalid_input" and answer.json().get("field") == field


async def test_limits_are_listed_set_and_removed(api: httpx.AsyncClient) -> None:
    empty = (await api.get("/api/limits")).json()
    assert empty == {"defaults": [], "overrides": []}
    body = {"scope": "user", "subject": "U1", "period": "day", "unit": "tokens", "amount": 5000}
    set_ = await api.put("/api/limits", json=body)
    assert set_.status_code == 200, set_.text
    assert {k: set_.json()[k] for k in body} == body
    lifted = await api.put("/api/limits", json={**body, "scope": "channel", "subject": "C1",
                                                "unit": "cost", "amount": None})
    assert lifted.json()["amount"] is None
    listed = (await api.get("/api/limits")).json()["overrides"]
    assert [(o["scope"], o["subject"], o["unit"], o["amount"]) for o in listed] == [
        ("channel", "C1", "cost", None), ("user", "U1", "tokens", 5000.0)]
    again = await api.put("/api/limits", json={**body, "amount": 7000})
    assert again.json()["amount"] == 7000 and len((await api.get("/api/limits")).json()[
        "overrides"]) == 2  # the same limit, changed
    query = {k: body[k] for k in ("scope", "subject", "period", "unit")}
    removed = await api.delete("/api/limits", params=query)
    assert removed.status_code == 204, removed.text
    gone = await api.delete("/api/limits", params=query)
    assert (gone.status_code, gone.json()["code"]) == (404, "not_found")


@pytest.mark.parametrize(("body", "field"), [
    ({"scope": "team"}, "scope"), ({"period": "week"}, "period"), ({"unit": "euros"}, "unit"),
    ({"amount": -1}, "amount"), ({"subject": ""}, "subject"), ({"subject": "x" * 65}, "subject"),
])
async def test_a_bad_limit_is_400_naming_its_field(api: httpx.AsyncClient, db: str, body: dict,
                                                   field: str) -> None:
    good = {"scope": "user", "subject": "U1", "period": "day", "unit": "tokens", "amount": 1}
    answer = await api.put("/api/limits", json={**good, **body})
    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == field


UNLIMITED = "operator-token-without-spend-limits"
DAY_TOKENS = (LimitScope.USER, LimitPeriod.DAY, LimitUnit.TOKENS)


async def test_a_start_over_a_limit_is_429_unless_the_operators_token_says_otherwise(
    bridge: RunningBridge, llm: ScriptedLLM, skills_dir: Path, db: str
) -> None:
    llm.script(text_reply("One."), text_reply("Two."), text_reply("Three."))
    session = (await sessions.create_session()).id
    limits = SpendLimits({DAY_TOKENS: 100})
    async with opened_pool(bridge.url, catalogue_for(llm, skills_dir, PRICE), limits=limits) as runs:
        services = AdminServices(runs.bridge, runs.catalogue, runs)
        settings = Settings(admin_token=TOKEN, admin_unlimited_token=UNLIMITED)
        async with serving(create_app(settings, services)) as url, \
                httpx.AsyncClient(base_url=url, headers=AUTH) as api:
            runs_url = f"/api/chat/sessions/{session}/runs"
            first = (await api.post(runs_url, json={"message": "one"})).json()
            await finished(runs, first["runId"])  # 110 tokens: the operators' 100 a day spent
            refused = await api.post(runs_url, json={"message": "two"})
            again = await api.post(f"/api/chat/messages/{first['messageId']}/regenerate")
            unlimited = {"Authorization": f"Bearer {UNLIMITED}"}
            exempt = await api.post(runs_url, json={"message": "three"}, headers=unlimited)
            done = await finished(runs, exempt.json()["runId"])
    assert (refused.status_code, again.status_code) == (429, 429)
    body = refused.json()
    assert body["code"] == "spend_limit" and body["message"].startswith(
        "The operators have used 110 tokens of the 100 tokens they may use a day")
    assert "the bot's operators can raise it" in body["message"]
    assert {k: body["limit"][k] for k in ("scope", "subject", "period", "unit", "amount",
                                          "used")} == {
        "scope": "user", "subject": "admin", "period": "day", "unit": "tokens", "amount": 100,
        "used": 110}
    assert 0 < int(refused.headers["Retry-After"]) <= 86400
    assert exempt.status_code == 201 and done.status == MessageStatus.SUCCESS
    assert (await ChatMessage.get(id=done.message_id)).spend_exempt
    assert await ChatMessage.filter(content="two").count() == 0  # refused: nothing written
