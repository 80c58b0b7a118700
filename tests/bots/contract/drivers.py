"""Each platform driven the way its users drive it (through its fake), behind one interface,
so a scenario is written once and asserts the same outcome on both."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from bots.slack import ids as slack_ids
from tests.bots.discord.harness import bot_messages, buttons, mention, reply_of, text_of
from tests.bots.slack.harness import Harness, has_button, texts, until
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.slack import Message
from tests.fakes.slack_payloads import BOT_USER_ID, CHANNEL_ID, make_slack_event

WAIT = 15.0
Shown = Any  # a bot message as the platform's fake holds it


@dataclass
class Conversation:
    thread: str  # the Slack thread ts, the Discord thread id
    first: str  # the platform id of the message that started it
    first_text: str


class Chat(Protocol):
    """What a person does in a conversation, and what they see."""

    name: str

    async def start(self, text: str) -> Conversation: ...
    async def say(self, conv: Conversation, text: str) -> None: ...
    async def edit_first(self, conv: Conversation, text: str) -> None: ...
    async def shown(self, conv: Conversation, words: str, control: str | None = None) -> Shown: ...
    async def click(self, shown: Shown, control: str) -> None: ...
    async def custom_answer(self, shown: Shown, text: str) -> None: ...
    async def command(self, conv: Conversation, name: str, argument: str | None = None) -> str: ...
    def showing(self, shown: Shown) -> str: ...
    async def told(self, conv: Conversation, words: str) -> None: ...
    def said(self, conv: Conversation) -> list[str]: ...


SLACK_CONTROLS = {"stop": slack_ids.STOP, "regenerate": slack_ids.REGENERATE,
                  "previous": slack_ids.PREVIOUS, "next": slack_ids.NEXT,
                  "custom": slack_ids.CLARIFY_CUSTOM, "approve": slack_ids.approval_action("once")}


class SlackChat:
    name = "slack"

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

    async def shown(self, conv: Conversation, words: str, control: str | None = None) -> Message:
        def found() -> Message | None:
            return next((m for m in reversed(self.h.bot_messages(CHANNEL_ID, conv.thread))
                         if words in self.showing(m)
                         and (control is None or self._offers(m, control))), None)
        return await until(found, WAIT)

    async def click(self, shown: Message, control: str) -> None:
        current = self.h.slack.message(CHANNEL_ID, shown.ts)
        if control == "stop" and self._native_stop(current):
            event = self.h.slack.press_stop(CHANNEL_ID, current.thread_ts or current.ts)
            assert (await self.h.post_event(make_slack_event(event))).status_code == 200
            return
        await self.h.click(current, self._action(control), trigger=control == "custom")

    def _offers(self, message: Message, control: str) -> bool:
        """The control is a button of the message, or (Stop of a streamed turn) Slack's own
        Stop, shown beside the stream while its thread's agent session is processing."""
        return has_button(message, self._action(control)) or (
            control == "stop" and self._native_stop(message))

    def _native_stop(self, message: Message) -> bool:
        current = self.h.slack.message(CHANNEL_ID, message.ts)
        session = self.h.slack.agent_session(CHANNEL_ID, current.thread_ts or current.ts)
        return current.streaming and session is not None and session["status"] == "processing"

    async def custom_answer(self, shown: Message, text: str) -> None:
        await self.click(shown, "custom")
        opened = await self.h.slack.wait_for_calls("views.open")
        modal = opened[-1].args["view"]
        await self.h.submit(slack_ids.CUSTOM_ANSWER_VIEW,
                            {slack_ids.ANSWER_BLOCK: {slack_ids.ANSWER_INPUT: text}},
                            modal["private_metadata"])

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

    async def told(self, conv: Conversation, words: str) -> None:
        """Until `words` are said to the user: in the thread or in an ephemeral."""
        await until(lambda: any(words in t for t in self.said(conv)), WAIT)

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


DISCORD_CONTROLS = {"stop": "Stop", "regenerate": "Regenerate", "previous": "◀", "next": "▶",
                    "custom": "Custom answer…", "approve": "Allow once"}


class DiscordChat:
    name = "discord"

    def __init__(self, fake: FakeDiscord) -> None:
        self.fake = fake
        self._choices: dict[str, list[str]] = {}

    async def start(self, text: str) -> Conversation:
        asked = await self.fake.send_user_message(mention(self.fake, text))
        return Conversation(asked["id"], asked["id"], asked["content"])

    async def say(self, conv: Conversation, text: str) -> None:
        await self.fake.send_user_message(text, channel_id=conv.thread)

    async def edit_first(self, conv: Conversation, text: str) -> None:
        await self.fake.edit_user_message(conv.first, mention(self.fake, text))

    async def shown(self, conv: Conversation, words: str, control: str | None = None) -> dict:
        def found() -> dict | None:
            return next((m for m in reversed(bot_messages(self.fake, conv.thread))
                         if words in text_of(m)
                         and (control is None or self._button(m, control) is not None)), None)
        await self.fake.wait_until(found, WAIT, f"a message showing {words!r}")
        message = found()
        assert message is not None
        return message

    async def click(self, shown: dict, control: str) -> None:
        current = self.fake.message(shown["id"])
        button = self._button(current, control)
        assert button is not None, f"no {control} in {[b.get('label') for b in buttons(current)]}"
        record = await self.fake.click(current["id"], button["custom_id"])
        await self.fake.wait_for_response(record)

    async def custom_answer(self, shown: dict, text: str) -> None:
        button = self._button(self.fake.message(shown["id"]), "custom")
        assert button is not None
        opened = await self.fake.click(shown["id"], button["custom_id"])
        await self.fake.wait_for_response(opened)
        await self.fake.submit_modal(opened, {"answer": text})

    async def command(self, conv: Conversation, name: str, argument: str | None = None) -> str:
        options = _discord_options(name, argument)
        record = await self.fake.run_command("hermes", name, options=options, channel_id=conv.thread)
        return text_of(await reply_of(self.fake, record, WAIT))

    async def told(self, conv: Conversation, words: str) -> None:
        """Until `words` are said to the user: in the thread or in a reply to an interaction."""
        await self.fake.wait_until(lambda: any(words in t for t in self.said(conv)), WAIT,
                                   f"being told {words!r}")

    def said(self, conv: Conversation) -> list[str]:
        """Everything said to people so far: the thread's bot messages and interaction replies."""
        thread = [text_of(m) for m in bot_messages(self.fake, conv.thread)]
        replies = [text_of(self.fake.message(m)) for record in self.fake.core.interactions.values()
                   for m in [*record.followup_ids, *filter(None, [record.original_message_id])]]
        return [*thread, *replies]

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
