"""The session list: keyset paging, filters, search, previews and the run-in-flight flag."""

from __future__ import annotations

import re
from datetime import timedelta

import httpx
import pytest
from tortoise import connections
from tortoise.transactions import in_transaction

from core.chat import tree
from core.chat.sessions import session_page_query, touch_session
from core.store.models import ChatMessage, MessageStatus, Platform, Role, SessionStatus
from tests.admin.builders import T0, conversation, running_turn
from tests.conftest import BACKEND


async def _ids(api: httpx.AsyncClient, query: str = "") -> list[int]:
    response = await api.get(f"/api/chat/sessions{query}")
    assert response.status_code == 200, response.text
    return [s["id"] for s in response.json()["items"]]


async def test_paging_is_stable_while_new_sessions_arrive(db: str, api: httpx.AsyncClient) -> None:
    old = [(await conversation(f"s{i}", at=T0 + timedelta(minutes=i))).id for i in range(5)]
    seen: list[int] = []
    cursor = ""
    for round_ in range(10):
        page = (await api.get("/api/chat/sessions", params={"limit": 2, "cursor": cursor})).json()
        seen += [s["id"] for s in page["items"]]
        # Newer activity arrives between page reads; it belongs before page one, not in between.
        await conversation(f"new {round_}")
        if page["nextCursor"] is None:
            break
        cursor = page["nextCursor"]
    assert seen == list(reversed(old))


async def test_newest_activity_first(db: str, api: httpx.AsyncClient) -> None:
    a = await conversation("a", at=T0)
    b = await conversation("b", at=T0 + timedelta(hours=1))
    assert await _ids(api) == [b.id, a.id]
    await conversation("c", at=T0 - timedelta(days=1))
    await tree.append_user(a.id, "wake up")
    await touch_session(a.id, T0 + timedelta(hours=2))
    assert (await _ids(api))[:2] == [a.id, b.id]


async def test_q_searches_titles_and_message_text_ignoring_case(db: str, api: httpx.AsyncClient) -> None:
    by_title = await conversation("Kubernetes upgrade", ("plan it", "ok"), at=T0)
    by_text = await conversation("Misc", ("our KUBERNETES cluster is slow", "look at etcd"), at=T0)
    by_answer = await conversation("Other", ("why?", "because kubernetes"), at=T0)
    await conversation("Unrelated", ("hello", "hi"), at=T0)
    assert set(await _ids(api, "?q=kubernetes")) == {by_title.id, by_text.id, by_answer.id}
    assert await _ids(api, "?q=ETCD") == [by_text.id]
    assert await _ids(api, "?q=nothing+like+it") == []


async def test_q_is_a_literal_text_not_a_pattern(db: str, api: httpx.AsyncClient) -> None:
    percent = await conversation("100% done", at=T0)
    underscore = await conversation("snake_case names", at=T0)
    quote = await conversation("it's O'Brien's", at=T0)
    await conversation("1000 done, snakeXcase", at=T0)
    assert await _ids(api, "?q=100%25") == [percent.id]
    assert await _ids(api, "?q=e_c") == [underscore.id]
    assert await _ids(api, "?q=O%27Brien") == [quote.id]
    assert await _ids(api, "?q=%25") == [percent.id]


async def test_platform_and_status_filters(db: str, api: httpx.AsyncClient) -> None:
    slack = await conversation("s", platform=Platform.SLACK, thread="1", at=T0)
    discord = await conversation("d", platform=Platform.DISCORD, thread="2", at=T0)
    admin_made = await conversation("a", at=T0)
    await api.patch(f"/api/chat/sessions/{discord.id}", json={"status": "ARCHIVED"})
    assert await _ids(api, "?platform=slack") == [slack.id]
    assert await _ids(api, "?platform=discord") == [discord.id]
    assert await _ids(api, "?platform=discord&status=ACTIVE") == []
    assert set(await _ids(api, "?status=ACTIVE")) == {slack.id, admin_made.id}
    rows = (await api.get("/api/chat/sessions?platform=slack")).json()["items"]
    assert rows[0]["bindings"] == [
        {"platform": "slack", "workspace": "W1", "channel": "C1", "thread": "1"}
    ]


async def test_has_active_run_comes_from_the_database(db: str, api: httpx.AsyncClient) -> None:
    queued = await conversation("queued", at=T0)
    running = await conversation("running", at=T0)
    idle = await conversation("idle", ("q", "a"), at=T0)
    await running_turn(queued.id, "wait for me", MessageStatus.QUEUED)
    answer = await running_turn(running.id, "go", MessageStatus.RUNNING)
    rows = {s["id"]: s for s in (await api.get("/api/chat/sessions")).json()["items"]}
    assert [rows[s.id]["hasActiveRun"] for s in (queued, running, idle)] == [True, True, False]
    await ChatMessage.filter(id=answer.id).update(status=MessageStatus.SUCCESS)
    rows = {s["id"]: s for s in (await api.get("/api/chat/sessions")).json()["items"]}
    assert rows[running.id]["hasActiveRun"] is False


