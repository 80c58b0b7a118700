"""Each platform driven the way its users drive it (through its fake), behind one interface,
so a scenario is written once and asserts the same outcome on both."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from bots.discord.render.turn import BRANCH_NOTE
from bots.slack import ids as slack_ids
from bots.slack.render.turn import BRANCHED
from bots.discord import DiscordBot
from core.conversation.scheduled_prompts import ScheduledThreads
from core.runtime.pool import RunPool
from tests.bots.discord.harness import bot_messages, buttons, mention, reply_of, running_bot, text_of
from tests.bots.slack.harness import Harness, has_button, running, texts, until
from tests.bots.slack.harness import buttons as slack_buttons
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.slack import Message
from tests.fakes.slack_payloads import BOT_USER_ID, CHANNEL_ID, USER_ID, make_slack_event
from tests.fakes.changes import WAIT

Shown = Any  # a bot message as the platform's fake holds it


@dataclass
class Conversation:
    thread: str  # the Slack thread ts, the Discord thread id
    first: str  # the platform id of the message that started it
    first_text: str


class Chat(Protocol):
    """What a person does in a conversation, and what they see."""

    name: str
    me: str  # the person's platform id (who asked, who answered)
    # The platform's own words for what both show: "branched", the note of an answer to an
    # edited message; "question expired", a question whose run ended before anybody answered.
    words: dict[str, str]

    async def start(self, text: str) -> Conversation: ...
    async def say(self, conv: Conversation, text: str) -> None: ...
    async def edit_first(self, conv: Conversation, text: str) -> None: ...
    async def shown(self, conv: Conversation, words: str, control: str | None = None,
                    wait: float = WAIT) -> Shown: ...
    async def click(self, shown: Shown, control: str, *, as_shown: bool = False) -> None: ...
    async def custom_answer(self, shown: Shown, text: str) -> str: ...
    async def command(self, conv: Conversation, name: str, argument: str | None = None) -> str: ...
    async def channel(self, conv: Conversation, argument: str) -> str: ...
    def showing(self, shown: Shown) -> str: ...
    def offers(self, shown: Shown, control: str) -> bool: ...
    def labels(self, shown: Shown) -> list[str]: ...
    def key(self, shown: Shown) -> str: ...
    def posted(self, conv: Conversation) -> list[str]: ...
    async def told(self, conv: Conversation, words: str) -> None: ...
    async def told_privately(self, words: str, count: int = 1) -> None: ...
    def said(self, conv: Conversation) -> list[str]: ...
    def modals(self) -> int: ...
    async def schedule(self, when: str, prompt: str) -> str: ...
    def scheduled_threads(self) -> ScheduledThreads: ...
    def opened(self, thread: str) -> Conversation: ...


SLACK_CONTROLS = {"stop": slack_ids.STOP, "regenerate": slack_ids.REGENERATE,
                  "retry": slack_ids.REGENERATE,  # "🔁 Retry" on a failed turn
                  "previous": slack_ids.PREVIOUS, "next": slack_ids.NEXT,
                  "custom": slack_ids.CLARIFY_CUSTOM, "approve": slack_ids.approval_action("once"),
                  "queue": slack_ids.BUSY_QUEUE, "steer": slack_ids.BUSY_STEER}


class SlackChat:
    name = "slack"
    me = USER_ID
    words = {"branched": BRANCHED, "question expired": "⌛ This question expired."}

    def __init__(self, harness: Harness) -> None:
        self.h = harness

    async def start(self, text: str) -> Conversation:
        event = await self.h.event("app_mention", text=text)
        return Conversation(event["ts"], event["ts"], event["text"])

    async def say(self, conv: Conversation, text: str) -> None:
        await self.h.event("thread_message", text=text, thread_ts=conv.thread)

    async def edit_first(self, conv: Conversation, text: str) -> None:
        await self.h.event("message_changed", text=f"<@{BOT_USER_ID}> {text}",
                           message_ts=conv.first, previous_text=conv.first_text)

    async def shown(self, conv: Conversation, words: str, control: str | None = None,
                    wait: float = WAIT) -> Message:
        """The message as it is now (a copy: the fake edits its messages in place)."""
        def found() -> Message | None:
            return next((m for m in reversed(self.h.bot_messages(CHANNEL_ID, conv.thread))
                         if words in self.showing(m)
                         and (control is None or self.offers(m, control))), None)
        return copy.deepcopy(await until(found, wait))

    async def click(self, shown: Message, control: str, *, as_shown: bool = False) -> None:
        """Click `control` of the message as it is now, or (`as_shown`) as it was when shown:
        a client that has not seen its later edits still shows the buttons."""
        current = shown if as_shown else self.h.slack.message(CHANNEL_ID, shown.ts)
        if control == "stop" and not as_shown and self._native_stop(current):
            event = self.h.slack.press_stop(CHANNEL_ID, current.thread_ts or current.ts)
            assert (await self.h.post_event(make_slack_event(event))).status_code == 200
            return
        await self.h.click(current, self._action(control), trigger=control == "custom")

    def offers(self, shown: Message, control: str) -> bool:
        return self._offers(self.h.slack.message(CHANNEL_ID, shown.ts), control)

    def labels(self, shown: Message) -> list[str]:
        return [e["text"]["text"] for e in slack_buttons(self.h.slack.message(CHANNEL_ID, shown.ts))]

    def key(self, shown: Message) -> str:
        return shown.ts

    def posted(self, conv: Conversation) -> list[str]:
        return [m.ts for m in self.h.bot_messages(CHANNEL_ID, conv.thread)]

    def modals(self) -> int:
        return len(self.h.slack.calls_to("views.open"))

    def _offers(self, message: Message, control: str) -> bool:
        """The control is a button of the message, or (Stop of a streamed turn) Slack's own
        Stop, shown beside the stream while its thread's agent session is processing."""
        return has_button(message, self._action(control)) or (
            control == "stop" and self._native_stop(message))

    def _native_stop(self, message: Message) -> bool:
        current = self.h.slack.message(CHANNEL_ID, message.ts)
        session = self.h.slack.agent_session(CHANNEL_ID, current.thread_ts or current.ts)
        return current.streaming and session is not None and session["status"] == "processing"

    async def custom_answer(self, shown: Message, text: str) -> str:
        """Answer in the modal Custom answer opens; what the modal showed."""
        await self.click(shown, "custom")
        opened = await self.h.slack.wait_for_calls("views.open")
        assert opened[-1].ok, opened[-1].response
        modal = opened[-1].args["view"]
        assert modal["callback_id"] == slack_ids.CUSTOM_ANSWER_VIEW
        await self.h.submit(slack_ids.CUSTOM_ANSWER_VIEW,
                            {slack_ids.ANSWER_BLOCK: {slack_ids.ANSWER_INPUT: text}},
                            modal["private_metadata"])
        return json.dumps(modal, ensure_ascii=False)

    async def command(self, conv: Conversation, name: str, argument: str | None = None) -> str:
        """The command as a mention in the thread; what the bot says there next (a file it
        uploads is not a reply)."""
        before = {m.ts for m in self.h.bot_messages(CHANNEL_ID, conv.thread)}
        words = f"{name} {argument}" if argument else name
        await self.h.event("app_mention", text=words, thread_ts=conv.thread)

        def reply() -> Message | None:
            return next((m for m in self.h.bot_messages(CHANNEL_ID, conv.thread)
                         if m.ts not in before and not m.files), None)
        return self.showing(await until(reply, WAIT))

    async def schedule(self, when: str, prompt: str) -> str:
        """`/hermes schedule "<when>" <prompt>` in the channel; what the bot said privately."""
        return str((await self.h.command(f'schedule "{when}" {prompt}'))["text"])

    def scheduled_threads(self) -> ScheduledThreads:
        return self.h.bot.scheduled_threads

    def opened(self, thread: str) -> Conversation:
        """The conversation a schedule opened: the bot's message that starts its thread."""
        root = self.h.slack.message(CHANNEL_ID, thread)
        return Conversation(thread, thread, root.text)

    async def channel(self, conv: Conversation, argument: str) -> str:
        """`channel <argument>` as a mention in the thread; what the bot told the person
        privately (an ephemeral)."""
        before = len(self.h.ephemerals(self.me))
        await self.h.event("app_mention", text=f"channel {argument}", thread_ts=conv.thread)
        said = await until(lambda: self.h.ephemerals(self.me)[before:] or None, WAIT)
        return said[0]

    async def told(self, conv: Conversation, words: str) -> None:
        """Until `words` are said to the user: in the thread or in an ephemeral."""
        await until(lambda: any(words in t for t in self.said(conv)), WAIT)

    async def told_privately(self, words: str, count: int = 1) -> None:
        """Until `words` were said `count` times to the user alone (ephemerals); no more."""
        def private() -> list[str]:
            return [t for t in self.h.ephemerals(self.me) if words in t]
        await until(lambda: len(private()) >= count, WAIT)
        assert len(private()) == count, private()

    def said(self, conv: Conversation) -> list[str]:
        """Everything said to people so far: the thread's bot messages and the ephemerals."""
        thread = [self.showing(m) for m in self.h.bot_messages(CHANNEL_ID, conv.thread)]
        return [*thread, *self.h.ephemerals()]

    def showing(self, shown: Message) -> str:
        current = self.h.slack.message(CHANNEL_ID, shown.ts) or shown
        return f"{current.text}\n{texts(current)}"

    @staticmethod
    def _action(control: str) -> str:
        if control.startswith("choice:"):
            return slack_ids.choice_action(int(control.split(":")[1]))
        return SLACK_CONTROLS[control]


