"""The OpenAPI document: every route, its parameters, bodies, answers and the bearer scheme."""

from __future__ import annotations

from typing import Any

import httpx

from tests.admin.conftest import AUTH

ROUTES = {
    ("get", "/api/health"),
    ("get", "/api/chat/sessions"),
    ("post", "/api/chat/sessions"),
    ("get", "/api/chat/sessions/{session_id}"),
    ("patch", "/api/chat/sessions/{session_id}"),
    ("delete", "/api/chat/sessions/{session_id}"),
    ("post", "/api/chat/sessions/{session_id}/reset"),
    ("get", "/api/chat/sessions/{session_id}/export"),
    ("get", "/api/chat/sessions/{session_id}/attachments/{attachment_id}"),
    ("get", "/api/chat/sessions/{session_id}/messages"),
    ("get", "/api/chat/sessions/{session_id}/memory"),
    ("patch", "/api/chat/messages/{message_id}"),
    ("get", "/api/chat/messages/{message_id}/versions"),
    ("post", "/api/chat/messages/{message_id}/activate"),
    ("post", "/api/chat/messages/{message_id}/regenerate"),
    ("post", "/api/chat/sessions/{session_id}/runs"),
    ("get", "/api/chat/runs"),
    ("get", "/api/chat/runs/{run_id}/stream"),
    ("get", "/api/chat/runs/{run_id}/state"),
    ("post", "/api/chat/runs/{run_id}/resume"),
    ("post", "/api/chat/runs/{run_id}/stop"),
    ("get", "/api/chat/approvals"),
    ("post", "/api/chat/approvals/{approval_id}/decision"),
    ("get", "/api/chat/approval-rules"),
    ("delete", "/api/chat/approval-rules/{rule_id}"),
    ("get", "/api/models"),
    ("get", "/api/skills"),
    ("get", "/api/usage"),
    ("get", "/api/limits"),
    ("put", "/api/limits"),
    ("delete", "/api/limits"),
    ("get", "/api/schedules"),
    ("post", "/api/schedules"),
    ("get", "/api/schedules/{schedule_id}"),
    ("patch", "/api/schedules/{schedule_id}"),
    ("post", "/api/schedules/{schedule_id}/pause"),
    ("post", "/api/schedules/{schedule_id}/resume"),
    ("delete", "/api/schedules/{schedule_id}"),
    ("get", "/api/channels/{platform}/{workspace}/{channel}"),
    ("put", "/api/channels/{platform}/{workspace}/{channel}"),
    ("delete", "/api/channels/{platform}/{workspace}/{channel}"),
    ("post", "/api/channels/{platform}/{workspace}/{channel}/apply"),
}


BODIES = {  # the routes that take a JSON body: its schema, and whether it may be left out
    ("post", "/api/chat/sessions"): ("SessionCreate", True),
    ("patch", "/api/chat/sessions/{session_id}"): ("SessionPatch", True),
    ("post", "/api/chat/sessions/{session_id}/reset"): ("ResetIn", False),
    ("patch", "/api/chat/messages/{message_id}"): ("MessageEdit", True),
    ("post", "/api/chat/sessions/{session_id}/runs"): ("RunStart", True),
    ("post", "/api/chat/runs/{run_id}/resume"): ("ResumeIn", True),
    ("post", "/api/chat/approvals/{approval_id}/decision"): ("DecisionIn", True),
    ("put", "/api/limits"): ("LimitIn", True),
    ("post", "/api/schedules"): ("ScheduleIn", True),
    ("patch", "/api/schedules/{schedule_id}"): ("ScheduleEditIn", True),
    ("put", "/api/channels/{platform}/{workspace}/{channel}"): ("ChannelIn", True),
}
NO_DATABASE = {("get", "/api/models"), ("get", "/api/skills"), ("get", "/api/chat/runs")}


