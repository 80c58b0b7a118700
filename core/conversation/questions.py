"""A clarify question or a tool approval as a click finds it: the question it names (gone once
its row is), and the choice a choice button stands for. Answering and deciding are the run
pool's (`RunPool.answer`, `RunPool.decide`): the first answer wins."""

from __future__ import annotations

from core.errors import InvalidInput, NotFound
from core.runtime.clarify import find_pause, view
from core.runtime.updates import PauseView
from core.store.models import ClarifyPause


async def question(pause_id: int) -> PauseView:
    """The question (or tool approval) `pause_id` as the chat shows it; NotFound once it is
    gone."""
    pause = await ClarifyPause.get_or_none(id=pause_id)
    if pause is None:
        raise NotFound("this question no longer exists")
    return view(pause)


async def clarify_question(pause_id: int) -> PauseView:
    """A clarify question as it stands now; NotFound when there is none (a tool approval is
    not one)."""
    return view(await find_pause(pause_id=pause_id))


def choice(pause: PauseView, index: int) -> str:
    """The answer the question's choice `index` gives; InvalidInput if it has no such choice."""
    if not 0 <= index < len(pause.choices):
        raise InvalidInput("that choice is not one of this question's")
    return str(pause.choices[index])
