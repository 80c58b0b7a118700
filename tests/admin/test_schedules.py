"""`/api/schedules`: an operator schedules a prompt in a channel as one of its people, lists,
reads with its run history, edits, pauses, resumes and deletes; every mistake a JSON error with a
stable code."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import httpx

from core.chat import schedules as records
from core.store.models import RunOutcome, Schedule

NEW = {"platform": "slack", "workspace": "T1", "channel": "C1", "author": "U1",
       "prompt": "Summarize the open pull requests", "when": "every weekday at 9:00",
       "timezone": "Europe/Paris"}


async def test_create_list_read_pause_resume_delete(api: httpx.AsyncClient) -> None:
    made = await api.post("/api/schedules", json=NEW)
    assert made.status_code == 201, made.text
    body = made.json()
    assert {k: body[k] for k in ("platform", "workspace", "channel", "author", "prompt", "when",
                                 "cron", "description", "timezone", "misfire", "state")} == {
        **{k: NEW[k] for k in ("platform", "workspace", "channel", "author", "prompt", "when",
                               "timezone")},
        "cron": "0 9 * * 1-5", "description": "At 09:00, Monday through Friday (Europe/Paris)",
        "misfire": "run_once", "state": "active"}
    assert datetime.fromisoformat(body["nextRunAt"]) > datetime.now(UTC)
    other = (await api.post("/api/schedules", json={**NEW, "channel": "C2", "misfire": "skip",
                                                     "when": "cron 30 6 * * 0"})).json()
    assert other["timezone"] == "Europe/Paris" and other["misfire"] == "skip"

    listed = (await api.get("/api/schedules", params={"channel": "C1"})).json()
    assert [s["id"] for s in listed["items"]] == [body["id"]]
    assert len((await api.get("/api/schedules")).json()["items"]) == 2

    schedule = await Schedule.get(id=body["id"])
    run = await records.claim(schedule, schedule.next_run_at, RunOutcome.CLAIMED)
    assert run is not None
    await records.settle(run, RunOutcome.STARTED, session_id=None, thread="1700000000.000100",
                         run_id="r-1")
    detail = (await api.get(f"/api/schedules/{body['id']}")).json()
    assert detail["schedule"]["id"] == body["id"]
    assert [(r["outcome"], r["thread"], r["runId"]) for r in detail["runs"]] == [
        ("started", "1700000000.000100", "r-1")]

    paused = await api.post(f"/api/schedules/{body['id']}/pause")
    assert paused.status_code == 200 and paused.json()["state"] == "paused"
    assert paused.json()["nextRunAt"] is None
    assert len((await api.get("/api/schedules", params={"state": "paused"})).json()["items"]) == 1
    resumed = (await api.post(f"/api/schedules/{body['id']}/resume")).json()
    assert resumed["state"] == "active" and resumed["nextRunAt"] is not None
    assert (await api.delete(f"/api/schedules/{body['id']}")).status_code == 204
    assert (await api.get(f"/api/schedules/{body['id']}")).status_code == 404
    assert await Schedule.filter(id=body["id"]).count() == 0


async def test_mistakes_are_400_with_the_field_and_a_stable_code(api: httpx.AsyncClient) -> None:
    for change, field, says in [
        ({"when": "every funday at 9"}, "when", "'funday' as days"),
        ({"when": "* * * * *"}, "when", "more often than every 5 minutes"),
        ({"timezone": "Mars/Base"}, "timezone", "is no time zone"),
    ]:
        refused = await api.post("/api/schedules", json={**NEW, **change})
        assert refused.status_code == 400, refused.text
        error = refused.json()
        assert (error["code"], error.get("field")) == ("invalid_input", field)
        assert says in error["message"]
    for change in ({"platform": "teams"}, {"misfire": "twice"}, {"prompt": "  "},
                   {"author": ""}, {"when": "x" * 201}, {"extra": 1}):
        refused = await api.post("/api/schedules", json={**NEW, **change})
        assert refused.status_code == 400 and refused.json()["code"] == "invalid_input", change
    assert (await api.post("/api/schedules/1/stop")).status_code in (400, 404)
    assert (await api.get("/api/schedules")).json()["items"] == []


async def test_an_edit_changes_what_it_names_and_moves_the_next_time(
    api: httpx.AsyncClient
) -> None:
    made = (await api.post("/api/schedules", json=NEW)).json()
    before = await Schedule.get(id=made["id"])
    edited = await api.patch(f"/api/schedules/{made['id']}",
                             json={"when": "every day at 7:30", "timezone": "Asia/Tokyo"})
    assert edited.status_code == 200, edited.text
    body = edited.json()
    assert (body["when"], body["cron"], body["timezone"], body["prompt"], body["misfire"]) == (
        "every day at 7:30", "30 7 * * *", "Asia/Tokyo", NEW["prompt"], "run_once")
    assert body["description"] == "At 07:30 (Asia/Tokyo)"
    after = datetime.fromisoformat(body["nextRunAt"])
    assert after > datetime.now(UTC) and after != before.next_run_at
    assert (after.astimezone(ZoneInfo("Asia/Tokyo")).hour,
            after.astimezone(ZoneInfo("Asia/Tokyo")).minute) == (7, 30)

    worded = (await api.patch(f"/api/schedules/{made['id']}",
                              json={"prompt": "List the failing builds", "misfire": "skip"})).json()
    assert (worded["prompt"], worded["misfire"], worded["nextRunAt"]) == (
        "List the failing builds", "skip", body["nextRunAt"])  # the time stays

    await api.post(f"/api/schedules/{made['id']}/pause")
    paused = (await api.patch(f"/api/schedules/{made['id']}", json={"when": "every hour"})).json()
    assert (paused["state"], paused["nextRunAt"], paused["cron"]) == ("paused", None, "0 * * * *")
    resumed = (await api.post(f"/api/schedules/{made['id']}/resume")).json()
    assert datetime.fromisoformat(resumed["nextRunAt"]).minute == 0

    for change, field in [({"when": "every funday at 9"}, "when"), ({"timezone": "Mars/Base"}, "timezone")]:
        refused = await api.patch(f"/api/schedules/{made['id']}", json=change)
        assert refused.status_code == 400, refused.text
        assert (refused.json()["code"], refused.json().get("field")) == ("invalid_input", field)
    for change in ({"prompt": "  "}, {"misfire": "twice"}, {"author": "U2"}, {"when": ""}):
        refused = await api.patch(f"/api/schedules/{made['id']}", json=change)
        assert refused.status_code == 400 and refused.json()["code"] == "invalid_input", change
    assert (await Schedule.get(id=made["id"])).cron == "0 * * * *"  # nothing of those kept
    missing = await api.patch("/api/schedules/999", json={"prompt": "hi"})
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")