async def test_the_preview_follows_the_active_branch(db: str, api: httpx.AsyncClient) -> None:
    session = await conversation("p", ("first question", "first answer"), at=T0)
    first_answer = await ChatMessage.get(session_id=session.id, role=Role.ASSISTANT)
    await running_turn(session.id, "a   long\n\nquestion " + "x" * 200, MessageStatus.RUNNING)

    def preview() -> object:
        return rows[0]["lastMessagePreview"]

    rows = (await api.get("/api/chat/sessions")).json()["items"]
    # The running answer has no text yet: the question it answers stands in for it.
    assert isinstance(preview(), str) and preview().startswith("a long question xxx")
    assert len(preview()) == 120 and preview().endswith("…")

    # A newer version of the first answer, then back to the old one: the old branch's tail
    # (the running turn) is the preview again, not the newer message made last.
    regenerated = await tree.regenerate(first_answer.id, status=MessageStatus.SUCCESS)
    await ChatMessage.filter(id=regenerated.id).update(content="second answer")
    rows = (await api.get("/api/chat/sessions")).json()["items"]
    assert preview() == "second answer"
    await tree.activate(first_answer.id)
    rows = (await api.get("/api/chat/sessions")).json()["items"]
    assert isinstance(preview(), str) and preview().startswith("a long question")


@pytest.mark.skipif(BACKEND != "postgres", reason="the plans of PostgreSQL, the production database")
async def test_every_page_reads_an_index_not_every_session(db: str, api: httpx.AsyncClient) -> None:
    connection = connections.get("default")
    await connection.execute_script(
        "INSERT INTO chat_session (uuid, title, hermes_session, status, created_at,"
        " last_message_at, updated_at) SELECT gen_random_uuid(), 's' || i, 'chat-' || i,"
        " CASE WHEN i % 10 = 0 THEN 'ARCHIVED' ELSE 'ACTIVE' END, now(),"
        " now() - i * interval '1 second', now() FROM generate_series(1, 20000) i; ANALYZE chat_session"
    )
    deep = ""
    for _ in range(3):  # a cursor far down the list
        page = (await api.get("/api/chat/sessions", params={"limit": 200, "cursor": deep})).json()
        deep = page["nextCursor"]
    for status in (None, SessionStatus.ACTIVE, SessionStatus.ARCHIVED):
        for cursor in ("", deep):
            query = session_page_query(status=status, cursor=cursor)
            plan = "\n".join(row["QUERY PLAN"] for row in await connection.execute_query_dict(
                "EXPLAIN ANALYZE " + query.sql(params_inline=True)))
            assert "Index Scan" in plan and "Seq Scan" not in plan, plan
            assert not re.search(r"(?<!Incremental )Sort  \(", plan), plan  # no sort of them all
            # The scan starts at the cursor: it does not read its way down to it.
            skipped = [int(n) for n in re.findall(r"Rows Removed by Filter: (\d+)", plan)]
            assert sum(skipped) <= 50, plan


@pytest.mark.skipif(BACKEND != "postgres", reason="the plans of PostgreSQL, the production database")
async def test_a_search_reads_the_trigram_indexes_not_every_message(db: str) -> None:
    connection = connections.get("default")
    await connection.execute_script(
        "INSERT INTO chat_session (uuid, title, hermes_session, status, created_at,"
        " last_message_at, updated_at) SELECT gen_random_uuid(), 'session ' || i, 'chat-' || i,"
        " 'ACTIVE', now(), now() - i * interval '1 second', now() FROM generate_series(1, 3000) i;"
        " INSERT INTO chat_message (session_id, role, content, status, is_active, branch_order,"
        " created_at, spend_exempt) SELECT id, 'USER', 'question ' || id || ' about invoices',"
        " 'SENT', true, 0, now(), false FROM chat_session; ANALYZE chat_session; ANALYZE chat_message"
    )
    query = session_page_query(q="question 2500 about")
    query._make_query()  # the text is a bound parameter of the subqueries: explain it so
    sql, params = query.query.get_parameterized_sql()
    async with in_transaction("default") as explaining:
        # At this size a scan costs little: the planner is told to avoid one, which it can
        # only do when the indexes' expressions are the query's.
        await explaining.execute_script("SET LOCAL enable_seqscan = off")
        plan = "\n".join(row["QUERY PLAN"] for row in await explaining.execute_query_dict(
            "EXPLAIN ANALYZE " + sql, params))
    assert "idx_chat_message_text" in plan and "idx_chat_session_title_text" in plan, plan
    assert "Seq Scan on chat_message" not in plan, plan
    [found] = await query
    assert (await ChatMessage.get(session_id=found.id)).content == "question 2500 about invoices"
