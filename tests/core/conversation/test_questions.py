"""The question a click names, the answer a choice stands for, and a rating's thanks."""

from __future__ import annotations

import pytest

from core.chat import sessions, tree
from core.chat.feedback import of_messages
from core.conversation import feedback, questions
from core.errors import InvalidInput, NotFound
from core.store.models import ClarifyPause, FeedbackValue, MessageStatus, PauseStatus, Platform


async def test_a_question_is_read_by_its_id_and_its_choices_answer_it(db: str) -> None:
    session = await sessions.create_session()
    user = await tree.append_user(session.id, "q")
    answer = await tree.append_assistant(session.id, user.id, status=MessageStatus.RUNNING,
                                         run_id="r1")
    row = await ClarifyPause.create(run_id="r1", message_id=answer.id, clarify_id="c1",
                                    question="Which?", choices=["a", "b"])

    pause = await questions.question(row.id)
    assert (pause.pause_id, pause.clarify_id, pause.question) == (row.id, "c1", "Which?")
    assert pause.status == PauseStatus.UNANSWERED
    assert questions.choice(pause, 1) == "b"
    for index in (-1, 2):
        with pytest.raises(InvalidInput):
            questions.choice(pause, index)
    with pytest.raises(NotFound, match="no longer exists"):
        await questions.question(row.id + 1000)


async def test_a_rating_is_recorded_and_thanked(db: str) -> None:
    session = await sessions.create_session()
    user = await tree.append_user(session.id, "q")
    answer = await tree.append_assistant(session.id, user.id, status=MessageStatus.SUCCESS)

    assert await feedback.rate(answer.id, Platform.DISCORD, "u1", "good") == "Thanks! Glad it helped."
    assert await feedback.rate(answer.id, Platform.DISCORD, "u1", "bad") == (
        "Thanks for saying so: it helps us do better.")
    with pytest.raises(InvalidInput):
        await feedback.rate(answer.id, Platform.DISCORD, "u1", "meh")
    rated = await of_messages([answer.id])
    assert [(f.user, f.value) for f in rated[answer.id]] == [("u1", FeedbackValue.BAD)]
