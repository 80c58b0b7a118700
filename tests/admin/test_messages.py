"""Messages: paging the active branch backwards, edit (a new version), versions, activate."""

from __future__ import annotations

import httpx

from core.chat import tree
from core.store.models import ChatMessage, MessageStatus, Role
from tests.admin.builders import conversation, running_turn


async def _five_turns() -> tuple[int, list[int]]:
    session = await conversation("t", *[(f"q{i}", f"a{i}") for i in range(5)])
    return session.id, await tree.active_branch_ids(session.id)


async def test_messages_page_backwards_from_the_end(db: str, api: httpx.AsyncClient) -> None:
    session_id, ids = await _five_turns()
    url = f"/api/chat/sessions/{session_id}/messages"

    last = (await api.get(url, params={"limit": 4})).json()
    assert [m["id"] for m in last["messages"]] == ids[6:] and last["hasMore"] is True
    assert [m["content"] for m in last["messages"]] == ["q3", "a3", "q4", "a4"]
    before = (await api.get(url, params={"limit": 4, "before": ids[6]})).json()
    assert [m["id"] for m in before["messages"]] == ids[2:6] and before["hasMore"] is True
    first = (await api.get(url, params={"limit": 4, "before": ids[2]})).json()
    assert [m["id"] for m in first["messages"]] == ids[:2] and first["hasMore"] is False
    assert (await api.get(url, params={"before": ids[0]})).json() == {"messages": [], "hasMore": False}
    everything = (await api.get(url)).json()
    assert [m["id"] for m in everything["messages"]] == ids and everything["hasMore"] is False
    assert everything["messages"][1]["thinking"] is not None  # same shape as the detail


async def test_before_must_be_on_the_active_branch_of_that_session(
    db: str, api: httpx.AsyncClient
) -> None:
    session_id, ids = await _five_turns()
    other, other_ids = await _five_turns()
    fresh = await tree.edit(ids[2], "q1 again")  # ids[2:] leave the active branch
    url = f"/api/chat/sessions/{session_id}/messages"
    for before in (ids[4], other_ids[0]):
        response = await api.get(url, params={"before": before})
        assert response.status_code == 400
        assert response.json()["field"] == "before"
    page = (await api.get(url, params={"before": fresh.id})).json()
    assert [m["id"] for m in page["messages"]] == ids[:2]
    assert (await api.get(f"/api/chat/sessions/{other + 99}/messages")).status_code == 404


async def test_edit_makes_a_new_user_version_and_starts_no_run(db: str, api: httpx.AsyncClient) -> None:
    session_id, ids = await _five_turns()
    response = await api.patch(f"/api/chat/messages/{ids[4]}", json={"content": "q2, better"})
    assert response.status_code == 200
    new_id = response.json()["newMessageId"]
    edited = await ChatMessage.get(id=new_id)
    assert (edited.role, edited.content, edited.parent_id) == (Role.USER, "q2, better", ids[3])
    branch = (await api.get(f"/api/chat/sessions/{session_id}")).json()["messages"]
    assert [m["id"] for m in branch] == ids[:4] + [new_id]  # no assistant answer yet
    assert await ChatMessage.filter(session_id=session_id, status="RUNNING").count() == 0


async def test_only_user_messages_can_be_edited(db: str, api: httpx.AsyncClient) -> None:
    _, ids = await _five_turns()
    response = await api.patch(f"/api/chat/messages/{ids[1]}", json={"content": "no"})
    assert response.status_code == 400 and response.json()["code"] == "invalid_input"


async def test_versions_and_activate(db: str, api: httpx.AsyncClient) -> None:
    session_id, ids = await _five_turns()
    edit = (await api.patch(f"/api/chat/messages/{ids[2]}", json={"content": "q1 v2"})).json()

    versions = (await api.get(f"/api/chat/messages/{ids[2]}/versions")).json()
    assert [(v["messageId"], v["branchOrder"], v["isActive"], v["preview"]) for v in versions] == [
        (ids[2], 0, False, "q1"), (edit["newMessageId"], 1, True, "q1 v2"),
    ]
    assert all(v["createdAt"] for v in versions)

    switched = (await api.post(f"/api/chat/messages/{ids[2]}/activate")).json()
    assert [v["isActive"] for v in switched] == [True, False]
    branch = (await api.get(f"/api/chat/sessions/{session_id}")).json()["messages"]
    assert [m["id"] for m in branch] == ids  # the old conversation is back, whole
    assert (await api.get(f"/api/chat/messages/{ids[0]}/versions")).json()[0]["isActive"] is True


async def test_a_summary_is_not_a_version(db: str, api: httpx.AsyncClient) -> None:
    _, ids = await _five_turns()
    summary = await tree.add_summary((await ChatMessage.get(id=ids[3])).session_id, ids[3], "so far")
    versions = (await api.get(f"/api/chat/messages/{summary.id}/versions")).json()
    assert [v["messageId"] for v in versions] == [summary.id]
    response = await api.post(f"/api/chat/messages/{summary.id}/activate")
    assert response.status_code == 400


async def test_edit_and_activate_wait_for_a_run_in_flight(db: str, api: httpx.AsyncClient) -> None:
    session_id, ids = await _five_turns()
    running = await running_turn(session_id, "q3", MessageStatus.RUNNING)  # on any replica
    before = await ChatMessage.filter(session_id=session_id).count()

    edit = await api.patch(f"/api/chat/messages/{ids[2]}", json={"content": "q1 v2"})
    activate = await api.post(f"/api/chat/messages/{ids[0]}/activate")

    assert (edit.status_code, edit.json()["code"]) == (409, "busy")
    assert (activate.status_code, activate.json()["code"]) == (409, "busy")
    assert await ChatMessage.filter(session_id=session_id).count() == before
    branch = (await api.get(f"/api/chat/sessions/{session_id}")).json()["messages"]
    assert [m["id"] for m in branch][-1] == running.id  # the running answer still shows
