"""`/api/channels/{platform}/{workspace}/{channel}`: a channel's (or, channel `*`, a workspace's)
settings read, set, applied and removed through real HTTP; bad input is a JSON error with a
stable code naming its field, never a 500."""

from __future__ import annotations

import httpx
import pytest

from core.chat import sessions
from core.chat.sessions import ThreadKey
from core.store.models import ChatSession, Platform, SpendLimit

CHANNEL = "/api/channels/slack/T1/C1"
WORKSPACE = "/api/channels/slack/T1/*"


async def test_a_channel_without_settings_reads_as_the_services(api: httpx.AsyncClient) -> None:
    answer = await api.get(CHANNEL)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["platform"], body["workspace"], body["channel"]) == ("slack", "T1", "C1")
    assert body["settings"] == {} and body["limits"] == {} and body["updatedBy"] is None
    assert body["effective"]["busy_mode"] == {"value": "refuse", "source": "service"}
    assert body["effective"]["thread_context"] == {"value": 20, "source": "service"}


async def test_set_then_read_with_the_workspace_beneath_the_channel(api: httpx.AsyncClient) -> None:
    workspace = await api.put(WORKSPACE, json={"busyMode": "queue", "model": "fast",
                                               "systemPrompt": "Be brief."})
    assert workspace.status_code == 200, workspace.text
    assert workspace.json()["channel"] is None
    channel = await api.put(CHANNEL, json={"busyMode": "steer", "threadContext": 5,
                                           "toolsets": ["todo"], "allowedUsers": ["U1", "U2"],
                                           "actions": "anyone", "approvals": "admins",
                                           "skill": "code-review",
                                           "limits": {"dayTokens": 1000, "monthCost": 2.5}})
    assert channel.status_code == 200, channel.text
    body = (await api.get(CHANNEL)).json()
    assert body["settings"] == {"busy_mode": "steer", "thread_context": 5, "toolsets": ["todo"],
                                "allowed_users": ["U1", "U2"], "actions": "anyone",
                                "approvals": "admins", "skill": "code-review"}
    effective = body["effective"]
    assert effective["busy_mode"] == {"value": "steer", "source": "channel"}
    assert effective["model"] == {"value": "fast", "source": "workspace"}
    assert effective["system_prompt"] == {"value": "Be brief.", "source": "workspace"}
    assert effective["approvals"] == {"value": "admins", "source": "channel"}
    assert body["limits"] == {"day_tokens": 1000.0, "month_cost": 2.5}
    assert body["updatedBy"] == "admin" and body["updatedAt"]
    limits = await SpendLimit.filter(subject="C1").values_list("scope", "period", "unit", "amount")
    assert sorted(limits) == [("channel", "day", "tokens", 1000.0), ("channel", "month", "cost", 2.5)]


async def test_null_removes_a_key_and_absent_keys_stay(api: httpx.AsyncClient) -> None:
    await api.put(CHANNEL, json={"busyMode": "queue", "threadContext": 3,
                                 "limits": {"dayTokens": 10}})
    changed = await api.put(CHANNEL, json={"threadContext": None, "limits": {"dayTokens": None}})
    assert changed.json()["settings"] == {"busy_mode": "queue"}
    assert changed.json()["limits"] == {}
    assert changed.json()["effective"]["thread_context"]["source"] == "service"


async def test_a_new_conversation_keeps_its_settings_until_they_are_applied(
        api: httpx.AsyncClient) -> None:
    await api.put(CHANNEL, json={"busyMode": "queue", "model": "deep"})
    key = ThreadKey(Platform.SLACK, "T1", "C1", "1.0")
    session, _ = await sessions.session_for_thread(key)
    assert (session.channel_settings, session.model_id) == ({"busy_mode": "queue",
                                                              "model": "deep"}, "deep")
    detail = (await api.get(f"/api/chat/sessions/{session.id}")).json()
    assert detail["channelSettings"] == {"busy_mode": "queue", "model": "deep"}

    await api.put(CHANNEL, json={"busyMode": "steer"})
    assert (await ChatSession.get(id=session.id)).channel_settings["busy_mode"] == "queue"
    applied = await api.put(CHANNEL, json={"systemPrompt": "Hi.", "apply": True})
    assert applied.json()["applied"] == 1
    kept = (await ChatSession.get(id=session.id)).channel_settings
    assert kept == {"busy_mode": "steer", "model": "deep", "system_prompt": "Hi."}

    await api.put(WORKSPACE, json={"threadContext": 2})
    again = await api.post(f"{WORKSPACE}/apply")
    assert again.status_code == 200 and again.json()["applied"] == 1
    assert (await ChatSession.get(id=session.id)).channel_settings["thread_context"] == 2

    removed = await api.delete(CHANNEL, params={"apply": "true"})
    assert removed.status_code == 200 and removed.json()["settings"] == {}
    assert (await ChatSession.get(id=session.id)).channel_settings == {"thread_context": 2}


async def test_delete_of_nothing_is_404(api: httpx.AsyncClient) -> None:
    answer = await api.delete(CHANNEL)
    assert (answer.status_code, answer.json()["code"]) == (404, "not_found")


@pytest.mark.parametrize(("body", "field"), [
    ({"busyMode": "sometimes"}, "busyMode"),
    ({"threadContext": 500}, "threadContext"),
    ({"threadContext": "five"}, "threadContext"),
    ({"actions": "everyone"}, "actions"),
    ({"approvals": "nobody"}, "approvals"),
    ({"model": "no-such-model"}, "model"),
    ({"skill": "not-a-skill"}, "skill"),
    ({"systemPrompt": "   "}, "systemPrompt"),
    ({"systemPrompt": "x" * 8001}, "systemPrompt"),
    ({"toolsets": "todo"}, "toolsets"),
    ({"allowedUsers": ["U1\x00"]}, "allowedUsers"),
    ({"limits": {"dayTokens": -1}}, "limits.dayTokens"),
    ({"limits": {"weekTokens": 1}}, "limits.weekTokens"),
    ({"colour": "blue"}, "colour"),
])
async def test_a_bad_value_is_400_naming_its_field_and_changes_nothing(
        api: httpx.AsyncClient, body: dict, field: str) -> None:
    answer = await api.put(CHANNEL, json=body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["code"] in ("invalid_input", "validation_error"), answer.json()
    assert field.split(".")[-1] in answer.text
    assert (await api.get(CHANNEL)).json()["settings"] == {}


@pytest.mark.parametrize(("path", "status"), [
    ("/api/channels/teams/T1/C1", 404),
    ("/api/channels/slack/%20T1/C1", 400),
    (f"/api/channels/slack/T1/{'C' * 65}", 400),
])
async def test_a_bad_place_is_a_json_error(api: httpx.AsyncClient, path: str, status: int) -> None:
    answer = await api.get(path)
    assert answer.status_code == status, answer.text
    assert answer.json()["code"]
