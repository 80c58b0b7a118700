"""The Bridge locked down (issue 12 §3): with BRIDGE_TOKEN, every route but `GET /health` needs
`Authorization: Bearer $BRIDGE_TOKEN`, compared in constant time; a model may only name a key
variable BRIDGE_KEY_ENVS lists; without a token it binds to loopback only and says so."""

from __future__ import annotations

import hmac
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import replace

import httpx
import pytest
from litestar.routes import HTTPRoute

import core.edge.access
from bridge.server import serve
from bridge.settings import BridgeSettings
from core.errors import InvalidInput
from tests.bridge.harness import RunningBridge, run_body, run_to_end, running_bridge
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.changes import WAIT

TOKEN = "bridge-token-5c2e9a17"
OPEN = {("GET", "/health")}
WRONG = [
    {},
    {"Authorization": ""},
    {"Authorization": "Bearer"},
    {"Authorization": f"Bearer {TOKEN[:-1]}"},
    {"Authorization": f"Bearer {TOKEN}x"},
    {"Authorization": f"Basic {TOKEN}"},
    {"Authorization": TOKEN},
]


@pytest.fixture
async def locked(bridge_settings: BridgeSettings) -> AsyncIterator[RunningBridge]:
    async with running_bridge(replace(bridge_settings, token=TOKEN)) as bridge:
        yield bridge


@pytest.fixture
async def anonymous(locked: RunningBridge) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=locked.url, timeout=WAIT) as client:
        yield client


def _routes(bridge: RunningBridge) -> list[tuple[str, str]]:
    """(method, path) of every route the app serves, path parameters filled in."""
    return sorted((method, re.sub(r"\{[^}]+\}", "x1", route.path_format))
                  for route in bridge.app.routes if isinstance(route, HTTPRoute)
                  for method in route.methods if method not in ("HEAD", "OPTIONS"))


async def test_every_route_but_health_refuses_a_missing_or_wrong_token(
    locked: RunningBridge, anonymous: httpx.AsyncClient
) -> None:
    routes = _routes(locked)
    assert len(routes) == 11  # the whole protocol: a route added later is covered here too
    for method, path in routes:
        for headers in WRONG:
            # A body that would be invalid proves the guard answers before anything is parsed.
            response = await anonymous.request(method, path, headers=headers, content=b"{no")
            if (method, path) in OPEN:
                assert response.status_code == 200, (method, path)
                continue
            assert response.status_code == 401, (method, path, headers, response.text)
            assert response.json()["code"] == "unauthorized", (method, path)
            assert "BRIDGE_TOKEN" in response.json()["message"]
            assert response.headers["www-authenticate"] == "Bearer"


async def test_the_token_opens_every_route(locked: RunningBridge, llm: ScriptedLLM) -> None:
    llm.script(text_reply("hello with a token"))
    body = run_body(llm)
    events = await run_to_end(locked, body)  # the harness client sends the token
    assert events[-1].data == {"final_text": "hello with a token", "model": llm.model}
    assert (await locked.client.get(f"/runs/{body['run_id']}")).json()["state"] == "done"
    assert (await locked.client.post("/sessions/chat-a/reset")).status_code == 200
    assert (await locked.client.get("/sessions/chat-a/memory")).status_code == 200


async def test_the_token_is_compared_in_constant_time(
    locked: RunningBridge, anonymous: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[object, object]] = []
    real = hmac.compare_digest

    def spy(given: bytes, expected: bytes) -> bool:
        calls.append((given, expected))
        return real(given, expected)

    monkeypatch.setattr(core.edge.access.hmac, "compare_digest", spy)
    tries = ["x", TOKEN[:-1], TOKEN + "x", "y" * 300, TOKEN]
    for given in tries:
        response = await anonymous.get("/runs/r1", headers={"Authorization": f"Bearer {given}"})
        assert response.status_code == (200 if given == TOKEN else 401)
    assert calls == [(t.encode(), TOKEN.encode()) for t in tries]  # every length reaches it


