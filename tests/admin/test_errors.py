"""Errors are JSON `{code, message, field?}` with stable codes; no input ever gets a 500."""

from __future__ import annotations

import logging

import httpx
import pytest

from admin.app import create_app
from admin.services import AdminServices
from core.agent.bridge.types import Memory
from core.agent.catalogue import Catalogue
from core.config import Settings
from core.runtime.pool import RunPool
from core.text.field_errors import MAX_ID
from tests.admin.builders import conversation
from tests.admin.conftest import AUTH
from tests.admin.server import serving

ID_ROUTES = [
    ("GET", "/api/chat/sessions/{}", None),
    ("PATCH", "/api/chat/sessions/{}", {"title": "x"}),
    ("DELETE", "/api/chat/sessions/{}", None),
    ("POST", "/api/chat/sessions/{}/reset", {}),
    ("GET", "/api/chat/sessions/{}/export", None),
    ("GET", "/api/chat/sessions/{}/messages", None),
    ("GET", "/api/chat/sessions/{}/memory", None),
    ("PATCH", "/api/chat/messages/{}", {"content": "x"}),
    ("GET", "/api/chat/messages/{}/versions", None),
    ("POST", "/api/chat/messages/{}/activate", None),
    ("POST", "/api/chat/messages/{}/regenerate", None),
    ("POST", "/api/chat/sessions/{}/runs", {"message": "x"}),
    ("GET", "/api/schedules/{}", None),
    ("POST", "/api/schedules/{}/pause", None),
    ("POST", "/api/schedules/{}/resume", None),
    ("DELETE", "/api/schedules/{}", None),
]
RUN_ROUTES = [
    ("GET", "/api/chat/runs/{}/stream", None),
    ("GET", "/api/chat/runs/{}/state", None),
    ("POST", "/api/chat/runs/{}/resume", {"clarifyId": "c1", "answer": "yes"}),
    ("POST", "/api/chat/runs/{}/stop", None),
]


@pytest.mark.parametrize(("method", "path", "body"), ID_ROUTES)
async def test_unknown_ids_are_404(
    api: httpx.AsyncClient, method: str, path: str, body: object
) -> None:
    for ident in (1, 424242, MAX_ID):
        response = await api.request(method, path.format(ident), json=body)
        assert response.status_code == 404, response.text
        assert response.json()["code"] == "not_found"


@pytest.mark.parametrize(("method", "path", "body"), ID_ROUTES)
async def test_ids_out_of_range_are_400_naming_the_parameter(
    api: httpx.AsyncClient, method: str, path: str, body: object
) -> None:
    for ident in (0, -1, MAX_ID + 1, 10**30):
        response = await api.request(method, path.format(ident), json=body)
        assert response.status_code == 400, response.text
        error = response.json()
        assert error["code"] == "invalid_input"
        assert error["field"] in ("session_id", "message_id", "schedule_id")
        assert error["field"] in error["message"]


@pytest.mark.parametrize(("method", "path", "body"), RUN_ROUTES)
async def test_unknown_runs_are_404_and_impossible_run_ids_400(
    api: httpx.AsyncClient, method: str, path: str, body: object
) -> None:
    for ident in ("1", "0123456789abcdef0123456789abcdef", "run-7", "x" * 64):
        response = await api.request(method, path.format(ident), json=body)
        assert response.status_code == 404, response.text
        assert response.json() == {"code": "not_found", "message": f"no run {ident}"}
    for ident in ("x" * 65, "a%20b", "%00", "a%09", "%C3%A9"):
        response = await api.request(method, path.format(ident), json=body)
        assert response.status_code == 400, response.text
        assert response.json()["field"] == "run_id"