async def _document(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/schema/openapi.json", headers=AUTH)
    assert response.status_code == 200
    return response.json()


async def test_every_route_is_documented_with_its_answers(db: str, anonymous: httpx.AsyncClient) -> None:
    doc = await _document(anonymous)
    operations = {(m, p): op for p, item in doc["paths"].items() for m, op in item.items()}
    assert set(operations) == ROUTES
    for (method, path), op in operations.items():
        success = [s for s in op["responses"] if s.startswith("2")]
        assert len(success) == 1, (method, path)
        if success != ["204"]:
            assert op["responses"][success[0]]["content"], (method, path)
        if path == "/api/health":
            assert "security" not in op
            continue
        assert op["security"] == [{"BearerToken": []}]
        for status in ("400", "401"):
            schema = op["responses"][status]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorBody"}
        if "{" in path:
            assert "404" in op["responses"]
        if method in ("post", "patch") and "requestBody" in op:
            assert "413" in op["responses"]
    assert doc["components"]["securitySchemes"]["BearerToken"] == {"type": "http", "scheme": "bearer"}


async def test_bodies_are_camel_case_and_closed(db: str, anonymous: httpx.AsyncClient) -> None:
    schemas = (await _document(anonymous))["components"]["schemas"]
    assert set(schemas["SessionPatch"]["properties"]) == {"title", "modelId", "skillFolder", "status"}
    for name in ("SessionCreate", "SessionPatch", "ResetIn", "MessageEdit", "RunStart", "ResumeIn",
                 "DecisionIn", "ScheduleIn"):
        assert schemas[name]["additionalProperties"] is False
    assert "hasActiveRun" in schemas["SessionOut"]["required"]
    thinking = schemas["ThinkingOut"]["properties"]
    assert {"thinking", "status", "tools", "todos", "pendingClarify", "toolCalls",
            "elapsedSeconds", "finalText", "error"} <= set(thinking)


async def test_the_export_documents_both_formats_and_the_file_name(
    db: str, anonymous: httpx.AsyncClient
) -> None:
    doc = await _document(anonymous)
    ok = doc["paths"]["/api/chat/sessions/{session_id}/export"]["get"]["responses"]["200"]
    assert set(ok["content"]) == {"text/markdown", "application/json"}
    assert "Content-Disposition" in ok["headers"]


async def test_the_run_stream_is_documented_as_server_sent_events(
    db: str, anonymous: httpx.AsyncClient
) -> None:
    doc = await _document(anonymous)
    op = doc["paths"]["/api/chat/runs/{run_id}/stream"]["get"]
    assert set(op["responses"]["200"]["content"]) == {"text/event-stream"}
    event = op["responses"]["200"]["content"]["text/event-stream"]["schema"]  # one event
    assert event["required"] == ["id", "event", "data"]
    assert {"text", "clarify_request", "done", "error"} <= set(event["properties"]["event"]["enum"])
    parameters = {(p["in"], p["name"]): p["schema"] for p in op["parameters"]}
    assert set(parameters) == {("path", "run_id"), ("header", "Last-Event-ID"), ("query", "lastEventId")}
    assert parameters[("query", "lastEventId")]["minimum"] == 0
    start = doc["components"]["schemas"]["RunStart"]
    assert start["required"] == ["message"]
    assert set(start["properties"]) == {
        "message", "modelId", "skillFolder", "maxIterations", "parentMessageId"}
    state = doc["components"]["schemas"]["RunStateOut"]["properties"]
    assert state["thinking"] == {"$ref": "#/components/schemas/ThinkingOut"}


async def test_every_body_is_documented_and_only_resets_may_leave_it_out(
    db: str, anonymous: httpx.AsyncClient
) -> None:
    doc = await _document(anonymous)
    operations = {(m, p): op for p, item in doc["paths"].items() for m, op in item.items()}
    with_body = {key for key, op in operations.items() if "requestBody" in op}
    assert with_body == set(BODIES)
    for key, (name, required) in BODIES.items():
        body = operations[key]["requestBody"]
        assert body["required"] is required, key
        assert name in str(body["content"]["application/json"]["schema"]), key


async def test_a_database_outage_is_documented_wherever_a_route_reads_it(
    db: str, anonymous: httpx.AsyncClient
) -> None:
    doc = await _document(anonymous)
    for path, item in doc["paths"].items():
        for method, op in item.items():
            assert ("503" in op["responses"]) is ((method, path) not in NO_DATABASE), (method, path)
