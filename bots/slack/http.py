"""`POST /slack/events` for Litestar: bolt has no Litestar adapter, so this is the ~20 lines of
bolt's Starlette one: the raw body and headers in, `async_dispatch`, the BoltResponse out."""

from __future__ import annotations

from litestar import Request, Response, post
from litestar.handlers import HTTPRouteHandler
from slack_bolt.async_app import AsyncApp, AsyncBoltRequest

PATH = "/slack/events"


def events_route(app: AsyncApp, path: str = PATH) -> HTTPRouteHandler:
    """Events, interactions and slash commands all arrive here (Slack signs each one)."""

    @post(path, include_in_schema=False, status_code=200)
    async def slack_events(request: Request) -> Response[bytes]:  # type: ignore[type-arg]
        body = await request.body()
        headers = {name: request.headers.getall(name) for name in request.headers}
        bolt_request = AsyncBoltRequest(body=body.decode("utf-8"), headers=headers,
                                        query=request.scope.get("query_string", b"").decode())
        answer = await app.async_dispatch(bolt_request)
        return Response(content=(answer.body or "").encode(), status_code=answer.status,
                        headers=answer.first_headers_without_set_cookie())

    return slack_events
