"""The conversation contract's moves, shared by its scenarios (tests/bots/contract/): a Bridge
that answers or holds, a conversation started or working, and what reached the Bridge."""

from __future__ import annotations

from collections.abc import Callable

from core.store.models import ChatMessage, ChatSession, Role
from tests.bots.contract.drivers import Chat, Conversation, Shown
from tests.fakes.fake_bridge import FakeBridge, Stall, ev


def answers(*texts: str) -> Callable[[str], list]:
    """A Bridge that answers each run with the next text (the last one repeats)."""
    queue = list(texts)

    def script(run_id: str) -> list:
        text = queue.pop(0) if len(queue) > 1 else queue[0]
        return [ev("text", text="thinking… "), ev("done", final_text=text)]
    return script


async def started(chat: Chat, bridge: FakeBridge, text: str = "hello",
                  answer: str = "Hi there.") -> Conversation:
    bridge.default_script = answers(answer)
    conv = await chat.start(text)
    await chat.shown(conv, answer, "regenerate")
    return conv


async def session() -> ChatSession:
    return await ChatSession.get()


async def assistants() -> list[ChatMessage]:
    return await ChatMessage.filter(role=Role.ASSISTANT).order_by("id")


def holding(text: str, final: str = "late") -> Callable[[str], list]:
    """A Bridge whose runs say `text`, then hold until their run id is released."""
    return lambda run_id: [ev("text", text=text), Stall(run_id), ev("done", final_text=final)]


async def working(chat: Chat, bridge: FakeBridge, asked: str, text: str) -> tuple[Conversation, Shown]:
    """A turn asking `asked` that holds after saying `text`; its live message, with Stop."""
    bridge.default_script = holding(text)
    conv = await chat.start(asked)
    return conv, await chat.shown(conv, text, "stop")


def run_starts(bridge: FakeBridge) -> list[dict]:
    """The bodies of the runs started on the Bridge (`POST /run`), oldest first."""
    return [r.body for r in bridge.requests_to("POST", "/run") if r.path == "/run"]
