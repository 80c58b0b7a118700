"""Who may use the console, over real HTTP: the sign-in and its cookie, the CSRF token and the
Origin check on every form, the loopback rule without a token, the headers of every page."""

from __future__ import annotations

import httpx

from admin.app import create_app
from admin.services import AdminServices
from console.access import SESSION_SECONDS, ConsoleAccess
from console.plugin import ConsolePlugin
from core.config import Settings
from core.chat import sessions
from core.runtime.pool import RunPool
from tests.console.conftest import TOKEN, console_on, csrf_of, signed_in_client
from tests.fakes.changes import WAIT


async def test_a_page_without_a_session_goes_to_the_sign_in_and_back(fake_console_url: str) -> None:
    async with httpx.AsyncClient(base_url=fake_console_url, timeout=WAIT) as browser:
        first = await browser.get("/console/now")
        assert (first.status_code, first.headers["location"]) == (303, "/console/sign-in?next=/console/now")
        form = await browser.get("/console/sign-in?next=/console/now")
        assert form.status_code == 200 and 'type="password"' in form.text
        assert '<label for="token">' in form.text
        # The admin API's bearer token opens the API, not the console.
        bearer = await browser.get("/console/now", headers={"Authorization": f"Bearer {TOKEN}"})
        assert bearer.status_code == 303

        wrong = await browser.post("/console/sign-in", data={"token": "guess", "next": "/console/now"})
        assert wrong.status_code == 401 and "That is not the admin token." in wrong.text
        assert "hermes_console" not in wrong.headers.get("set-cookie", "")

        right = await browser.post("/console/sign-in", data={"token": TOKEN, "next": "/console/now"})
        assert (right.status_code, right.headers["location"]) == (303, "/console/now")
        cookie = right.headers["set-cookie"]
        assert cookie.startswith("hermes_console=") and "HttpOnly" in cookie
        assert "samesite=strict" in cookie.lower() and "Path=/console" in cookie
        assert f"Max-Age={SESSION_SECONDS}" in cookie
        now = await browser.get("/console/now")
        assert now.status_code == 200 and "Runs in flight" in now.text


async def test_sign_in_never_sends_anyone_to_another_site(fake_console_url: str) -> None:
    async with httpx.AsyncClient(base_url=fake_console_url, timeout=WAIT) as browser:
        for target in ("https://evil.example/", "//evil.example/console/", "/api/chat/sessions",
                       "/console\\@evil.example"):
            answer = await browser.post("/console/sign-in", data={"token": TOKEN, "next": target})
            assert answer.headers["location"] == "/console/conversations", target


async def test_every_form_needs_the_sessions_csrf_token_and_this_sites_origin(
    fake_console_url: str,
) -> None:
    session = await sessions.create_session(title="keep me")
    async with signed_in_client(fake_console_url) as browser:
        page = await browser.get(f"/console/conversations/{session.id}")
        token = csrf_of(page.text)
        url = f"/console/conversations/{session.id}/delete"
        for refused in ({}, {"csrf": "0" * 64}):
            answer = await browser.post(url, data=refused)
            assert answer.status_code == 403, answer.text
            assert "this form has expired" in answer.text
        cross_site = await browser.post(url, data={"csrf": token},
                                        headers={"Origin": "https://evil.example"})
        assert cross_site.status_code == 403 and "another site" in cross_site.text
        assert (await sessions.get_session(session.id)).title == "keep me"  # nothing deleted

        own = fake_console_url.removeprefix("http://")
        deleted = await browser.post(url, data={"csrf": token}, headers={"Origin": f"http://{own}"})
        assert (deleted.status_code, deleted.headers["location"]) == (303, "/console/conversations")
        listing = await browser.get("/console/conversations")
        assert f"Conversation {session.id} was deleted." in listing.text
        assert "keep me" not in listing.text


async def test_another_sessions_token_is_refused(fake_console_url: str) -> None:
    session = await sessions.create_session(title="t")
    async with signed_in_client(fake_console_url) as first, \
            signed_in_client(fake_console_url) as second:
        token = csrf_of((await first.get(f"/console/conversations/{session.id}")).text)
        answer = await second.post(f"/console/conversations/{session.id}/delete", data={"csrf": token})
        assert answer.status_code == 403


