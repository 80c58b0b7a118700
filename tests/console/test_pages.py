"""The console's Feedback and Usage pages, what is done to a conversation as a whole (a message
sent from the composer, a rename, archive, the agent's long-term memory), the list's channel and person
filters, the service's health on Now, and an unknown page, in a real headless Chromium against
the real agent loop. Each page is kept as a screenshot."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from playwright.async_api import Page, expect

from core.agent.events import Usage
from core.chat import sessions, tree
from core.conversation import feedback, session_commands
from core.runtime.pool import RunPool
from core.store.models import ChatMessage, MessageStatus, Platform, SessionStatus
from core.usage import ledger
from core.usage import limits as spend_limits
from core.usage.spenders import Spender
from tests.admin.builders import conversation
from tests.console.pages import shot, sign_in
from tests.core.runtime.waiting import finished
from tests.fakes.llm_server import ScriptedLLM, text_reply

ALICE = Spender("slack", "W1", "C1", "U1")
BOB = Spender("discord", "G1", "D1", "D9")


async def _spend(message_id: int, session_id: int, seq: int, spender: Spender, at: datetime,
                 model: str = "small") -> None:
    usage = Usage(seq=seq, at=at, model=model, prompt_tokens=100 * seq, completion_tokens=10,
                  cost=0.25)
    await ledger.record(ledger.Call(message_id, f"run-{message_id}", session_id, spender, usage))


async def test_feedback_shows_rated_answers_with_their_versions_side_by_side(
    page: Page, console_url: str, shots: Path
) -> None:
    deploy = await conversation("Deploy failed", ("why did the deploy fail?", "Out of memory."),
                                platform=Platform.SLACK, thread="1.1")
    [_, first] = await tree.active_branch_ids(deploy.id)
    second = await tree.regenerate(first, status=MessageStatus.SUCCESS, content="The job hit its limit.")
    await feedback.rate(first, Platform.SLACK, "U9", "bad")
    lunch = await conversation("Lunch plans", ("where do we eat?", "The usual place."))
    await feedback.rate((await tree.active_branch_ids(lunch.id))[1], Platform.DISCORD, "D2", "good")

    await sign_in(page, console_url, "/console/feedback")
    rated = page.locator("#rated article")
    await expect(rated).to_have_count(1)  # 👎 by default
    await expect(rated).to_contain_text("Deploy failed")
    await expect(rated).to_contain_text("👎 U9")
    versions = rated.get_by_role("listitem")
    await expect(versions).to_have_count(2)
    await expect(versions.nth(0)).to_contain_text("Version 1 of 2 · rated")
    await expect(versions.nth(0)).to_contain_text("Out of memory.")
    await expect(versions.nth(1)).to_contain_text("Version 2 of 2 · shown")
    await expect(versions.nth(1)).to_contain_text("The job hit its limit.")
    await shot(page, shots, "feedback")

    await page.get_by_label("Channel id").fill("C2")
    await page.get_by_label("Channel id").press("Enter")
    await expect(page.locator("#rated")).to_contain_text("No answer was rated so.")
    await page.get_by_label("Channel id").fill("C1")
    await page.get_by_label("Channel id").press("Enter")
    await expect(rated).to_have_count(1)
    await page.get_by_label("Channel id").fill("")
    await page.get_by_label("Rated").select_option("good")
    await page.get_by_label("Model").press("Enter")
    await expect(rated).to_have_count(1)
    await expect(rated).to_contain_text("Lunch plans")
    await expect(rated).to_contain_text("👍 D2")
    await rated.get_by_role("link", name="Lunch plans").click()
    await expect(page.get_by_role("heading", name="Lunch plans")).to_be_visible()
    assert second.id != first


async def test_usage_draws_its_charts_and_sets_a_limit_from_the_keyboard(
    page: Page, console_url: str, shots: Path
) -> None:
    session = await conversation("Costs", ("how much?", "Some."), platform=Platform.SLACK)
    [_, answer] = await tree.active_branch_ids(session.id)
    now = datetime.now(UTC)
    await _spend(answer, session.id, 1, ALICE, now)
    await _spend(answer, session.id, 2, ALICE, now - timedelta(days=1), model="large")
    await _spend(answer, session.id, 3, BOB, now)

    await sign_in(page, console_url, "/console/usage")
    await expect(page.locator("#total")).to_contain_text("3 model calls · 630 tokens")
    charts = page.locator("figure.chart")
    await expect(charts).to_have_count(4)
    await expect(page.get_by_role("img", name="Tokens by person: U1 (slack): 320, D9 (discord): 310")).to_be_visible()
    await expect(page.get_by_role("img", name="Tokens by model: small: 420, large: 210")).to_be_visible()
    await expect(page.get_by_role("img", name="Tokens by channel: C1 (W1): 320, D1 (G1): 310")).to_be_visible()
    await expect(charts.nth(0).locator("rect.bar")).to_have_count(30)  # a bar a day of the window

    await page.get_by_label("For a").select_option("user")
    await page.get_by_label("User, channel or workspace id").fill("U1")
    await page.get_by_label("In", exact=True).select_option("tokens")
    await page.get_by_label("Amount (empty: no limit)").fill("1000")
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("status").first).to_have_text(
        "The user limit of U1 per day is 1000 tokens.")
    await expect(page.locator("#limits tbody")).to_contain_text("1000 tokens")
    [limit] = await spend_limits.overrides()
    assert (limit.scope, limit.subject, limit.period, limit.amount) == ("user", "U1", "day", 1000.0)
    await shot(page, shots, "usage")

    await page.get_by_label("Amount (empty: no limit)").fill("-5")
    await page.get_by_label("User, channel or workspace id").fill("U1")
    await page.get_by_role("button", name="Set the limit").click()
    assert await page.evaluate("document.querySelector('#limit-amount').validity.valid") is False
    await page.get_by_role("button", name="Remove the user limit of U1 per day in tokens").click()
    await expect(page.get_by_role("status").first).to_have_text(
        "U1 is back to the default user limit.")
    assert await spend_limits.overrides() == []

    await page.goto(f"{console_url}/console/conversations/{session.id}")
    await expect(page.locator(f"#m{answer} .usage-line")).to_have_text(
        "3 model calls · 630 tokens (600 prompt, 30 completion) · cost 0.7500")


async def test_a_message_from_the_composer_a_rename_archive_and_the_agents_memory(
    page: Page, console_url: str, pool: RunPool, llm: ScriptedLLM, shots: Path
) -> None:
    llm.script(text_reply("Hello from the composer."))
    session = await sessions.create_session(title="Composer")

    await sign_in(page, console_url, f"/console/conversations/{session.id}")
    await expect(page.locator("ol.branch")).to_contain_text("No message yet.")
    await page.get_by_label("Message to the agent").fill("say hello")
    await page.get_by_label("Skill").select_option("readme-gen")
    await page.get_by_role("button", name="Send").press("Enter")  # from the keyboard
    await expect(page.get_by_role("status").first).to_have_text("Sent: the answer is being written.")
    await expect(page.locator("article.user .text")).to_have_text("say hello")
    await expect(page.locator("article.answer .final")).to_have_text("Hello from the composer.")
    [question, answer] = await tree.active_branch_ids(session.id)
    stored = await ChatMessage.get(id=answer)
    assert stored.skill_folder == "readme-gen" and stored.status == MessageStatus.SUCCESS
    assert (await finished(pool, stored.run_id or "")).status == MessageStatus.SUCCESS
    await shot(page, shots, "conversation-composer")

    await page.get_by_label("Message to the agent").fill("   ")
    await page.get_by_role("button", name="Send").click()
    await expect(page.get_by_role("alert")).to_contain_text("write a message first")

    await page.get_by_role("heading", name="Composer").dblclick()  # as in the seeds' sidebar
    await expect(page.get_by_label("New title")).to_be_focused()
    await page.get_by_label("New title").fill("Hello, composer")
    await page.get_by_label("New title").press("Enter")
    await expect(page.get_by_role("status").first).to_have_text("The conversation is renamed.")
    await expect(page.get_by_role("heading", name="Hello, composer")).to_be_visible()
    assert (await sessions.get_session(session.id)).title == "Hello, composer"
    await page.get_by_text("Rename", exact=True).click()  # without a double-click, as it was
    await page.get_by_label("New title").fill("\u0000")
    await page.get_by_role("button", name="Save the title").click()
    await expect(page.get_by_role("alert")).to_contain_text("must not contain NUL characters")
    assert (await sessions.get_session(session.id)).title == "Hello, composer"

    await page.get_by_role("button", name="Archive").click()
    await expect(page.get_by_role("status").first).to_have_text("The conversation is archived.")
    assert (await sessions.get_session(session.id)).status == SessionStatus.ARCHIVED
    await page.get_by_role("button", name="Unarchive").click()
    await expect(page.get_by_role("status").first).to_have_text(
        "The conversation is back among the active ones.")
    assert (await sessions.get_session(session.id)).status == SessionStatus.ACTIVE

    await page.get_by_role("link", name="Long-term memory").click()
    await expect(page.get_by_role("heading", name="Long-term memory of “Hello, composer”")).to_be_visible()
    await page.get_by_label("MEMORY.md").fill("The team deploys on Tuesdays.")
    await page.get_by_label("USER.md").fill("Ana prefers short answers.")
    await page.get_by_role("button", name="Save the memory").click()
    await expect(page.get_by_role("status").first).to_have_text(
        "The agent's memory was saved: its next run reads it.")
    await expect(page.get_by_label("MEMORY.md")).to_have_value("The team deploys on Tuesdays.")
    remembered = await session_commands.session_memory(pool.bridge, session.id)
    assert (remembered.memory, remembered.user) == ("The team deploys on Tuesdays.",
                                                    "Ana prefers short answers.")
    await shot(page, shots, "memory")
    assert question < answer


async def test_the_list_filters_by_channel_and_person(page: Page, console_url: str) -> None:
    await conversation("In C1", ("hello", "hi"), platform=Platform.SLACK, thread="3.3")
    asked = await sessions.create_session(title="Asked by U42")
    await tree.append_user(asked.id, "a question", author="U42")
    await conversation("Elsewhere", ("hey", "ho"))

    await sign_in(page, console_url)
    rows = page.locator("#results tbody tr")
    await expect(rows).to_have_count(3)
    await page.get_by_label("Channel id").fill("C1")
    await page.get_by_label("Channel id").press("Enter")
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("In C1")
    assert "channel=C1" in page.url
    await page.get_by_label("Channel id").fill("")
    await page.get_by_label("Person (user id)").fill("U42")
    await page.get_by_label("Person (user id)").press("Enter")
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("Asked by U42")


async def test_now_shows_the_services_health_and_an_unknown_page_says_so(
    page: Page, console_url: str, shots: Path
) -> None:
    await sign_in(page, console_url, "/console/now")
    health = page.locator("#health")
    await expect(health).to_contain_text("Database: ok")
    await expect(health).to_contain_text("Bridge: ok")
    await shot(page, shots, "now-health")
    answer = await page.goto(f"{console_url}/console/no-such-page")
    assert answer is not None and answer.status == 404
    assert "text/html" in (await answer.header_value("content-type") or "")
    await expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    await expect(page.get_by_role("alert")).to_contain_text("no console page /console/no-such-page")
    await page.get_by_role("link", name="Back to the conversations").click()
    await expect(page.get_by_role("heading", name="Conversations")).to_be_visible()
