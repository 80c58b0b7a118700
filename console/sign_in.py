"""Signing in to the console with ADMIN_TOKEN, and out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body, FromQuery
from litestar.response import Redirect, Template

from console.access import access_of
from console.rendering import PREFIX, page, signed_in, signed_out


@dataclass(frozen=True, slots=True)
class SignInForm:
    token: str = ""
    next: str = ""


class SignInController(Controller):
    path = "/"

    @get("/sign-in", opt={"public": True})
    async def sign_in_page(self, request: Request[Any, Any, Any],
                           next: FromQuery[str] = "") -> Template | Redirect:
        if access_of(request).open:
            return Redirect(_next(next), status_code=303)
        return page(request, "sign_in.html", next=_next(next), failed=False)

    @post("/sign-in", opt={"public": True}, status_code=303)
    async def sign_in(
        self, request: Request[Any, Any, Any],
        data: Annotated[SignInForm, Body(media_type=RequestEncodingType.URL_ENCODED)],
    ) -> Template | Redirect:
        if access_of(request).open or access_of(request).token_matches(data.token):
            return signed_in(request, _next(data.next))
        return page(request, "sign_in.html", status_code=401, next=_next(data.next), failed=True)

    @post("/sign-out", status_code=303)
    async def sign_out(self, request: Request[Any, Any, Any]) -> Redirect:
        return signed_out(request)


def _next(path: str) -> str:
    """Where a sign-in goes on to: a console page, never another site."""
    if path.startswith(f"{PREFIX}/") and not path.startswith("//") and "\\" not in path:
        return path
    return f"{PREFIX}/conversations"
