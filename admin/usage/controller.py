"""`GET /api/usage`: what the agent's model calls spent, summed by user, channel, workspace,
model or day; `/api/limits`: the spend limits, and the operators' own."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from litestar import Controller, delete, get, put
from litestar.di import NamedDependency
from litestar.params import JSONBody, Parameter

from admin.openapi import errors
from admin.params import PageCursor
from admin.services import AdminServices
from admin.usage.schemas import (
    LimitIn,
    LimitOut,
    LimitsOut,
    Period,
    Scope,
    Subject,
    Unit,
    UsageReportOut,
    limit_out,
    limits_out,
    report_out,
)
from core.conversation import spending

By = Annotated[Literal["user", "channel", "workspace", "model", "day"], Parameter(
    description="what to sum by: user (platform and user id), channel (workspace and channel), "
                "workspace, model, or UTC day")]
From = Annotated[date | None, Parameter(query="from", description="the first UTC day, YYYY-MM-DD")]
To = Annotated[date | None, Parameter(description="the last UTC day, YYYY-MM-DD (inclusive)")]
PlatformName = Annotated[Literal["slack", "discord", "api"] | None, Parameter(
    description="only the runs asked from this platform (api: an operator's)")]
Limit = Annotated[int, Parameter(ge=1, le=200, description="at most this many groups")]


class UsageController(Controller):
    path = "/api"
    tags = ("usage",)

    @get("/usage", summary="Model calls summed by user, channel, workspace, model or day",
         responses=errors())
    async def usage(self, by: By, from_: From = None, to: To = None,
                    platform: PlatformName = None, limit: Limit = 50,
                    cursor: PageCursor = "") -> UsageReportOut:
        report = await spending.usage_report(by, from_, to, platform, limit, cursor or None)
        return report_out(by, from_, to, report)


    @get("/limits", summary="The spend limits: the settings' defaults and the operators' own",
         responses=errors())
    async def limits(self, services: NamedDependency[AdminServices]) -> LimitsOut:
        return limits_out(await spending.limits(services.runtime))

    @put("/limits", summary="Set one user's, channel's or workspace's spend limit",
         responses=errors(413))
    async def set_limit(self, data: JSONBody[LimitIn]) -> LimitOut:
        return limit_out(await spending.set_limit(data.scope, data.subject, data.period,
                                                  data.unit, data.amount))

    @delete("/limits", summary="Back to the setting's default for one user, channel or workspace",
            responses=errors(404, meanings={404: "No such limit was set"}))
    async def remove_limit(self, scope_: Annotated[Scope, Parameter(query="scope")],
                           subject: Subject, period: Period, unit: Unit) -> None:
        # `scope` is Litestar's own name (the ASGI scope): the query's is renamed
        await spending.remove_limit(scope_, subject, period, unit)
