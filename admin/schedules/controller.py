"""`/api/schedules`: scheduled prompts, thin handlers over core (docs/schedules.md)."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromQuery, JSONBody, PathParameter, QueryParameter

from admin.schedules.schemas import (
    ScheduleDetailOut,
    ScheduleEditIn,
    ScheduleIn,
    ScheduleOut,
    SchedulePageOut,
    detail_out,
    schedule_out,
)
from admin.openapi import errors
from admin.services import AdminServices
from admin.text import NO_NUL
from core.conversation import schedules
from core.conversation.vocabulary import (
    NewSchedule,
    Platform,
    ScheduleEdit,
    ScheduleState,
    ScheduleWhere,
)
from core.text.field_errors import MAX_ID

ScheduleId = Annotated[int, PathParameter(ge=1, le=MAX_ID, description="id of a schedule")]
Services = NamedDependency[AdminServices]
NOT_FOUND = {404: "No such schedule"}
StateQuery = Annotated[ScheduleState | None, QueryParameter(name="state",
                                                           description="active or paused")]
Text = Annotated[str | None, QueryParameter(max_length=64, pattern=NO_NUL)]


class ScheduleController(Controller):
    path = "/api/schedules"
    tags = ("schedules",)

    @get("/", summary="List schedules, oldest first", responses=errors())
    async def list_schedules(self, platform: FromQuery[Platform | None] = None,
                             workspace: Text = None, channel: Text = None,
                             state_: StateQuery = None) -> SchedulePageOut:
        # `state` is Litestar's own name (the app state): the query's is renamed
        filters = {k: v for k, v in (("platform", platform), ("workspace", workspace),
                                     ("channel", channel), ("state", state_)) if v is not None}
        return SchedulePageOut([schedule_out(s) for s in await schedules.every(**filters)])

    @post("/", summary="Schedule a prompt in a channel, as one of its people",
          responses=errors(413))
    async def create_schedule(self, services: Services,
                              data: JSONBody[ScheduleIn]) -> ScheduleOut:
        where = ScheduleWhere(Platform(data.platform), data.workspace, data.channel)
        new = NewSchedule(where, data.author, data.prompt, data.when,
                          data.timezone or services.schedule_timezone, data.misfire)
        return schedule_out(await schedules.add(new, services.runtime.limits.clock()))

    @get("/{schedule_id:int}", summary="A schedule and its latest runs",
         responses=errors(404, meanings=NOT_FOUND))
    async def get_schedule(self, schedule_id: ScheduleId) -> ScheduleDetailOut:
        return detail_out(await schedules.detail(schedule_id))

    @patch("/{schedule_id:int}", summary="Change a schedule's prompt, time, time zone or misfire rule",
           responses=errors(404, 413, meanings=NOT_FOUND))
    async def edit_schedule(self, services: Services, schedule_id: ScheduleId,
                            data: JSONBody[ScheduleEditIn]) -> ScheduleOut:
        changes = ScheduleEdit(data.prompt, data.when, data.timezone, data.misfire)
        return schedule_out(await schedules.edit(schedule_id, changes,
                                                 services.runtime.limits.clock()))

    @post("/{schedule_id:int}/pause", summary="Pause a schedule: no occurrence runs",
          status_code=200, responses=errors(404, meanings=NOT_FOUND))
    async def pause_schedule(self, services: Services, schedule_id: ScheduleId) -> ScheduleOut:
        return schedule_out(await schedules.change("pause", schedule_id,
                                                   services.runtime.limits.clock()))

    @post("/{schedule_id:int}/resume", summary="Resume a schedule from its next occurrence",
          status_code=200, responses=errors(404, meanings=NOT_FOUND))
    async def resume_schedule(self, services: Services, schedule_id: ScheduleId) -> ScheduleOut:
        return schedule_out(await schedules.change("resume", schedule_id,
                                                   services.runtime.limits.clock()))

    @delete("/{schedule_id:int}", summary="Delete a schedule and its history (its threads stay)",
            responses=errors(404, meanings=NOT_FOUND))
    async def delete_schedule(self, services: Services, schedule_id: ScheduleId) -> None:
        await schedules.change("delete", schedule_id, services.runtime.limits.clock())
