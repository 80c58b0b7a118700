"""What an operator does to one answer, and how its page follows a run live: the answer
re-rendered alone, its run's events (the admin API's stream, under the console's session), a
version switch, Regenerate, Stop, the answer to a clarify question and the decision on a tool
approval. Every change goes through the conversation layer, with the rules the bots follow."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.di import NamedDependency
from litestar.enums import RequestEncodingType
from litestar.params import Body, PathParameter
from litestar.response import Redirect, ServerSentEvent, Template

from admin.params import LastEventIdHeader, MessageId, RunId
from admin.runs.stream import event_stream
from admin.services import AdminServices
from console.reading import one_answer
from console.rendering import back, page
from core.conversation import approvals, turns, views
from core.conversation.presenting import APPROVAL_LABELS
from core.conversation.vocabulary import Policy
from core.errors import Conflict
from core.text.field_errors import InvalidField

Services = NamedDependency[AdminServices]
OPERATOR = "console"  # who a console answer or decision is recorded as (the admin token's holder)
OPERATOR_POLICY = Policy.of(admins=[OPERATOR])
ApprovalId = Annotated[str, PathParameter(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._~-]+$")]


@dataclass(frozen=True, slots=True)
class AnswerForm:
    """A clarify answer: the choice button pressed (`choice`), else the text typed (`answer`)."""

    clarify_id: str
    choice: str = ""
    answer: str = ""


@dataclass(frozen=True, slots=True)
class DecisionForm:
    decision: str


Form = Body(media_type=RequestEncodingType.URL_ENCODED)


class AnswerController(Controller):
    path = "/"

    @get("/answers/{message_id:int}")
    async def answer(self, request: Request[Any, Any, Any], services: Services,
                     message_id: MessageId) -> Template:
        """One message as its page shows it: what a live answer refreshes itself with."""
        return page(request, "answer.html", shown=await one_answer(services.runtime, message_id))

    @get("/runs/{run_id:str}/stream")
    async def stream(self, services: Services, run_id: RunId,
                     last_event_id: LastEventIdHeader = None) -> ServerSentEvent:
        """The run's events (the admin API's stream): the page refreshes the answer on each."""
        return await event_stream(services.runtime, run_id, last_event_id or 0, services.keepalive)

    @post("/messages/{message_id:int}/activate")
    async def activate(self, request: Request[Any, Any, Any], message_id: MessageId) -> Redirect:
        """◀ ▶: show this version (refused while a run is in flight)."""
        shown = await turns.switch_version(message_id)
        switcher = await views.versions(shown.id)
        return back(request, f"Version {switcher.position} of {switcher.total} shown.",
                    anchor=f"m{shown.id}")

    @post("/answers/{message_id:int}/regenerate")
    async def regenerate(self, request: Request[Any, Any, Any], services: Services,
                         message_id: MessageId) -> Redirect:
        update = await turns.regenerate(services.runtime, message_id, author=OPERATOR)
        return back(request, "A new version is being written.", anchor=f"m{update.message_id}")

    @post("/runs/{run_id:str}/stop")
    async def stop(self, request: Request[Any, Any, Any], services: Services,
                   run_id: RunId) -> Redirect:
        update = await turns.stop(services.runtime, run_id)
        return back(request, "Stopped.", anchor=f"m{update.message_id}")

    @post("/runs/{run_id:str}/answer")
    async def answer_question(
        self, request: Request[Any, Any, Any], services: Services, run_id: RunId,
        data: Annotated[AnswerForm, Form],
    ) -> Redirect:
        said = data.choice or data.answer.strip()
        if not said:
            raise InvalidField("answer", "type an answer, or choose one")
        await turns.answer_question(services.runtime, run_id, data.clarify_id, said, OPERATOR)
        message = await views.run_message(run_id)
        return back(request, f"Answered: {said}", anchor=f"m{message.id}")

    @post("/approvals/{approval_id:str}/decide")
    async def decide(
        self, request: Request[Any, Any, Any], services: Services, approval_id: ApprovalId,
        data: Annotated[DecisionForm, Form],
    ) -> Redirect:
        if data.decision not in APPROVAL_LABELS:
            raise InvalidField("decision", f"one of {', '.join(APPROVAL_LABELS)}")
        pause = await approvals.find_approval(approval_id)
        outcome = await services.runtime.decide(approval_id, data.decision, OPERATOR,
                                                OPERATOR_POLICY)
        if not outcome.accepted:
            raise Conflict(outcome.reason or "that approval cannot be decided any more")
        return back(request, f"Decided: {APPROVAL_LABELS[data.decision]}.",
                    anchor=f"m{pause.message_id}")
