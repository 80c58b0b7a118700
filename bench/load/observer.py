"""Reads what the fakes received, as it arrives, into one `Seen` per conversation: when its
first reply appeared and when its finished answer (the one with a Regenerate button) did.
Times are the fakes' arrival times (time.monotonic of this process).

The first reply is the first thing the person sees the bot do in that conversation: a bot
message there (Slack: chat.postMessage or chat.startStream; Discord: a message posted in the
thread), or the first sign a turn gives before its message (Slack: the thread's loading status,
assistant.threads.setStatus with a status; Discord: the bot typing in the thread). Both show in
the conversation itself, where the person looks for the answer: Slack's status under the
thread ("is working…"), Discord's "… is typing" in the thread. Not counted: the thread Discord
opens on the message (it shows the question, not a reply), and reactions."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from bots.slack.ids import REGENERATE as SLACK_REGENERATE
from bots.slack.ids import STOP as SLACK_STOP

from .script import answer
from .world import World

SLACK_POSTS = frozenset({"chat.postMessage", "chat.startStream"})
SLACK_STATUS = "assistant.threads.setStatus"
DISCORD_REGENERATE = '"hermes:regen:'  # the start of the Regenerate button's custom id
DISCORD_POST = "POST /channels/{channel_id}/messages"
DISCORD_EDIT = "PATCH /channels/{channel_id}/messages/{message_id}"
DISCORD_TYPING = "POST /channels/{channel_id}/typing"
DISCORD_SHOWN = frozenset({DISCORD_POST, DISCORD_EDIT, DISCORD_TYPING})


@dataclass
class Seen:
    number: int
    platform: str
    asked_at: float = 0.0  # just before the user's message was sent
    first_reply_at: float | None = None
    final_at: float | None = None
    wrong_answer: bool = False  # a finished answer that is not this conversation's


class Observer:
    """Call `read()` to take in the calls that arrived since the last read."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.seen: dict[int, Seen] = {}
        self._slack_channels = {c: n for n, c in world.slack_channels.items()}
        self._discord_channels = {str(c): n for n, c in world.discord_channels.items()}
        self.slack_from = len(world.slack.calls)  # calls before the load (start-up) not counted
        self.discord_from = len(world.discord.core.calls)
        self._slack_read, self._discord_read = self.slack_from, self.discord_from
        self.slack_settled_s: float | None = None  # last answer -> every live message final

    def expect(self, seen: Seen) -> None:
        self.seen[seen.number] = seen
        if seen.platform == "slack":  # its channel may have been added after this observer
            self._slack_channels[self.world.slack_channels[seen.number]] = seen.number

    def thread_opened(self, number: int, thread_id: str) -> None:
        """A Discord thread's id is its first message's: the bot answers in there."""
        self._discord_channels[thread_id] = number

    def unsettled_slack(self) -> int:
        """Bot messages of the load's Slack channels not in their final state: a stream
        still open, or a live message still showing its Stop button."""
        slack = self.world.slack
        mine = [m for channel in self._slack_channels for m in slack.history(channel) if m.bot_id]
        return sum(1 for m in mine if m.streaming or SLACK_STOP in json.dumps(m.blocks or []))

    def unshown_slack(self) -> list[int]:
        """Slack conversations whose channel, in the fake's stored state, shows no bot message
        with their answer and its Regenerate button: a check that what was counted as visible
        is what the user sees, and that no tidy-up took it away."""
        slack, missing = self.world.slack, []
        for channel, number in self._slack_channels.items():
            if number not in self.seen:
                continue
            shown = [json.dumps([m.text, m.chunks, m.blocks]) for m in slack.history(channel) if m.bot_id]
            if not any(SLACK_REGENERATE in s and answer(number) in s for s in shown):
                missing.append(number)
        return sorted(missing)

    def streamed(self) -> tuple[int, int]:
        """Slack conversations whose turn streamed (a chat.startStream answered 200 in their
        channel), and how many of them are among as many conversations that asked first."""
        started = {str(c.args.get("channel")) for c in self.world.slack.calls[self.slack_from:]
                   if c.method == "chat.startStream" and c.status == 200}
        streamed = {n for channel, n in self._slack_channels.items() if channel in started}
        asked = sorted((s for s in self.seen.values() if s.platform == "slack"),
                       key=lambda s: s.asked_at)
        first = {s.number for s in asked[:len(streamed)]}
        return len(streamed), len(streamed & first)

    def finished(self) -> int:
        return sum(1 for s in self.seen.values() if s.final_at is not None)

    def read(self) -> None:
        calls = self.world.slack.calls
        while self._slack_read < len(calls) and calls[self._slack_read].status:
            call = calls[self._slack_read]
            channel = call.args.get("channel") or call.args.get("channel_id")
            number = self._slack_channels.get(str(channel))
            if number in self.seen and call.status == 200:
                shown = call.method in SLACK_POSTS or (
                    call.method == SLACK_STATUS and bool(call.args.get("status")))
                self._note(self.seen[number], call.method, call.at, call.args,
                           SLACK_REGENERATE, posted=shown)
            self._slack_read += 1
        discord = self.world.discord.core.calls
        while self._discord_read < len(discord) and discord[self._discord_read].status:
            sent = discord[self._discord_read]
            number = self._discord_channels.get(str(sent.params.get("channel_id")))
            if number in self.seen and sent.status in (200, 204) and sent.route in DISCORD_SHOWN:
                self._note(self.seen[number], sent.route, sent.at, sent.json, DISCORD_REGENERATE,
                           posted=sent.route != DISCORD_EDIT)
            self._discord_read += 1

    def _note(self, seen: Seen, method: str, at: float, body: Any, regenerate: str,
              posted: bool) -> None:
        if posted and seen.first_reply_at is None:
            seen.first_reply_at = at
        shown = json.dumps(body)
        if seen.final_at is None and regenerate in shown:
            seen.final_at = at
            seen.wrong_answer = answer(seen.number) not in shown

    def platform_calls(self) -> dict[str, Counter[str]]:
        """Calls each fake received since the load began, by method (Discord: by route)."""
        slack = self.world.slack.calls[self.slack_from:]
        discord = self.world.discord.core.calls[self.discord_from:]
        return {"slack": Counter(c.method for c in slack),
                "discord": Counter(c.route for c in discord)}

    def peak_calls_per_second(self) -> dict[str, int]:
        """The most calls each fake received within any one second of the load (Discord's
        global limit, which the fake does not model, is 50/s per bot)."""
        times = {"slack": [c.at for c in self.world.slack.calls[self.slack_from:]],
                 "discord": [c.at for c in self.world.discord.core.calls[self.discord_from:]]}
        return {platform: _densest_second(sorted(at)) for platform, at in times.items()}

    def rate_limited_by(self) -> dict[str, int]:
        """429 answers by Slack method / Discord route."""
        limited = Counter(c.method for c in self.world.slack.calls if c.status == 429)
        limited.update(str(getattr(r, "route", r)) for r in self.world.discord.rate_limited)
        return dict(limited)

    def rate_limited(self) -> int:
        """429 answers of both fakes, start-up included."""
        return self.world.slack.ratelimited + len(self.world.discord.rate_limited)


def _densest_second(times: list[float]) -> int:
    most, first = 0, 0
    for last, at in enumerate(times):
        while at - times[first] >= 1.0:
            first += 1
        most = max(most, last - first + 1)
    return most
