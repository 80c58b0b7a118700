"""The Usage page: what the agent's model calls spent over a window of UTC days, drawn by day,
model, person and channel (server-drawn SVG, console.charts), and the spend limits, set and
removed from the page with the rules of `/api/limits` (core.conversation.spending)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.params import Body, FromQuery, Parameter
from litestar.response import Redirect, Template

from admin.services import AdminServices
from console.charts import Chart, bars_across, bars_up
from console.rendering import back, page
from core.conversation import spending
from core.conversation.vocabulary import UsageTotals
from core.text.field_errors import InvalidField

Services = NamedDependency[AdminServices]
DEFAULT_DAYS = 30
MAX_DAYS = 200  # a bar a day, and a report's page of them
TOP = 12  # people, channels and models a chart shows, the most tokens first
Form = Body(media_type=RequestEncodingType.URL_ENCODED)
CHARTS = {"day": "Tokens by day", "model": "Tokens by model", "user": "Tokens by person",
          "channel": "Tokens by channel"}


@dataclass(frozen=True, slots=True)
class LimitForm:
    scope: str
    subject: str
    period: str
    unit: str
    amount: str = ""  # empty: no limit for this one


@dataclass(frozen=True, slots=True)
class RemoveForm:
    scope: str
    subject: str
    period: str
    unit: str


@dataclass(frozen=True, slots=True)
class Window:
    since: date
    until: date
    platform: str = ""


class UsageController(Controller):
    path = "/usage"

    @get("/")
    async def usage(self, request: Request[Any, Any, Any], services: Services,
                    from_: Annotated[date | None, Parameter(query="from")] = None,
                    to: FromQuery[date | None] = None,
                    platform: FromQuery[str] = "") -> Template:
        until = to or datetime.now(UTC).date()
        since = from_ or until - timedelta(days=DEFAULT_DAYS - 1)
        if since > until or (until - since).days >= MAX_DAYS:
            raise InvalidField("from", f"must be on or before `to`, at most {MAX_DAYS} days before")
        window = Window(since, until, platform)
        found = await asyncio.gather(*(_groups(window, by) for by in CHARTS))  # at once
        groups = dict(zip(CHARTS, found, strict=True))
        charts = [_chart(window, by, title, groups[by]) for by, title in CHARTS.items()]
        total = _total(groups["day"])
        return page(request, "usage.html", window=window, charts=charts, total=total,
                    limits=await spending.limits(services.runtime),
                    platforms=spending.PLATFORMS)

    @post("/limits")
    async def set_limit(self, request: Request[Any, Any, Any],
                        data: Annotated[LimitForm, Form]) -> Redirect:
        amount = _amount(data.amount)
        await spending.set_limit(data.scope, data.subject.strip(), data.period, data.unit, amount)
        said = "no limit" if amount is None else f"{amount:g} {data.unit}"
        return back(request, f"The {data.scope} limit of {data.subject.strip()} per "
                              f"{data.period} is {said}.", anchor="limits")

    @post("/limits/remove")
    async def remove_limit(self, request: Request[Any, Any, Any],
                           data: Annotated[RemoveForm, Form]) -> Redirect:
        await spending.remove_limit(data.scope, data.subject, data.period, data.unit)
        return back(request, f"{data.subject} is back to the default {data.scope} limit.",
                    anchor="limits")


def _amount(text: str) -> float | None:
    if not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        raise InvalidField("amount", "must be a number (empty: no limit)") from None


def _chart(window: Window, by: str, title: str, rows: list[spending.ReportRow]) -> Chart:
    amounts = [(_label(by, row.key), float(row.usage.tokens)) for row in rows]
    if by == "day":  # every day of the window, those without a call at 0
        spent = dict(amounts)
        days = (window.since + timedelta(days=n)
                for n in range((window.until - window.since).days + 1))
        return bars_up(title, [(d.isoformat(), spent.get(d.isoformat(), 0.0)) for d in days])
    return bars_across(title, amounts)


async def _groups(window: Window, by: str) -> list[spending.ReportRow]:
    """Every day of the window (a page of 366 at most), else the TOP groups by tokens."""
    if by == "day":
        report = await spending.usage_report(by, window.since, window.until,
                                             window.platform or None, spending.MAX_ROWS)
        return report.rows
    return await spending.top_spenders(by, window.since, window.until, window.platform or None,
                                       TOP)


def _total(rows: list[spending.ReportRow]) -> UsageTotals:
    """The window's sums: the days' rows (every day of it) add up to them."""
    return UsageTotals(
        calls=sum(r.usage.calls for r in rows),
        prompt_tokens=sum(r.usage.prompt_tokens for r in rows),
        completion_tokens=sum(r.usage.completion_tokens for r in rows),
        cached_tokens=sum(r.usage.cached_tokens for r in rows),
        cost=sum(r.usage.cost or 0.0 for r in rows) if any(r.usage.cost for r in rows) else None)


def _label(by: str, key: dict[str, str]) -> str:
    if by == "user":
        return f"{key.get('user', '')} ({key.get('platform', '')})"
    if by == "channel":
        return f"{key.get('channel', '')} ({key.get('workspace', '')})"
    return str(key.get(by, "") or "—")