async def test_without_a_token_the_bridge_is_open(bridge: RunningBridge) -> None:
    # The suite's shared Bridge has no token: it is served on loopback only (see below).
    async with httpx.AsyncClient(base_url=bridge.url, timeout=WAIT) as client:
        assert (await client.get("/runs/r1")).status_code == 200


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.5", "bridge.example"])
def test_without_a_token_it_refuses_a_public_address(host: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        serve(BridgeSettings(host=host))
    assert "BRIDGE_TOKEN is unset, so the Bridge only binds to loopback" in refused.value.message
    assert f"BRIDGE_HOST={host} refused" in refused.value.message


def test_without_a_token_on_loopback_it_says_it_is_open(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    served: list[object] = []
    monkeypatch.setattr("bridge.server.create_app", lambda settings, secrets: "app")
    monkeypatch.setattr("bridge.server.uvicorn.Server.run", lambda self: served.append(self))
    with caplog.at_level(logging.INFO, logger="bridge"):
        serve(BridgeSettings(host="127.0.0.1", port=18000))
        serve(BridgeSettings(host="0.0.0.0", port=18001, token=TOKEN))
    assert "open to loopback callers (BRIDGE_TOKEN unset) on http://127.0.0.1:18000" in caplog.text
    assert "bearer token required on http://0.0.0.0:18001" in caplog.text
    assert len(served) == 2


# --- BRIDGE_KEY_ENVS ------------------------------------------------------------------------

SECRETS = {"TEAM_KEY": "sk-team-8f7e6d", "DISCORD_TOKEN": "discord-bot-token-1a2b3c",
           "LISTED_BUT_UNSET": ""}


@pytest.fixture
async def keyed(bridge_settings: BridgeSettings) -> AsyncIterator[RunningBridge]:
    settings = replace(bridge_settings, key_envs=("TEAM_KEY", "LISTED_BUT_UNSET"))
    async with running_bridge(settings, secrets=SECRETS) as bridge:
        yield bridge


@pytest.mark.parametrize("name", ["DISCORD_TOKEN", "SLACK_BOT_TOKEN", "PATH", "team_key"])
async def test_a_key_not_listed_is_refused_and_nothing_is_sent(
    keyed: RunningBridge, llm: ScriptedLLM, name: str
) -> None:
    model = {"name": llm.model, "base_url": llm.base_url, "api_key_env": name}
    response = await keyed.client.post("/run", json=run_body(llm, model=model))
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "key_not_allowed"
    assert repr(name) in body["message"] and "TEAM_KEY" in body["message"]
    assert SECRETS["DISCORD_TOKEN"] not in response.text
    assert llm.requests == []  # no agent ran, no endpoint was called


async def test_a_listed_key_is_sent_and_a_listed_unset_one_is_a_clear_400(
    keyed: RunningBridge, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("keyed"))
    model = {"name": llm.model, "base_url": llm.base_url, "api_key_env": "TEAM_KEY"}
    events = await run_to_end(keyed, run_body(llm, model=model))
    assert events[-1].data == {"final_text": "keyed", "model": llm.model}
    assert llm.authorizations[-1] == f"Bearer {SECRETS['TEAM_KEY']}"
    unset = {**model, "api_key_env": "LISTED_BUT_UNSET"}
    response = await keyed.client.post("/run", json=run_body(llm, model=unset))
    assert response.status_code == 400 and response.json()["code"] == "invalid_request"
    assert "'LISTED_BUT_UNSET' is not set on the Bridge" in response.json()["message"]


async def test_with_no_list_no_named_key_is_allowed(bridge: RunningBridge, llm: ScriptedLLM) -> None:
    model = {"name": llm.model, "base_url": llm.base_url, "api_key_env": "OPENAI_API_KEY"}
    response = await bridge.client.post("/run", json=run_body(llm, model=model))
    assert (response.status_code, response.json()["code"]) == (400, "key_not_allowed")
    assert "BRIDGE_KEY_ENVS: none" in response.json()["message"]
