"""What driving one run needs of the runtime (`RunContext`): the runner and the continuation
of a turn see this, not the whole RunPool, so they can neither start nor stop other runs, and
the runtime's modules import no cycle. RunPool is one; a test may pass anything else that is."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ParamSpec, Protocol, TypeVar

from core.agent.bridge.port import Bridge
from core.agent.catalogue import Catalogue
from core.runtime.leases import Leases
from core.runtime.live import LiveRun
from core.runtime.log_buffer import LogBuffer
from core.runtime.metrics import RunMetrics
from core.runtime.slots import RunSlots
from core.usage.limits import SpendLimits

P = ParamSpec("P")
T = TypeVar("T")


class RunContext(Protocol):
    bridge: Bridge  # where the run streams from
    catalogue: Catalogue  # its model and skill
    buffer: LogBuffer  # where its events are stored, batched
    slots: RunSlots  # the global cap of runs in flight
    leases: Leases  # this replica's claim on the run
    metrics: RunMetrics
    limits: SpendLimits  # checked before each further model call
    run_buffer_bytes: int  # events kept in memory per live run
    history_attachment_bytes: int  # of earlier files each request carries again

    async def durably(self, operation: Callable[P, Awaitable[T]], *args: P.args,
                      **kwargs: P.kwargs) -> T:
        """A database step of the run, retried through a database outage."""
        ...

    def publish(self, live: LiveRun) -> None:
        """Tell the run's subscribers it changed."""
        ...

    def finished(self, live: LiveRun) -> None:
        """The run ended: stamp it, free its memory, tell its subscribers."""
        ...

    def let_go(self, live: LiveRun) -> None:
        """Forget a run whose state could not be written, for recovery to resume."""
        ...
