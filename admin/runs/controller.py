"""`/api/chat/.../runs`: start, follow, inspect, answer and stop runs."""

from __future__ import annotations


from litestar import Controller, Request, get, post
from litestar.di import NamedDependency
from litestar.params import JSONBody
from litestar.response import ServerSentEvent

from admin.auth import unlimited
from admin.openapi import errors
from admin.params import LastEventIdHeader, LastEventIdQuery, RunId, SessionId
from admin.runs import commands
from admin.runs.schemas import (
    ActiveRunsOut,
    ResumeIn,
    ResumeOut,
    RunOut,
    RunStart,
    RunStateOut,
    StartedOut,
    active_out,
    resume_out,
    run_out,
    started_out,
    state_out,
)
from admin.runs.stream import EventStreamOperation, event_stream
from admin.services import AdminServices
from core.conversation import turns
from core.conversation.views import run_state

Services = NamedDependency[AdminServices]
NO_RUN = {404: "No such run"}
DONE_WITH = "The run has already ended, or another process drives it"


class RunController(Controller):
    path = "/api/chat"
    tags = ("runs",)

    @post(
        "/sessions/{session_id:int}/runs", summary="Send a message: a user message and its run",
        responses=errors(404, 409, 413, 429, meanings={404: "No such session"}),
    )
    async def start_run(
        self, request: Request, services: Services, session_id: SessionId,
        data: JSONBody[RunStart],
    ) -> StartedOut:
        order = data.order()
        return started_out(await commands.start(services.runtime, session_id, order,
                                                unlimited(request)))

    @get("/runs", summary="Runs in flight here: running, and the queue",
         responses=errors(database=False))
    async def list_runs(self, services: Services) -> ActiveRunsOut:
        return active_out(services.runtime.active())

    @get(
        "/runs/{run_id:str}/stream", summary="Follow a run's events (SSE), from where you left",
        responses=errors(404, meanings=NO_RUN), operation_class=EventStreamOperation,
    )
    async def stream_run(
        self, services: Services, run_id: RunId, last_event_id_header: LastEventIdHeader = None,
        last_event_id: LastEventIdQuery = None,
    ) -> ServerSentEvent:
        after = next((i for i in (last_event_id_header, last_event_id) if i is not None), 0)
        return await event_stream(services.runtime, run_id, after, services.keepalive)

    @get(
        "/runs/{run_id:str}/state", summary="A run's status, pending question and thinking",
        responses=errors(404, meanings=NO_RUN),
    )
    async def get_run_state(self, services: Services, run_id: RunId) -> RunStateOut:
        return state_out(await run_state(services.runtime, run_id))

    @post(
        "/runs/{run_id:str}/resume", status_code=200, summary="Answer the run's clarify question",
        responses=errors(404, 409, 413, 503, meanings={
            404: "No such run", 409: "The question was already answered, or has expired",
        }),
    )
    async def resume_run(
        self, services: Services, run_id: RunId, data: JSONBody[ResumeIn]
    ) -> ResumeOut:
        outcome = await turns.answer_question(
            services.runtime, run_id, data.clarify_id, data.answer, data.answered_by
        )
        return resume_out(run_id, outcome)

    @post(
        "/runs/{run_id:str}/stop", status_code=200, summary="Stop a queued or running run",
        responses=errors(404, 409, 503, meanings={**NO_RUN, 409: DONE_WITH}),
    )
    async def stop_run(self, services: Services, run_id: RunId) -> RunOut:
        return run_out(await turns.stop(services.runtime, run_id))
