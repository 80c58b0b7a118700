"""A Slack thread's earlier messages, as context of the bot's first turn there
(core/chat/thread_context.py): read with `conversations.replies` (bot token; channels:history,
groups:history, im:history, mpim:history) up to the cap, before the mention, each author
named with `users.info` (users:read; names cached). Our bot's own messages are left out;
another bot's carry its name and are marked. Both calls spend their Tier budgets
(delivery/budgets.py); a failure is the caller's to log (core.conversation.written.earlier).
"""

from __future__ import annotations

import functools
import re
from collections import OrderedDict, deque
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from slack_sdk.errors import SlackApiError

from bots.fields import first_text, items, obj, text
from core.conversation.vocabulary import TEXT_CHARS, EarlierMessage

from .delivery import budgets
from .delivery.sender import SlackSender
from .inbound import slack_file
from .render.mrkdwn import from_slack

NAMES = 5_000  # author names remembered
MENTIONS = 20  # people named in one message's text (the others keep their <@U…>)
SAID_SUBTYPES = (None, "file_share", "thread_broadcast", "bot_message", "me_message")
_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")


class SlackThreadHistory:
    """Reads a thread's messages before a given one, for the core's context rule."""

    def __init__(self, sender: SlackSender, names: int = NAMES) -> None:
        self._sender = sender
        self._names: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._limit = names

    async def before(self, team: str, channel: str, thread_ts: str, ts: str, limit: int,
                     bot_user_id: str | None) -> list[EarlierMessage]:
        """Up to `limit` messages of the thread older than `ts`, oldest first."""
        kept: deque[Mapping[str, Any]] = deque(maxlen=limit)
        async for message in self._sender.thread(team, channel, thread_ts):
            if _earlier(message, ts) and _said(message) and not _ours(message, bot_user_id):
                kept.append(message)
        return [await self._message(team, m, bot_user_id) for m in kept]

    async def _message(self, team: str, message: Mapping[str, Any],
                       bot_user_id: str | None) -> EarlierMessage:
        bot = message.get("bot_id") is not None or message.get("subtype") == "bot_message"
        user = text(message.get("user"))
        if bot:
            author = first_text(message.get("username"), obj(message.get("bot_profile")).get("name"),
                                user, message.get("bot_id")) or "a bot"
        else:
            author = await self.name(team, user) if user else "someone"
        words = from_slack(await self._named(team, _head(text(message.get("text")) or ""),
                                             bot_user_id), bot_user_id)
        return EarlierMessage(
            author=author, text=words,
            at=_time(text(message.get("ts"))),
            files=tuple(slack_file(obj(f)).name for f in items(message.get("files"))),
            bot=bot, id=text(message.get("ts")) or "")

    async def _named(self, team: str, words: str, bot_user_id: str | None) -> str:
        """`words` with each person it mentions (`<@U…>`, ours aside) as `@name`."""
        mentioned = dict.fromkeys(u for u in _MENTION.findall(words) if u != bot_user_id)
        names = {user: await self.name(team, user) for user in list(mentioned)[:MENTIONS]}
        return _MENTION.sub(lambda m: f"@{names[m.group(1)]}" if m.group(1) in names
                            else m.group(0), words)

    async def name(self, team: str, user: str) -> str:
        """The name people see for `user` (display name, else real name, else the id); a
        failed look-up gives the id and is not remembered."""
        key = (team, user)
        if key in self._names:
            self._names.move_to_end(key)
            return self._names[key]
        try:
            response = await self._sender.read(
                budgets.users(team), functools.partial(self._sender.client.users_info, user=user))
        except SlackApiError:
            return user
        found = obj(response.get("user"))
        profile = obj(found.get("profile"))
        name = first_text(profile.get("display_name"), profile.get("real_name"),
                          found.get("real_name"), found.get("name")) or user
        self._names[key] = name
        while len(self._names) > self._limit:
            self._names.popitem(last=False)
        return name


def _head(raw: str) -> str:
    """Enough of a message's text to bound after its links are unwrapped (a megabyte of it is
    not worth a regex's time)."""
    return raw[: 4 * TEXT_CHARS]


def _said(message: Mapping[str, Any]) -> bool:
    """A message someone wrote (not a join, a topic change, a pin)."""
    return message.get("subtype") in SAID_SUBTYPES


def _earlier(message: Mapping[str, Any], ts: str) -> bool:
    stamp = text(message.get("ts"))
    return stamp is not None and _ts_key(stamp) < _ts_key(ts)


def _ours(message: Mapping[str, Any], bot_user_id: str | None) -> bool:
    return bot_user_id is not None and message.get("user") == bot_user_id


def _ts_key(ts: str) -> tuple[int, int]:
    seconds, _, micros = ts.partition(".")
    try:
        return int(seconds), int(micros or 0)
    except ValueError:
        return (0, 0)


def _time(ts: str | None) -> datetime | None:
    try:
        return datetime.fromtimestamp(float(ts or ""), UTC)
    except (ValueError, OverflowError):
        return None
