"""Markdown to Slack mrkdwn and back (pure).

The agent writes Markdown; Slack shows mrkdwn. `slackify-markdown` parses the Markdown with
markdown-it (bold, links, lists, fences, escaping of & < >) rather than regex-rewriting it.
"""

from __future__ import annotations

import re

from slackify_markdown import slackify_markdown

from .blocks import clip

_LINK = re.compile(r"<(https?://[^|>]+)\|([^>]+)>")
_BARE_LINK = re.compile(r"<(https?://[^|>]+)>")
_USER_ID = re.compile(r"[UW][A-Z0-9]+")


def to_mrkdwn(markdown: str) -> str:
    """The answer as Slack shows it."""
    return slackify_markdown(markdown).strip() if markdown.strip() else ""


def escape(text: str) -> str:
    """Plain text inside mrkdwn: Slack's three control characters escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def code_block(text: str, limit: int) -> str:
    """`text` as a fenced code block of at most `limit` characters that it cannot break out
    of: & < > escaped, every backtick followed by a zero-width space (so no fence forms
    inside), cut before escaping (an entity is never split) with an ellipsis when cut."""
    keep = len(text)
    while True:
        body = escape(clip(text, keep)).replace("`", "`\u200b")
        if len(body) + 6 <= limit or keep <= 1:
            return f"```{body}```"
        keep = max(1, min(keep - 1, keep * (limit - 6) // len(body)))


def who(user: str | None) -> str:
    """A Slack user id as a mention; anything else (an operator's name from the admin API) as
    plain text, since `<@ops>` would show as a broken mention."""
    if not user:
        return "someone"
    return f"<@{user}>" if _USER_ID.fullmatch(user) else escape(user)


def from_slack(text: str, bot_user_id: str | None = None) -> str:
    """What a user typed, for the agent: the bot's mention removed, links unwrapped."""
    if bot_user_id:
        text = text.replace(f"<@{bot_user_id}>", " ")
    text = _LINK.sub(lambda m: f"{m.group(2)} ({m.group(1)})" if m.group(2) != m.group(1)
                     else m.group(1), text)
    text = _BARE_LINK.sub(r"\1", text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return re.sub(r"[ \t]+", " ", text).strip()
