"""The figures of one load run, the checks it must pass, and the printed table."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from tortoise import connections

from bench.admin import percentile
from core.store.models import ChatMessage, MessageStatus, Role

from .observer import Observer, Seen
from .system import TimedLogBuffer


@dataclass
class Figures:
    conversations: int
    seconds: float  # first message sent -> last answer shown
    completed: int  # answers shown in the right thread and stored as SUCCESS
    first_reply_ms: dict[str, tuple[float, float]]  # platform -> (p50, p99)
    persist_ms: tuple[float, float]
    done_to_platform_ms: dict[str, tuple[float, float]]
    calls_per_run: dict[str, dict[str, float]]  # platform -> method -> calls / its runs
    peak_calls_per_second: dict[str, int]
    rate_limited: int
    rate_limited_by: dict[str, int]  # Slack method / Discord route -> 429 answers
    streamed: int  # Slack conversations whose turn streamed (chat.startStream)
    streamed_first: int  # ... of them among as many Slack conversations that asked first
    memory_kib_per_run: dict[str, float]  # process -> (peak RSS - RSS before) / runs
    log_rows: int
    slack_settled_s: float | None  # last answer shown -> every Slack live message final
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


async def measure(observer: Observer, buffer: TimedLogBuffer, seconds: float,
                  memory: dict[str, float]) -> Figures:
    """Everything from the fakes' logs, the buffer's timings and the database."""
    seen = list(observer.seen.values())
    runs = {p: sum(1 for s in seen if s.platform == p) for p in ("slack", "discord")}
    calls = {platform: {method: count / max(1, runs[platform]) for method, count in
                        [("total", sum(counted.values())), *counted.most_common()]}
             for platform, counted in observer.platform_calls().items()}
    stored, problems = await _check_logs(buffer)
    succeeded = await ChatMessage.filter(role=Role.ASSISTANT, status=MessageStatus.SUCCESS).count()
    shown = sum(1 for s in seen if s.final_at is not None and not s.wrong_answer)
    problems += _outcome_problems(seen, shown, succeeded, observer.rate_limited())
    if observer.rate_limited():
        problems.append(f"429s by method: {observer.rate_limited_by()}")
    streamed, streamed_first = observer.streamed()
    if unshown := observer.unshown_slack():
        problems.append(f"Slack conversations not showing their answer at the end: {unshown[:10]}")
    if observer.slack_settled_s is None:
        problems.append(f"{observer.unsettled_slack()} Slack live messages not final "
                        "two minutes after the last answer")
    return Figures(
        conversations=len(seen), seconds=seconds, completed=min(shown, succeeded),
        first_reply_ms=_by_platform(seen, _first_replies(seen)),
        persist_ms=_p50_p99([s * 1000 for s in buffer.persist_seconds]),
        done_to_platform_ms=_by_platform(seen, _done_to_platform(seen, buffer,
                                                                 await _answer_messages())),
        calls_per_run=calls,
        peak_calls_per_second=observer.peak_calls_per_second(),
        rate_limited=observer.rate_limited(), rate_limited_by=observer.rate_limited_by(),
        streamed=streamed, streamed_first=streamed_first, memory_kib_per_run=memory, log_rows=stored,
        slack_settled_s=observer.slack_settled_s, problems=problems)


def _outcome_problems(seen: list[Seen], shown: int, succeeded: int, limited: int) -> list[str]:
    problems = [f"conversation {s.number} ({s.platform}) showed another conversation's answer"
                for s in seen if s.wrong_answer]
    if shown < len(seen):
        problems.append(f"{len(seen) - shown} answers not shown (right) before the deadline")
    if succeeded != len(seen):
        problems.append(f"{succeeded} of {len(seen)} runs stored as SUCCESS")
    if limited:
        problems.append(f"{limited} rate-limit (429) answers")
    return problems


def _p50_p99(values: list[float]) -> tuple[float, float]:
    return (percentile(values, 0.5), percentile(values, 0.99)) if values else (float("nan"),) * 2


def _first_replies(seen: list[Seen]) -> dict[int, float]:
    """Seconds from each user's message to the bot's first message in its thread."""
    return {s.number: s.first_reply_at - s.asked_at for s in seen if s.first_reply_at is not None}


def _done_to_platform(seen: list[Seen], buffer: TimedLogBuffer,
                      messages: dict[int, int]) -> dict[int, float]:
    """Seconds from the `done` event's arrival in the runtime to the fake receiving the
    finished answer (the fakes' monotonic times moved onto the wall clock of the arrival)."""
    to_wall = time.time() - time.monotonic()
    latency = {}
    for s in seen:
        done = buffer.done_at.get(messages.get(s.number, -1))
        if done is not None and s.final_at is not None:
            latency[s.number] = s.final_at + to_wall - done
    return latency


def _by_platform(seen: list[Seen], seconds: dict[int, float]) -> dict[str, tuple[float, float]]:
    """p50/p99 in ms of per-conversation `seconds`, over all conversations and per platform."""
    return {platform: _p50_p99([seconds[s.number] * 1000 for s in seen if s.number in seconds
                                and platform in ("all", s.platform)])
            for platform in ("all", "slack", "discord")}


async def _answer_messages() -> dict[int, int]:
    """Conversation number -> its assistant message id (the answer names the conversation)."""
    rows = await ChatMessage.filter(role=Role.ASSISTANT).values("id", "content")
    found: dict[int, int] = {}
    for row in rows:
        words = (row["content"] or "").split("load-", 1)
        if len(words) == 2 and words[1].split(":", 1)[0].isdigit():
            found[int(words[1].split(":", 1)[0])] = row["id"]
    return found


async def _check_logs(buffer: TimedLogBuffer) -> tuple[int, list[str]]:
    """Every event the runtime received is one stored row, none missing, none twice."""
    rows = await connections.get("default").execute_query_dict(
        "SELECT message_id, seq FROM chat_message_log")
    stored: dict[int, list[int]] = {}
    for row in rows:
        stored.setdefault(row["message_id"], []).append(row["seq"])
    problems = []
    for message_id in sorted(set(stored) | set(buffer.added)):
        seqs, added = sorted(stored.get(message_id, [])), sorted(buffer.added.get(message_id, ()))
        if seqs != added or seqs != list(range(1, len(seqs) + 1)):
            problems.append(f"message {message_id}: stored seqs {seqs[:5]}..{len(seqs)} "
                            f"!= received {added[:5]}..{len(added)}")
    return len(rows), problems


SHORT = {"POST /channels/{channel_id}/messages": "post",
         "PATCH /channels/{channel_id}/messages/{message_id}": "edit",
         "POST /channels/{channel_id}/messages/{message_id}/threads": "thread"}


def table(f: Figures, ramp: float, slack_only: bool = False) -> str:
    """The printed report."""
    def pair(values: tuple[float, float]) -> str:
        return f"p50 {values[0]:8.1f} ms   p99 {values[1]:8.1f} ms"

    pattern = "all at once" if ramp == 0 else f"spread over {ramp:g} s"
    slack = f.conversations if slack_only else (f.conversations + 1) // 2
    platforms = ("slack",) if slack_only else ("all", "slack", "discord")
    where = "all Slack, one workspace" if slack_only else "half Slack, half Discord"
    lines = [
        f"conversations         {f.conversations} ({where}), sent {pattern}",
        f"completed             {f.completed}/{f.conversations} in {f.seconds:.1f} s "
        "(first message sent -> last answer shown)",
    ]
    for platform in platforms:
        lines.append(f"first reply  {platform:8} {pair(f.first_reply_ms[platform])}")
    lines.append(f"event -> persist      {pair(f.persist_ms)}   ({f.log_rows} log rows)")
    for platform in platforms:
        lines.append(f"done -> platform {platform:7} {pair(f.done_to_platform_ms[platform])}"
                     + ("   (done -> answer visible)" if platform == "slack" else ""))
    for platform, calls in f.calls_per_run.items():
        lines.append(f"calls / run {platform:9} " + "   ".join(
            f"{SHORT.get(method, method)} {count:.1f}" for method, count in calls.items()))
    lines.append("peak calls / second   " + "   ".join(
        f"{p} {v}" for p, v in f.peak_calls_per_second.items()))
    limited = ", ".join(f"{SHORT.get(m, m)} {n}" for m, n in sorted(f.rate_limited_by.items()))
    lines.append(f"rate-limit answers    {f.rate_limited}" + (f" ({limited})" if limited else ""))
    starts = f.calls_per_run.get("slack", {}).get("chat.startStream", 0.0) * slack
    lines.append(f"slack streamed        {f.streamed}/{slack} conversations "
                 f"({starts:.0f} chat.startStream calls; {f.streamed_first} of them among the "
                 f"{f.streamed} that asked first)")
    settled = "not within 120 s" if f.slack_settled_s is None else f"{f.slack_settled_s:.1f} s"
    lines.append(f"slack live messages   final {settled} after the last answer")
    lines.append("peak memory / run     " + "   ".join(
        f"{p} {v:,.0f} KiB" for p, v in f.memory_kib_per_run.items())
        + "   ((peak RSS - RSS before the load) / N)")
    lines.append("checks                " + ("all passed" if not f.problems else
                                             "FAILED:\n  " + "\n  ".join(f.problems)))
    return "\n".join(lines)
