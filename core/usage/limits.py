"""Spend limits: per user, channel and workspace, per UTC day and month, in tokens or cost.

A limit's amount is the default of its settings (`LIMIT_USER_DAY_TOKENS`, ...; 0: none) unless
an operator set one for that user, channel or workspace (`spend_limit`, the admin API's
`/api/limits`; an amount of null there lifts the default for that one). What was spent is read
from the day's sums in the database (`usage_day`), so every replica counts the same calls.
`check` runs before a run starts and after each of its model calls (core/runtime/spending.py):
one run can go past a limit by at most the call that reached it. A spender started with
ADMIN_UNLIMITED_TOKEN (`exempt`) is never refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from tortoise.expressions import Q

from core.agent.thinking import UsageTotals
from core.errors import SpendLimitReached
from core.store.models import LimitPeriod, LimitScope, LimitUnit, SpendLimit, utc_now
from core.usage import periods, reports, words
from core.usage.spenders import OPERATOR, Spender

LimitKey = tuple[LimitScope, LimitPeriod, LimitUnit]
KEYS: tuple[LimitKey, ...] = tuple((scope, period, unit) for scope in LimitScope
                                   for period in LimitPeriod for unit in LimitUnit)


def setting_name(key: LimitKey) -> str:
    """The setting of a default: `LIMIT_USER_DAY_TOKENS`, `LIMIT_CHANNEL_MONTH_COST`, ..."""
    return "_".join(("limit", *key)).upper()


@dataclass(frozen=True, slots=True)
class Standing:
    """One limit as it stands for one subject now: its amount (an operator's, or the
    default), what the subject spent in its period, and when that period resets."""

    scope: LimitScope
    subject: str
    period: LimitPeriod
    unit: LimitUnit
    amount: float
    used: float
    resets_at: datetime
    overridden: bool = False  # an operator's amount, not the setting's

    @property
    def reached(self) -> bool:
        return self.used >= self.amount


class SpendLimits:
    """The limits of the settings (`defaults`: key -> amount; 0 or absent: none) and the
    operators' ones in the database; `clock` is the time the periods are counted in."""

    def __init__(self, defaults: Mapping[LimitKey, float] | None = None,
                 clock: Callable[[], datetime] = utc_now) -> None:
        self.defaults = {k: float(v) for k, v in (defaults or {}).items() if v}
        self.clock = clock

    async def check(self, spender: Spender, stopped: bool = False) -> None:
        """SpendLimitReached with the first limit `spender` has reached (users, then
        channels, then workspaces; days before months); nothing for an exempt one."""
        now = self.clock()
        for standing in await self.standing(spender, now):
            if standing.reached:
                raise reached(standing, spender, now, stopped)

    async def standing(self, spender: Spender, now: datetime | None = None) -> list[Standing]:
        """Every limit that applies to `spender` now, with what it spent."""
        if spender.exempt:
            return []
        now = now or self.clock()
        subjects = _subjects(spender)
        amounts = await self._amounts(subjects)
        found: list[Standing] = []
        for scope, subject in subjects.items():
            limited = [(key, amount) for key, amount in amounts.items() if key[0] == scope]
            if limited:
                found += await _spent(scope, subject, spender.workspace, limited, now)
        return found

    async def _amounts(self, subjects: dict[LimitScope, str]
                       ) -> dict[LimitKey, tuple[float, bool]]:
        """Each limit of these subjects: (amount, set by an operator), None amounts left out."""
        amounts = {key: (amount, False) for key, amount in self.defaults.items()
                   if key[0] in subjects}
        if subjects:
            condition = Q(*(Q(scope=scope, subject=subject) for scope, subject in subjects.items()),
                          join_type="OR")
            for row in await SpendLimit.filter(condition):
                key = (LimitScope(row.scope), LimitPeriod(row.period), LimitUnit(row.unit))
                if row.amount is None:
                    amounts.pop(key, None)
                else:
                    amounts[key] = (row.amount, True)
        return {key: amounts[key] for key in KEYS if key in amounts}


def _subjects(spender: Spender) -> dict[LimitScope, str]:
    """The user, channel and workspace a spender's calls count against (where it has them)."""
    named = {LimitScope.USER: spender.user, LimitScope.CHANNEL: spender.channel,
             LimitScope.WORKSPACE: spender.workspace}
    return {scope: subject for scope, subject in named.items() if subject}