DISCORD_CONTROLS = {"stop": "Stop", "regenerate": "Regenerate", "retry": "Retry", "previous": "◀",
                    "next": "▶", "custom": "Custom answer…", "approve": "Allow once",
                    "queue": "Queue it", "steer": "Steer with it"}
EPHEMERAL = 64


class DiscordChat:
    name = "discord"
    words = {"branched": BRANCH_NOTE,
             "question expired": "⌛ This question is closed: it was not answered in time."}

    def __init__(self, fake: FakeDiscord, bot: DiscordBot) -> None:
        self.fake = fake
        self.me = fake.user["id"]
        self.bot = bot

    async def start(self, text: str) -> Conversation:
        asked = await self.fake.send_user_message(mention(self.fake, text))
        return Conversation(asked["id"], asked["id"], asked["content"])

    async def say(self, conv: Conversation, text: str) -> None:
        await self.fake.send_user_message(text, channel_id=conv.thread)

    async def edit_first(self, conv: Conversation, text: str) -> None:
        await self.fake.edit_user_message(conv.first, mention(self.fake, text))

    async def shown(self, conv: Conversation, words: str, control: str | None = None,
                    wait: float = WAIT) -> dict:
        def found() -> dict | None:
            return next((m for m in reversed(bot_messages(self.fake, conv.thread))
                         if words in text_of(m)
                         and (control is None or self._button(m, control) is not None)), None)
        await self.fake.wait_until(found, wait, f"a message showing {words!r}")
        message = found()
        assert message is not None
        return copy.deepcopy(message)

    async def click(self, shown: dict, control: str, *, as_shown: bool = False) -> None:
        """Click `control` of the message as it is now, or (`as_shown`) as it was when shown:
        a client that has not seen its later edits still shows the buttons."""
        current = shown if as_shown else self.fake.message(shown["id"])
        button = self._button(current, control)
        assert button is not None, f"no {control} in {[b.get('label') for b in buttons(current)]}"
        record = await self.fake.click(current["id"], button["custom_id"])
        await self.fake.wait_for_response(record)

    async def custom_answer(self, shown: dict, text: str) -> str:
        """Answer in the modal Custom answer opens; what the modal showed."""
        button = self._button(self.fake.message(shown["id"]), "custom")
        assert button is not None
        opened = await self.fake.click(shown["id"], button["custom_id"])
        await self.fake.wait_for_response(opened)
        assert opened.modal is not None and opened.modal["title"] == "Answer Hermes"
        await self.fake.submit_modal(opened, {"answer": text})
        return json.dumps(opened.modal, ensure_ascii=False)

    def offers(self, shown: dict, control: str) -> bool:
        return self._button(self.fake.message(shown["id"]), control) is not None

    def labels(self, shown: dict) -> list[str]:
        return [b.get("label", "") for b in buttons(self.fake.message(shown["id"]))]

    def key(self, shown: dict) -> str:
        return str(shown["id"])

    def posted(self, conv: Conversation) -> list[str]:
        return [m["id"] for m in bot_messages(self.fake, conv.thread)
                if not m["flags"] & EPHEMERAL]

    def modals(self) -> int:
        return sum(1 for record in self.fake.core.interactions.values() if record.modal is not None)

    async def command(self, conv: Conversation, name: str, argument: str | None = None) -> str:
        options = _discord_options(name, argument)
        record = await self.fake.run_command("hermes", name, options=options, channel_id=conv.thread)
        return text_of(await reply_of(self.fake, record, WAIT))

    async def schedule(self, when: str, prompt: str) -> str:
        """`/hermes schedule add` in the channel; what the bot said privately."""
        record = await self.fake.run_command("hermes", "schedule", "add",
                                             options={"when": when, "prompt": prompt})
        return text_of(await reply_of(self.fake, record, WAIT))

    def scheduled_threads(self) -> ScheduledThreads:
        return self.bot.scheduled_threads

    def opened(self, thread: str) -> Conversation:
        """The conversation a schedule opened: the thread opened on the bot's message."""
        root = self.fake.message(thread)  # a thread opened on a message has its id
        return Conversation(thread, thread, root["content"])

    async def channel(self, conv: Conversation, argument: str) -> str:
        """`/hermes channel` in the thread, its options from `argument` ("set key value…");
        what the bot told the person privately (the interaction's ephemeral response)."""
        words = argument.split(maxsplit=2)
        options = dict(zip(("action", "key", "value"), words, strict=False))
        record = await self.fake.run_command("hermes", "channel", options=options,
                                             channel_id=conv.thread)
        return text_of(await reply_of(self.fake, record, WAIT))

    async def told(self, conv: Conversation, words: str) -> None:
        """Until `words` are said to the user: in the thread or in a reply to an interaction."""
        await self.fake.wait_until(lambda: any(words in t for t in self.said(conv)), WAIT,
                                   f"being told {words!r}")

    async def told_privately(self, words: str, count: int = 1) -> None:
        """Until `words` were said `count` times to the user alone (ephemeral replies to
        interactions); no more."""
        def private() -> list[str]:
            return [text_of(m) for m in self._replies()
                    if m["flags"] & EPHEMERAL and words in text_of(m)]
        await self.fake.wait_until(lambda: len(private()) >= count, WAIT,
                                   f"being told {words!r} privately {count} times")
        assert len(private()) == count, private()

    def said(self, conv: Conversation) -> list[str]:
        """Everything said to people so far: the thread's bot messages and interaction replies."""
        thread = [text_of(m) for m in bot_messages(self.fake, conv.thread)]
        return [*thread, *(text_of(m) for m in self._replies())]

    def _replies(self) -> list[dict]:
        """The messages the bot answered interactions with (or, a click's deferred update,
        the clicked message)."""
        return [self.fake.message(m) for record in self.fake.core.interactions.values()
                for m in [*record.followup_ids, *filter(None, [record.original_message_id])]]

    def showing(self, shown: dict) -> str:
        return text_of(self.fake.message(shown["id"]))

    @staticmethod
    def _button(message: dict, control: str) -> dict | None:
        if control.startswith("choice:"):
            wanted = [b for b in buttons(message) if '"pick"' in json.dumps(b) or ":pick:" in b.get("custom_id", "")]
            index = int(control.split(":")[1])
            return wanted[index] if index < len(wanted) else None
        return next((b for b in buttons(message) if b.get("label") == DISCORD_CONTROLS[control]
                     and not b.get("disabled")), None)


