"""The Now page: the service's health (the database, each Bridge, each chat platform, the
default model: what `/api/health` reports), runs in flight (running, then queued with their
place), and the questions and tool approvals waiting on a person, oldest first, answerable from
the page. It refreshes its parts by itself (htmx polling), never while a form in them is being
filled in."""

from __future__ import annotations

from typing import Any, Literal

from litestar import Controller, Request, get
from litestar.di import NamedDependency
from litestar.params import FromQuery
from litestar.response import Template

from admin.health import health_report
from admin.services import AdminServices
from console.rendering import page
from core.conversation import waiting

Services = NamedDependency[AdminServices]


class NowController(Controller):
    path = "/now"

    @get("/")
    async def now(self, request: Request[Any, Any, Any], services: Services,
                  part: FromQuery[Literal["", "runs", "waiting", "health"]] = "") -> Template:
        """The page, or the one part a poll refreshes (`part`): the runs' and the questions'
        polls do not ask the Bridge for its health every 2 s."""
        runs = await waiting.runs_now(services.runtime) if part in ("", "runs") else []
        questions = await waiting.waiting_now() if part in ("", "waiting") else []
        health, serving = await health_report(services) if part in ("", "health") \
            else (None, True)
        return page(request, "now.html", runs=runs, questions=questions, health=health,
                    serving=serving)

