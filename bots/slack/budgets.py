"""Our budgets for Slack's rate limits: a token bucket per workspace and method, plus one per
message (edits) and per channel (posts). Each sits a little under what Slack enforces, so
network jitter between our clock and Slack's never turns into a 429.

Slack: chat.update ~1/s per message and Tier 3 (50+/min) per workspace; chat.postMessage
~1/s per channel with short bursts; views.*, chat.postEphemeral, files.* Tier 4 (100+/min).
"""

from __future__ import annotations

from core.ratelimit import Limit

PER_MESSAGE_EDIT = Limit(per_second=1 / 1.1, burst=1)
PER_CHANNEL_POST = Limit(per_second=1 / 1.1, burst=4)
TIER_3 = Limit.per_minute(45, burst=8)
TIER_4 = Limit.per_minute(90, burst=15)

Budget = tuple[str, Limit]


def workspace(team: str, method: str, limit: Limit) -> Budget:
    return (f"slack:{team}:{method}", limit)


def edit(team: str, channel: str, ts: str) -> list[Budget]:
    return [(f"slack:{team}:edit:{channel}:{ts}", PER_MESSAGE_EDIT),
            workspace(team, "chat.update", TIER_3)]


def post(team: str, channel: str) -> list[Budget]:
    return [(f"slack:{team}:post:{channel}", PER_CHANNEL_POST)]


def delete(team: str) -> list[Budget]:
    return [workspace(team, "chat.delete", TIER_3)]


def ephemeral(team: str) -> list[Budget]:
    return [workspace(team, "chat.postEphemeral", TIER_4)]


def views(team: str) -> list[Budget]:
    return [workspace(team, "views.update", TIER_4)]


def upload(team: str) -> list[Budget]:
    return [workspace(team, "files.upload", TIER_4)]
