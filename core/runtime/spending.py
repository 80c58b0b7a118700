"""A run's model calls: each `usage` event priced at its model's prices (MODELS_FILE), recorded
once (core/usage/ledger.py) against who asked and where, and counted for /metrics."""

from __future__ import annotations

import msgspec

from core.agent.catalogue import Catalogue, ModelEntry
from core.agent.events import Usage
from core.errors import NotFound
from core.runtime.context import RunContext
from core.runtime.live import LiveRun
from core.usage import ledger
from core.usage.spenders import Spender, spender_of


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
