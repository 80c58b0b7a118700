"""`GET /metrics`: the runtime's figures and the chat platforms' connections in the
Prometheus text format, behind ADMIN_TOKEN like the admin API (Prometheus sends it with its
scrape config's `authorization: {credentials: ...}`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from litestar import Response, get
from litestar.handlers import HTTPRouteHandler
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric, SummaryMetricFamily
from prometheus_client.registry import Collector

from admin.auth import require_admin_token
from admin.health import BRIDGE_TIMEOUT
from admin.services import SupervisedBridge
from core.agent.bridge.fleet import BridgeFleet
from core.chat import feedback
from core.edge.platform_links import LinkState, PlatformLinks
from core.runtime.pool import RunPool
from core.runtime.updates import PauseView
from core.store.models import FeedbackValue, MessageStatus, PauseStatus


class RuntimeCollector(Collector):
    """Reads the pool's counters at scrape time (nothing is updated on the hot path)."""

    def __init__(self, pool: RunPool) -> None:
        self.pool = pool

    def collect(self) -> Iterator[Metric]:
        active = self.pool.active()
        metrics = self.pool.metrics
        yield _gauge("hermes_runs_active", "runs streaming now",
                     sum(1 for u in active if u.status == MessageStatus.RUNNING))
        yield _gauge("hermes_runs_queued", "runs waiting for a slot",
                     sum(1 for u in active if u.status == MessageStatus.QUEUED))
        yield _gauge("hermes_clarify_pending", "questions waiting for an answer",
                     sum(1 for u in active if _waiting(u.pause)))
        yield _gauge("hermes_approvals_pending", "tool calls waiting for a decision",
                     sum(1 for u in active if _waiting(u.approval)))
        yield CounterMetricFamily("hermes_events", "Bridge events processed", value=metrics.events)
        yield CounterMetricFamily("hermes_bridge_reconnects", "event streams resumed",
                                  value=metrics.bridge_reconnects)
        flush = SummaryMetricFamily("hermes_log_flush_seconds", "log buffer flush latency")
        flush.add_metric([], count_value=metrics.flushes, sum_value=sum(metrics.flush_seconds))
        yield flush
        yield from _platform_counters(metrics.platform_calls, metrics.rate_limited)
        yield from _spend_counters(metrics.tokens, metrics.cost)


class FeedbackCollector(Collector):
    """Answers rated 👍 / 👎, as counted in the database just before the scrape."""

    def __init__(self) -> None:
        self.counts: dict[FeedbackValue, int] = {}

    async def refresh(self) -> None:
        self.counts = await feedback.counts()

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily("hermes_feedback", "answers rated, by value (good, bad)",
                                   labels=["value"])
        for value, count in sorted(self.counts.items()):
            family.add_metric([str(value)], count)
        yield family


class BridgeChildCollector(Collector):
    """The child Bridge of `serve`: is it up, how often was it started again."""

    def __init__(self, child: SupervisedBridge) -> None:
        self.child = child

    def collect(self) -> Iterator[Metric]:
        health = self.child.health()
        restarts = health["restarts"]
        yield _gauge("hermes_bridge_up", "1 while the child Bridge runs and answers",
                     1.0 if health["state"] == "running" else 0.0)
        yield CounterMetricFamily("hermes_bridge_restarts", "child Bridge restarts after it "
                                  "exited on its own",
                                  value=float(restarts) if isinstance(restarts, int) else 0.0)


class BridgeFleetCollector(Collector):
    """Each Bridge of the fleet: does it answer (asked just before the scrape), and how many of
    this replica's runs in flight it holds."""

    def __init__(self, fleet: BridgeFleet, pool: RunPool) -> None:
        self.fleet = fleet
        self.pool = pool
        self.answering: dict[str, bool] = {}

    async def refresh(self) -> None:
        reports = await self.fleet.reports(BRIDGE_TIMEOUT)
        self.answering = {r.name: r.health is not None for r in reports}

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("hermes_bridge_answering", "1 while the Bridge answers /health",
                               labels=["bridge"])
        held = GaugeMetricFamily("hermes_bridge_runs", "runs in flight here held by the Bridge",
                                 labels=["bridge"])
        holding = self.fleet.holding(u.run_id for u in self.pool.active())
        for name in self.fleet.members:
            up.add_metric([name], 1.0 if self.answering.get(name) else 0.0)
            held.add_metric([name], holding[name])
        yield from (up, held)


