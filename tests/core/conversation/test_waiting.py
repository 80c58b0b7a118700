"""What an operator watches: the questions waiting, oldest first; every question an answer
asked; the runs in flight here and elsewhere; the conversations with a question waiting; each
message's versions along a page of a branch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.chat import sessions, tree
from core.chat.session_queries import list_summaries
from core.conversation import views, waiting
from core.runtime.pool import RunPool
from core.store.models import ClarifyPause, MessageStatus, PauseKind, PauseStatus, utc_now

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


async def _asking(title: str, run_id: str, *questions: tuple[str, PauseStatus],
                  kind: PauseKind = PauseKind.CLARIFY) -> int:
    session = await sessions.create_session(title=title)
    user = await tree.append_user(session.id, "q")
    answer = await tree.append_assistant(session.id, user.id, run_id=run_id)
    for number, (text, status) in enumerate(questions):
        await ClarifyPause.create(
            run_id=run_id, message_id=answer.id, clarify_id=f"{run_id}-{number}", question=text,
            status=status, kind=kind, created_at=T0 + timedelta(minutes=len(title) + number),
            answer="Mon" if status == PauseStatus.ANSWERED else None,
            answered_by="U1" if status == PauseStatus.ANSWERED else None,
            answered_at=utc_now() if status == PauseStatus.ANSWERED else None,
        )
    return answer.id


async def test_questions_waiting_are_listed_oldest_first_with_their_conversation(db: str) -> None:
    late = await _asking("a much later one", "r2", ("Deploy now?", PauseStatus.UNANSWERED),
                         kind=PauseKind.APPROVAL)
    early = await _asking("early", "r1", ("Which day?", PauseStatus.ANSWERED),
                          ("Which time?", PauseStatus.UNANSWERED))
    await _asking("done", "r3", ("Gone?", PauseStatus.EXPIRED))

    now = await waiting.waiting_now()
    assert [(w.title, w.asked.pause.question, w.run_id, w.message_id) for w in now] == [
        ("early", "Which time?", "r1", early), ("a much later one", "Deploy now?", "r2", late)]
    assert now[1].asked.pause.kind == PauseKind.APPROVAL
    assert [w.title for w in await waiting.waiting_now(limit=1)] == ["early"]

    asked = await waiting.asked_in([early, late, 999])
    assert [(a.pause.question, a.pause.answered_by) for a in asked[early]] == [
        ("Which day?", "U1"), ("Which time?", None)]
    assert asked[early][0].answered_at is not None and asked[early][1].answered_at is None
    assert set(asked) == {early, late}


async def test_the_list_keeps_conversations_with_a_question_waiting(db: str) -> None:
    await _asking("asks", "r1", ("Which day?", PauseStatus.UNANSWERED))
    await _asking("answered", "r2", ("Which day?", PauseStatus.ANSWERED))
    await sessions.create_session(title="quiet")
    page = await list_summaries(waiting=True)
    assert [s.session.title for s in page.items] == ["asks"]
    assert len((await list_summaries()).items) == 3


async def test_each_message_of_a_page_knows_its_versions_in_a_query_or_two(db: str) -> None:
    session = await sessions.create_session()
    first = await tree.append_user(session.id, "q1")
    edited = await tree.edit(first.id, "q1, better")  # a second root: versions of the first
    a1 = await tree.append_assistant(session.id, edited.id, status=MessageStatus.SUCCESS)
    a2 = await tree.regenerate(a1.id, status=MessageStatus.SUCCESS)
    a3 = await tree.regenerate(a2.id, status=MessageStatus.SUCCESS)
    await tree.activate(a2.id)
    summary = await tree.add_summary(session.id, a2.id, "so far")
    branch = await tree.active_branch(session.id)
    assert [m.id for m in branch] == [edited.id, a2.id, summary.id]

    switchers = await views.versions_along(session.id, branch)
    assert switchers == {
        edited.id: views.Versions(2, 2, first.id, None),
        a2.id: views.Versions(2, 3, a1.id, a3.id),
    }
    assert switchers[a2.id] == await views.versions(a2.id)  # as one message's own switcher


async def test_runs_in_flight_elsewhere_are_listed_from_the_database(
    db: str, fake_pool: RunPool
) -> None:
    session = await sessions.create_session(title="driven elsewhere")
    user = await tree.append_user(session.id, "q")
    answer = await tree.append_assistant(session.id, user.id, run_id="r-elsewhere")
    finished = await tree.append_user(session.id, "again")
    await tree.append_assistant(session.id, finished.id, status=MessageStatus.SUCCESS,
                                run_id="r-done")

    [running] = await waiting.runs_now(fake_pool)
    assert (running.here, running.title, running.update.run_id) == (
        False, "driven elsewhere", "r-elsewhere")
    assert (running.update.message_id, running.update.status) == (answer.id, MessageStatus.RUNNING)
