"""`GET /api/usage`: what the agent's model calls spent, summed by user, channel, workspace,
model or day."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from litestar import Controller, get
from litestar.params import Parameter

from admin.openapi import errors
from admin.params import PageCursor
from admin.usage.schemas import UsageReportOut, report_out
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