def _spend_counters(tokens: Mapping[tuple[str, str], int],
                    cost: Mapping[str, float]) -> Iterator[Metric]:
    """The model calls this process recorded: tokens by model and kind (prompt, completion,
    cached: the cached ones are among the prompt's), and the cost of the priced ones."""
    counted = CounterMetricFamily("hermes_tokens", "tokens of the model calls recorded, by "
                                  "model and kind (prompt includes cached)",
                                  labels=["model", "kind"])
    for (model, kind), count in sorted(tokens.items()):
        counted.add_metric([model, kind], count)
    spent = CounterMetricFamily("hermes_cost", "cost of the priced model calls recorded, at "
                                "MODELS_FILE's prices", labels=["model"])
    for model, amount in sorted(cost.items()):
        spent.add_metric([model], amount)
    yield from (counted, spent)


def _waiting(pause: PauseView | None) -> bool:
    return pause is not None and pause.status == PauseStatus.UNANSWERED


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


def _platform_counters(calls: dict, limited: dict) -> Iterator[CounterMetricFamily]:
    family = CounterMetricFamily("hermes_platform_calls", "platform API calls",
                                 labels=["platform", "method"])
    for (platform, method), count in sorted(calls.items()):
        family.add_metric([platform, method], count)
    yield family
    throttled = CounterMetricFamily("hermes_platform_rate_limited", "429 answers",
                                    labels=["platform"])
    for platform, count in sorted(limited.items()):
        throttled.add_metric([platform], count)
    yield throttled


class PlatformLinkCollector(Collector):
    """Each configured platform's connection: up or not, reconnects, events dropped."""

    def __init__(self, links: PlatformLinks) -> None:
        self.links = links

    def collect(self) -> Iterator[Metric]:
        reports = self.links.reports()
        connected = GaugeMetricFamily("hermes_platform_connected",
                                      "1 while the platform's connection is up", labels=["platform"])
        reconnects = CounterMetricFamily("hermes_platform_reconnects",
                                         "connections re-established after a loss",
                                         labels=["platform"])
        dropped = CounterMetricFamily("hermes_platform_dropped_events",
                                      "inbound events dropped as unparseable", labels=["platform"])
        for platform, report in reports.items():
            connected.add_metric([platform], 1 if report.state is LinkState.OK else 0)
            reconnects.add_metric([platform], report.reconnects)
            dropped.add_metric([platform], report.dropped)
        yield from (connected, reconnects, dropped)


def metrics_route(pool: RunPool, links: PlatformLinks | None = None,
                  bridge_child: SupervisedBridge | None = None) -> HTTPRouteHandler:
    """The route, bound to this process's pool, its platform connections and its child
    Bridge's supervisor (if any)."""
    registry = CollectorRegistry()
    rated = FeedbackCollector()
    registry.register(RuntimeCollector(pool))
    registry.register(rated)
    registry.register(PlatformLinkCollector(links if links is not None else PlatformLinks()))
    if bridge_child is not None:
        registry.register(BridgeChildCollector(bridge_child))
    fleet = BridgeFleetCollector(pool.bridge, pool) if isinstance(pool.bridge, BridgeFleet) else None
    if fleet is not None:
        registry.register(fleet)

    @get("/metrics", include_in_schema=False, guards=[require_admin_token])
    async def metrics() -> Response[bytes]:
        await rated.refresh()
        if fleet is not None:
            await fleet.refresh()
        return Response(generate_latest(registry), media_type="text/plain; version=0.0.4")

    return metrics
