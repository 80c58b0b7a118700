"""The Feedback page: the answers people rated 👎 or 👍, newest rating first, with their
question and conversation, by model and channel, and every version of each answer side by
side (a Regenerate's new version beside the one rated)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from litestar import Controller, Request, get
from litestar.di import NamedDependency
from litestar.params import FromQuery, QueryParameter
from litestar.response import Template

from admin.services import AdminServices
from console.rendering import page
from core.conversation import feedback
from core.conversation.vocabulary import FeedbackValue
from core.text.field_errors import check_text

Services = NamedDependency[AdminServices]
SHOWN = 50
ModelId = Annotated[str, QueryParameter(max_length=128)]
ChannelId = Annotated[str, QueryParameter(max_length=64)]


class FeedbackController(Controller):
    path = "/feedback"

    @get("/")
    async def rated(self, request: Request[Any, Any, Any], services: Services,
                    rated: FromQuery[Literal["", "good", "bad"]] = "bad",
                    model: ModelId = "", channel: ChannelId = "") -> Template:
        answers = await feedback.rated_answers(
            FeedbackValue(rated) if rated else None, check_text("model", model.strip()) or None,
            check_text("channel", channel.strip()) or None, SHOWN)
        models = [m.id for m in services.catalogue.models]
        return page(request, "feedback.html", answers=answers, rated=rated, model=model.strip(),
                    channel=channel.strip(), models=models)
