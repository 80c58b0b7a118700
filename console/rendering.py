"""How the console answers a browser: a page from its templates (with the session's CSRF token
and a one-time notice), a redirect after a form with the notice to show, an error as a page,
and the headers every answer carries (a strict Content-Security-Policy: nothing but this
service's own scripts, styles and images)."""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from litestar import Request, Response
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.datastructures import Cookie
from litestar.exceptions import (
    HTTPException,
    NotAuthorizedException,
    PermissionDeniedException,
    ValidationException,
)
from litestar.response import Redirect, Template
from markdown_it import MarkdownIt
from markupsafe import Markup

from console.access import COOKIE, SESSION_SECONDS, access_of
from core.conversation import presenting
from core.conversation.vocabulary import KINDS, is_outage
from core.errors import Busy, Conflict, HermesChatError, NotFound

log = logging.getLogger(__name__)
HERE = Path(__file__).parent
PREFIX = "/console"
NOTICE = "hermes_console_notice"  # a one-time notice after a form: "ok:..." or "error:..."
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; "
        "base-uri 'none'; object-src 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # a form's refusal goes back to the page it came from
    "Cache-Control": "no-store",
}
# Model and user text is Markdown: rendered without raw HTML (escaped) and without images (a
# picture from elsewhere would make the page reach outside this machine).
_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False}).disable("image")


def template_engine() -> JinjaTemplateEngine:
    """The Jinja environment of console/templates, autoescaped, with the console's filters."""
    env = Environment(loader=FileSystemLoader(HERE / "templates"), undefined=StrictUndefined,
                      autoescape=select_autoescape(default=True), trim_blocks=True,
                      lstrip_blocks=True)
    env.filters.update(markdown=markdown, when=when)
    env.globals.update(present=presenting, prefix=PREFIX, event_kinds=" ".join(sorted(KINDS)))
    return JinjaTemplateEngine.from_environment(env)


def markdown(text: str | None) -> Markup:
    """Markdown as HTML: any HTML in the text shows as text."""
    return Markup(_MARKDOWN.render(text or ""))  # noqa: S704 (markdown-it escapes the text)


def when(moment: datetime | None) -> str:
    """A time as operators read it in a list: `2026-11-01 09:00 UTC`."""
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment is not None else ""


def page(request: Request[Any, Any, Any], name: str, status_code: int = 200,
         **context: Any) -> Template:
    """A page (or a fragment) of the console, with what every template reads."""
    visit = request.state.get("console_visit")
    notice = _notice(request)
    cookies = [_session_cookie(request, visit.new_cookie)] if visit and visit.new_cookie else []
    if notice is not None:
        cookies.append(Cookie(key=NOTICE, value="", path=PREFIX, max_age=0))
    access = access_of(request)
    context.update(
        csrf=access.csrf(visit.nonce) if visit else "", notice=notice,
        signed_in=visit is not None and not access.open, open_console=access.open,
        here=request.url.path,
    )
    return Template(template_name=name, context=context, cookies=cookies,
                    status_code=status_code)


def back(request: Request[Any, Any, Any], said: str, *, kind: str = "ok",
         to: str | None = None, anchor: str | None = None) -> Redirect:
    """After a form: to `to`, else to the console page the form was on, showing `said` once."""
    target = to or _referring_page(request) or f"{PREFIX}/conversations"
    if anchor:
        target = f"{target.partition('#')[0]}#{anchor}"
    cookie = Cookie(key=NOTICE, value=quote(f"{kind}:{said}"), path=PREFIX, max_age=60, httponly=True,
                    samesite="strict", secure=request.url.scheme == "https")
    return Redirect(target, status_code=303, cookies=[cookie])


def signed_in(request: Request[Any, Any, Any], to: str) -> Redirect:
    """The redirect after a good sign-in: a new session's cookie."""
    _, value = access_of(request).issue()
    return Redirect(to, status_code=303, cookies=[_session_cookie(request, value)])


def signed_out(request: Request[Any, Any, Any]) -> Redirect:
    return Redirect(f"{PREFIX}/sign-in", status_code=303,
                    cookies=[Cookie(key=COOKIE, value="", path=PREFIX, max_age=0)])


def add_security_headers(response: Response[Any]) -> Response[Any]:
    """The console router's `after_request`."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def handle_error(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """The console's errors as people read them: to the sign-in page when signed out; a form
    refused by a rule (busy, already answered) goes back to its page, saying why; anything
    else is a page with the reason, and a bug is logged."""
    if isinstance(exc, NotAuthorizedException):
        if request.method == "GET":
            return Redirect(f"{PREFIX}/sign-in?next={quote(request.url.path)}", status_code=303)
        return _error_page(request, 401, "Signed out", "Sign in again, then try once more.")
    if isinstance(exc, HermesChatError) and not isinstance(exc, NotFound) \
            and request.method == "POST":
        return back(request, exc.public, kind="error")
    status, title, detail = _described(exc)
    if status >= 500:
        log.error("console: error on %s %s", request.method, request.url.path, exc_info=exc)
    return _error_page(request, status, title, detail)


def _described(exc: Exception) -> tuple[int, str, str]:
    if isinstance(exc, NotFound):
        return 404, "Not found", exc.public
    if isinstance(exc, Busy | Conflict):
        return 409, "Not now", exc.public
    if isinstance(exc, HermesChatError):
        return 400, "Refused", exc.public
    if isinstance(exc, PermissionDeniedException):
        return 403, "Refused", str(exc.detail)
    if isinstance(exc, ValidationException):
        return 400, "Bad request", str(exc.detail)
    if isinstance(exc, HTTPException) and exc.status_code < 500:
        return exc.status_code, "Refused", str(exc.detail)
    if is_outage(exc):
        return 503, "Database unreachable", "The database is unreachable; try again shortly."
    return 500, "Internal error", "Something went wrong; the service log says what."


def _error_page(request: Request[Any, Any, Any], status: int, title: str,
                detail: str) -> Response[Any]:
    # An exception handler's answer skips `after_request`: the headers are set here.
    response = page(request, "error.html", status_code=status, title=title, detail=detail)
    response.headers.update(SECURITY_HEADERS)
    return response


def _notice(request: Request[Any, Any, Any]) -> dict[str, str] | None:
    raw = request.cookies.get(NOTICE)
    if not raw:
        return None
    kind, _, text = unquote(raw).partition(":")
    return {"kind": "error" if kind == "error" else "ok", "text": text[:500]}


def _referring_page(request: Request[Any, Any, Any]) -> str | None:
    referer = urlsplit(request.headers.get("referer", ""))
    if referer.netloc != request.headers.get("host") or not referer.path.startswith(PREFIX):
        return None
    return referer.path + (f"?{referer.query}" if referer.query else "")


def _session_cookie(request: Request[Any, Any, Any], value: str) -> Cookie:
    return Cookie(key=COOKIE, value=value, path=PREFIX, max_age=SESSION_SECONDS, httponly=True,
                  samesite="strict", secure=request.url.scheme == "https")