@pytest.mark.parametrize(("method", "path", "body"), ID_ROUTES)
async def test_ids_that_are_not_numbers_match_no_route(
    api: httpx.AsyncClient, method: str, path: str, body: object
) -> None:
    for ident in ("abc", "1.5", "%00", "1e3"):
        response = await api.request(method, path.format(ident), json=body)
        assert response.status_code == 404
        assert response.json()["code"] == "not_found"


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/api/chat/sessions?limit=0", "limit"),
        ("/api/chat/sessions?limit=201", "limit"),
        ("/api/chat/sessions?limit=ten", "limit"),
        ("/api/chat/sessions?status=DELETED", "status"),
        ("/api/chat/sessions?platform=irc", "platform"),
        ("/api/chat/sessions?cursor=not-a-cursor", "cursor"),
        ("/api/chat/sessions?cursor=MjAyNi0wMS0wMXwx", "cursor"),  # naive time
        ("/api/chat/sessions?q=a%00b", "q"),
        ("/api/chat/sessions?q=" + "x" * 201, "q"),
        ("/api/chat/sessions?q=a&q=b", "q"),
        ("/api/chat/sessions/1/export?format=pdf", "format"),
        ("/api/chat/sessions/1/export?branch=some", "branch"),
        ("/api/chat/sessions/1/messages?before=-3", "before"),
        ("/api/chat/sessions/1/messages?before=99", "before"),
        ("/api/chat/sessions/1/messages?limit=0", "limit"),
    ],
)
async def test_bad_query_values_are_400_naming_the_parameter(
    db: str, api: httpx.AsyncClient, path: str, field: str
) -> None:
    await conversation("exists", ("q", "a"))
    response = await api.get(path)
    assert response.status_code == 400, response.text
    error = response.json()
    assert (error["code"], error["field"]) == ("invalid_input", field)
    assert field in error["message"]


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/api/chat/sessions", {"title": 5}, "title"),
        ("POST", "/api/chat/sessions", {"title": " \n\t "}, "title"),
        ("POST", "/api/chat/sessions", {"title": "a\x00b"}, "title"),
        ("POST", "/api/chat/sessions", {"title": "x" * 256}, "title"),
        ("POST", "/api/chat/sessions", {"modelId": "nope"}, "modelId"),
        ("POST", "/api/chat/sessions", {"modelId": ""}, "modelId"),
        ("POST", "/api/chat/sessions", {"skillFolder": "missing"}, "skillFolder"),
        ("POST", "/api/chat/sessions", {"skillFolder": "../../etc"}, "skillFolder"),
        ("POST", "/api/chat/sessions", {"skillFolder": "not-a-skill"}, "skillFolder"),
        ("PATCH", "/api/chat/sessions/1", {"status": "DELETED"}, "status"),
        ("PATCH", "/api/chat/sessions/1", {"title": None}, "title"),
        ("PATCH", "/api/chat/sessions/1", {"modelId": "nope"}, "modelId"),
        ("POST", "/api/chat/sessions/1/reset", {"keepHistory": "no"}, "keepHistory"),
        ("POST", "/api/chat/sessions/1/reset", {"keepHistory": 1}, "keepHistory"),
        ("POST", "/api/chat/sessions", {"title": ["a list"]}, "title"),
        ("PATCH", "/api/chat/messages/1", {"content": ""}, "content"),
        ("PATCH", "/api/chat/messages/1", {"content": "   "}, "content"),
        ("PATCH", "/api/chat/messages/1", {}, "content"),
    ],
)
async def test_bad_bodies_are_400_naming_the_field(
    db: str, api: httpx.AsyncClient, method: str, path: str, body: object, field: str
) -> None:
    await conversation("exists", ("q", "a"))
    response = await api.request(method, path, json=body)
    assert response.status_code == 400, response.text
    error = response.json()
    assert (error["code"], error["field"]) == ("invalid_input", field)
    assert error["message"].startswith(f"{field}: ")


@pytest.mark.parametrize(
    "content", [b"{not json", b"[1, 2]", b'"text"', b"", b'{"title": "\\ud800"}', b"\xff\xfe"]
)
async def test_bodies_that_are_not_a_json_object_are_400(
    db: str, api: httpx.AsyncClient, content: bytes
) -> None:
    response = await api.post(
        "/api/chat/sessions", content=content, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "invalid_input"


async def test_unknown_body_fields_are_refused_by_name(db: str, api: httpx.AsyncClient) -> None:
    response = await api.post("/api/chat/sessions/1/reset", json={"keepHistroy": False})
    assert response.status_code == 400
    assert "keepHistroy" in response.json()["message"]


async def test_a_body_over_one_mebibyte_is_413(db: str, api: httpx.AsyncClient) -> None:
    response = await api.post("/api/chat/sessions", json={"title": "x" * (1024 * 1024)})
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"


async def test_unknown_routes_and_methods_answer_json(api: httpx.AsyncClient) -> None:
    missing = await api.get("/api/chat/nothing-here")
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")
    wrong = await api.put("/api/chat/sessions")
    assert (wrong.status_code, wrong.json()["code"]) == (405, "method_not_allowed")


class _BrokenBridge:
    """A Bridge whose memory call hits a bug (anything but a core error)."""

    async def get_memory(self, session_id: str) -> Memory:
        raise RuntimeError("a bug, not an input problem")


async def test_an_unexpected_exception_is_logged_and_answered_500_internal(
    db: str, catalogue: Catalogue, caplog: pytest.LogCaptureFixture
) -> None:
    session = await conversation("x")
    bridge = _BrokenBridge()
    services = AdminServices(bridge, catalogue, RunPool(bridge, catalogue))  # type: ignore[arg-type]
    app = create_app(Settings(), services)
    async with serving(app) as url, httpx.AsyncClient(base_url=url, headers=AUTH) as client:
        with caplog.at_level(logging.ERROR, logger="admin.errors"):
            response = await client.get(f"/api/chat/sessions/{session.id}/memory")
    assert response.status_code == 500
    assert response.json() == {"code": "internal", "message": "internal error; see the service log"}
    record = next(r for r in caplog.records if r.name == "admin.errors")
    assert record.exc_info is not None and "a bug" in str(record.exc_info[1])