async def test_sign_out_ends_the_browsers_session(fake_console_url: str) -> None:
    async with signed_in_client(fake_console_url) as browser:
        page = await browser.get("/console/conversations")
        assert "Sign out" in page.text
        out = await browser.post("/console/sign-out", data={"csrf": csrf_of(page.text)})
        assert (out.status_code, out.headers["location"]) == (303, "/console/sign-in")
        assert "Max-Age=0" in out.headers["set-cookie"]
        assert (await browser.get("/console/conversations")).status_code == 303


async def test_pages_forbid_everything_but_this_services_own_scripts(fake_console_url: str) -> None:
    async with signed_in_client(fake_console_url) as browser:
        for path in ("/console/conversations", "/console/now", "/console/conversations/999"):
            answer = await browser.get(path)
            policy = answer.headers["content-security-policy"]
            assert "default-src 'self'" in policy and "script-src 'self'" in policy, path
            assert answer.headers["x-content-type-options"] == "nosniff"
            assert "frame-ancestors 'none'" in policy
        assert (await browser.get("/console/conversations/999")).status_code == 404
        script = await browser.get("/console/static/htmx/htmx.min.js")
        assert script.status_code == 200 and "javascript" in script.headers["content-type"]


async def test_without_a_token_a_loopback_caller_needs_no_sign_in(fake_pool: RunPool) -> None:
    async with console_on(fake_pool, token=None) as url, \
            httpx.AsyncClient(base_url=url, timeout=WAIT) as browser:
        page = await browser.get("/console/conversations")
        assert page.status_code == 200 and "Sign out" not in page.text
        assert "hermes_console=" in page.headers["set-cookie"]  # a session, for the CSRF token
        assert "open on loopback" in page.text
        assert (await browser.get("/console/sign-in")).headers["location"] == "/console/conversations"
        refused = await browser.post("/console/sign-out", data={})
        assert refused.status_code == 403  # forms still need the token


async def test_without_a_token_anyone_else_is_refused(fake_pool: RunPool) -> None:
    services = AdminServices(fake_pool.bridge, fake_pool.catalogue, fake_pool)
    app = create_app(Settings(), services, plugins=[ConsolePlugin(None)])
    transport = httpx.ASGITransport(app=app, client=("10.1.2.3", 5000))  # as uvicorn says who
    async with httpx.AsyncClient(transport=transport, base_url="http://console") as remote:
        refused = await remote.get("/console/conversations")
        assert refused.status_code == 403 and "loopback" in refused.text


def test_a_cookie_is_good_until_it_expires_and_only_as_signed() -> None:
    now = [1_000_000.0]
    access = ConsoleAccess("secret", clock=lambda: now[0])
    nonce, cookie = access.issue()
    assert access.nonce_of(cookie) == nonce
    expiry, _, rest = cookie.partition(".")
    assert access.nonce_of(f"{int(expiry) + 3600}.{rest}") is None  # a longer life is forged
    assert access.nonce_of(cookie[:-1] + ("0" if cookie[-1] != "0" else "1")) is None
    assert ConsoleAccess("other", clock=lambda: now[0]).nonce_of(cookie) is None  # token changed
    assert access.csrf(nonce) != ConsoleAccess("other").csrf(nonce)
    now[0] += SESSION_SECONDS + 1
    assert access.nonce_of(cookie) is None
    for junk in (None, "", "x", "1.2", "a.b.c", "..."):
        assert access.nonce_of(junk) is None
    assert access.token_matches(" secret ") and not access.token_matches("secre")
    assert not ConsoleAccess(None).token_matches("")


async def test_an_unknown_console_page_is_a_404_page_and_needs_a_session(
    fake_console_url: str
) -> None:
    async with httpx.AsyncClient(base_url=fake_console_url, timeout=WAIT) as browser:
        signed_out = await browser.get("/console/settings/secret")
        assert signed_out.status_code == 303  # to the sign-in, like every page
    async with signed_in_client(fake_console_url) as browser:
        missing = await browser.get("/console/settings/secret")
        assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/html")
        assert "there is no console page /console/settings/secret" in missing.text
        assert "default-src 'self'" in missing.headers["content-security-policy"]
        api = await browser.get("/api/no-such-route")
        assert api.headers["content-type"].startswith("application/json")  # the API's own