def _discord_options(name: str, argument: str | None) -> dict[str, str]:
    if argument is None:
        return {}
    if name == "export":
        format_, _, branch = argument.partition(" ")
        return {"format": format_, **({"branch": branch} if branch else {})}
    return {"name": argument}


@asynccontextmanager
async def talking(platform: tuple[str, Any], runs: RunPool, **settings: Any) -> AsyncIterator[Chat]:
    """The bot of the platform (the `platform` fixture) on `runs`, and a driver that talks to
    it as its users do (`settings`: more of the bot's settings, e.g. `admins`: the person is
    one of CHAT_ADMINS)."""
    name, fakes = platform
    if name.startswith("slack"):
        slack, clock = fakes
        # "slack": streamed turns, whose Stop is the agent session's native one (the driver
        # presses it); "slack-edited": a workspace without streams, the edit-based live message
        # with its Stop button.
        slack.streaming = name == "slack"
        admins = (USER_ID,) if settings.pop("admins", False) else ()
        async with running(slack, runs, clock, chat_admins=admins, **settings) as harness:
            yield SlackChat(harness)
    else:
        admins = (fakes.user["id"],) if settings.pop("admins", False) else ()
        async with running_bot(fakes, runs, chat_admins=admins, **settings) as bot:
            yield DiscordChat(fakes, bot)