async def _spent(scope: LimitScope, subject: str, workspace: str,
                 limited: Iterable[tuple[LimitKey, tuple[float, bool]]],
                 now: datetime) -> list[Standing]:
    month = periods.window(LimitPeriod.MONTH, now)
    day = periods.window(LimitPeriod.DAY, now)
    within = workspace if scope == LimitScope.CHANNEL else None
    spent = {LimitPeriod.MONTH: await reports.spent_by(scope, subject, month.first_day,
                                                       workspace=within)}
    found = []
    for (_, period, unit), (amount, overridden) in limited:
        window = day if period == LimitPeriod.DAY else month
        if period not in spent:
            spent[period] = await reports.spent_by(scope, subject, day.first_day,
                                                   workspace=within)
        used = _measure(spent[period], unit)
        found.append(Standing(scope, subject, period, unit, amount, used, window.resets_at,
                              overridden))
    return found


def _measure(spent: UsageTotals, unit: LimitUnit) -> float:
    return float(spent.tokens) if unit == LimitUnit.TOKENS else (spent.cost or 0.0)


# --- what a refused person is told (pure) -----------------------------------------------------

def reached(standing: Standing, spender: Spender, now: datetime,
            stopped: bool = False) -> SpendLimitReached:
    """The refusal of a reached limit: its words for people, its facts for API clients."""
    limit: dict[str, object] = {
        "scope": str(standing.scope), "subject": standing.subject,
        "period": str(standing.period), "unit": str(standing.unit), "amount": standing.amount,
        "used": standing.used, "resetsAt": standing.resets_at.isoformat(),
    }
    wait = max(0.0, (standing.resets_at - now).total_seconds())
    return SpendLimitReached(refusal(standing, spender, now, stopped), limit, wait)


def amount_words(amount: float, unit: LimitUnit) -> str:
    """"12,000 tokens", "$5.00"."""
    return f"{int(amount):,} tokens" if unit == LimitUnit.TOKENS else words.money(amount)


def refusal(standing: Standing, spender: Spender, now: datetime, stopped: bool = False) -> str:
    """Which limit, what was spent of it, when it resets and who can raise it: "You have used
    12,345 tokens of the 10,000 tokens you may use a day, so I did not answer. It resets at
    midnight UTC (in 3 h 05 min); the bot's operators can raise it."."""
    unit, period = standing.unit, standing.period
    verb = "use" if unit == LimitUnit.TOKENS else "spend"
    used, amount = amount_words(standing.used, unit), amount_words(standing.amount, unit)
    who, has, may = _who(standing.scope, spender)
    outcome = "so I stopped this answer" if stopped else "so I did not answer"
    return (f"{who} {has} used {used} of the {amount} {may} {verb} a {period}, {outcome}. "
            f"It resets {periods.reset_words(standing.resets_at, now)}; the bot's operators "
            "can raise it.")


def _who(scope: LimitScope, spender: Spender) -> tuple[str, str, str]:
    if scope == LimitScope.USER:
        if spender.user == OPERATOR:
            return "The operators", "have", "they may"
        return "You", "have", "you may"
    if scope == LimitScope.CHANNEL:
        return "This channel", "has", "it may"
    place = "server" if spender.platform == "discord" else "workspace"
    return f"This {place}", "has", "it may"


# --- the operators' limits (the admin API's /api/limits) ----------------------------------

async def overrides() -> list[SpendLimit]:
    """Every limit an operator set, by scope, subject, period and unit."""
    return await SpendLimit.all().order_by("scope", "subject", "period", "unit")


async def set_override(scope: LimitScope, subject: str, period: LimitPeriod, unit: LimitUnit,
                       amount: float | None) -> SpendLimit:
    """The limit of one user, channel or workspace from now on, in place of the default
    (None: no limit for it; 0: no run at all)."""
    row, _ = await SpendLimit.update_or_create(
        {"amount": amount, "updated_at": utc_now()}, scope=scope, subject=subject,
        period=period, unit=unit)
    return row


async def remove_override(scope: LimitScope, subject: str, period: LimitPeriod,
                          unit: LimitUnit) -> bool:
    """Back to the default for that one; False when no operator had set it."""
    removed = await SpendLimit.filter(scope=scope, subject=subject, period=period,
                                      unit=unit).delete()
    return bool(removed)
