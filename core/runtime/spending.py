"""A run's model calls: each `usage` event priced at its model's prices (MODELS_FILE), recorded
once (core/usage/ledger.py) against who asked and where, and counted for /metrics; and the
spend limits checked before each further model call (`enforce`, at each new step of a run that
made calls): a run whose spender reached a limit is aborted on its Bridge, and ends FAILED
saying which limit, when it resets and who can raise it.

The check waits for the next step rather than following the call: the call that reached a
limit may have been the run's last, whose answer is worth keeping; the next step's model call
is the one a limit stops (the abort reaches the Bridge as it begins)."""

from __future__ import annotations

import logging

import msgspec

from core.agent.catalogue import Catalogue, ModelEntry
from core.agent.events import Usage
from core.errors import BridgeUnavailable, Conflict, NotFound, SpendLimitReached
from core.runtime.context import RunContext
from core.runtime.live import LiveRun
from core.usage import ledger
from core.usage.spenders import Spender, spender_of

log = logging.getLogger(__name__)


def priced(catalogue: Catalogue, live: LiveRun, usage: Usage) -> Usage:
    """The event with its cost at the run's model's prices now (None: the model has none)."""
    entry = _entry(catalogue, live.turn.assistant.model_id)
    price = entry.price if entry is not None else None
    cost = None if price is None else price.cost(usage.prompt_tokens, usage.completion_tokens,
                                                  usage.cached_tokens)
    return msgspec.structs.replace(usage, cost=cost)


async def record(pool: RunContext, live: LiveRun, usage: Usage) -> None:
    """Store the call once (a replayed event adds nothing) and count it."""
    spender = await run_spender(pool, live)
    call = ledger.Call(live.message_id, live.run_id, live.session_id, spender, usage)
    if await pool.durably(ledger.record, call):
        pool.metrics.spent(usage)


async def enforce(pool: RunContext, live: LiveRun) -> None:
    """Before the run's next model call: stop it if who asked, or where, reached a limit."""
    if live.limit_stop is not None or live.state.usage.calls == 0:
        return
    spender = await run_spender(pool, live)
    try:
        await pool.durably(pool.limits.check, spender, True)
    except SpendLimitReached as reached:
        live.limit_stop = reached.public
        log.info("run stopped by a spend limit: %s", reached.limit, extra={"run_id": live.run_id})
        await _abort(pool, live)


async def _abort(pool: RunContext, live: LiveRun) -> None:
    try:
        await pool.bridge.abort(live.run_id)
    except (NotFound, Conflict):  # it ended meanwhile: it ends as it ends
        live.limit_stop = None
    except BridgeUnavailable as error:  # it goes on; the next step tries again
        live.limit_stop = None
        log.warning("could not stop run %s at its spend limit: %s", live.run_id, error.message)


async def run_spender(pool: RunContext, live: LiveRun) -> Spender:
    """Who the run's calls count against: the regenerating clicker, else the question's
    author, else an operator; read once per run."""
    if live.spender is None:
        answer, question = live.turn.assistant, live.turn.user
        live.spender = await pool.durably(spender_of, live.session_id,
                                          answer.author or question.author, answer.spend_exempt)
    return live.spender


def _entry(catalogue: Catalogue, model_id: str | None) -> ModelEntry | None:
    if not model_id:
        return catalogue.default_model()
    try:
        return catalogue.model(model_id)
    except NotFound:  # taken out of MODELS_FILE since the run started: no price known
        return None
