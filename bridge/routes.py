"""HTTP endpoints of docs/bridge-protocol.md: translate, call BridgeService, translate back."""

from __future__ import annotations

from typing import Any

from litestar import Request, Router, get, post
from litestar.di import NamedDependency
from litestar.handlers import HTTPRouteHandler
from litestar.params import FromPath
from litestar.response import Stream

from bridge.auth import token_guard
from bridge.service import BridgeService
from bridge.sse import follow_run
from bridge.wire import (
    ApprovalAnswer,
    ClarifyAnswer,
    MemoryUpdate,
    RunRequest,
    SteerRequest,
    check_identifier,
    decode,
    parse_last_event_id,
)

Service = NamedDependency[BridgeService]
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _stream(service: BridgeService, run_id: str, after: int) -> Stream:
    log = service.runs.get(run_id)
    body = follow_run(log, after, service.settings.heartbeat_seconds)
    return Stream(body, media_type="text/event-stream", headers=SSE_HEADERS)


@post("/run", status_code=200)
async def start_run(request: Request, service: Service) -> Stream:
    run = decode(await request.body(), RunRequest)
    log = service.start_run(run)
    return _stream(service, log.run_id, 0)


@get("/runs/{run_id:str}/events")
async def run_events(request: Request, run_id: FromPath[str], service: Service) -> Stream:
    after = parse_last_event_id(request.headers.get("last-event-id"))
    return _stream(service, run_id, after)


@get("/runs/{run_id:str}")
async def run_status(run_id: FromPath[str], service: Service) -> dict[str, Any]:
    return service.status(run_id)


@post("/runs/{run_id:str}/abort", status_code=200)
async def abort_run(run_id: FromPath[str], service: Service) -> dict[str, Any]:
    return service.abort(run_id)


@post("/clarify/{clarify_id:str}/answer", status_code=200)
async def answer_clarify(
    request: Request, clarify_id: FromPath[str], service: Service
) -> dict[str, Any]:
    body = decode(await request.body(), ClarifyAnswer)
    return service.answer_clarify(clarify_id, body.answer)


@post("/runs/{run_id:str}/approval", status_code=200)
async def answer_approval(
    request: Request, run_id: FromPath[str], service: Service
) -> dict[str, Any]:
    body = decode(await request.body(), ApprovalAnswer)
    return service.answer_approval(run_id, body)


@post("/runs/{run_id:str}/steer", status_code=200)
async def steer_run(request: Request, run_id: FromPath[str], service: Service) -> dict[str, Any]:
    body = decode(await request.body(), SteerRequest)
    return service.steer(run_id, body.text)


@post("/sessions/{session_id:str}/reset", status_code=200)
async def reset_session(session_id: FromPath[str], service: Service) -> dict[str, Any]:
    return service.reset_session(check_identifier("session_id", session_id))


@get("/sessions/{session_id:str}/memory")
async def read_memory(session_id: FromPath[str], service: Service) -> dict[str, Any]:
    return service.read_memory(check_identifier("session_id", session_id))


@post("/sessions/{session_id:str}/memory", status_code=200)
async def write_memory(
    request: Request, session_id: FromPath[str], service: Service
) -> dict[str, Any]:
    body = decode(await request.body(), MemoryUpdate)
    updates = {k: v for k, v in (("memory", body.memory), ("user", body.user)) if v is not None}
    return service.write_memory(check_identifier("session_id", session_id), updates)


@get("/health")
async def health(service: Service) -> dict[str, Any]:
    return service.health()


def bridge_routes(token: str | None) -> list[Router | HTTPRouteHandler]:
    """Every endpoint, at the root path; with a token, all but `GET /health` need it."""
    handlers = [start_run, run_events, run_status, abort_run, steer_run, answer_clarify,
                answer_approval, reset_session, read_memory, write_memory]
    guards = [token_guard(token)] if token else []
    return [Router(path="/", route_handlers=handlers, guards=guards), health]
