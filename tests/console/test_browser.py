"""The console in a real headless Chromium, against the real agent loop (the Bridge and the
scripted LLM): sign in, find a conversation by text, watch a run think live, answer its
question, switch versions, export, reset and delete. Each page is kept as a screenshot."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from playwright.async_api import Page, expect

from core.chat import sessions, tree
from core.conversation import feedback, turns
from core.runtime.pool import RunPool
from core.store.models import MessageStatus, Platform
from tests.admin.builders import conversation, store_logs, thinking_events
from tests.console.pages import painted, shot, sign_in
from tests.core.runtime.waiting import finished, until
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply

TODOS = {"todos": [{"id": "1", "content": "Read the deploy log", "status": "completed"},
                   {"id": "2", "content": "Pick the environment", "status": "in_progress"}]}
WHERE = {"question": "Which environment?", "choices": ["staging", "production"]}


async def test_sign_in_and_find_a_conversation_by_text(
    page: Page, console_url: str, shots: Path
) -> None:
    deploy = await conversation("Deploy failed", ("why did the deploy fail?",
                                                  "The invoices job ran out of memory."),
                                platform=Platform.SLACK, thread="1.1")
    lunch = await conversation("Lunch plans", ("where do we eat?", "The usual place."),
                               platform=Platform.DISCORD, thread="2.2")
    await feedback.rate((await _branch(lunch.id))[1], Platform.DISCORD, "U9", "bad")
    await conversation("Quarterly report", ("summarise Q3", "Revenue grew."))
    [_, answer] = await _branch(deploy.id)
    await store_logs(answer, thinking_events())

    await page.goto(f"{console_url}/console")
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    await shot(page, shots, "sign-in")
    await page.get_by_label("Admin token").fill("not the token")
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("alert")).to_have_text("That is not the admin token.")
    await sign_in(page, console_url)

    rows = page.locator("#results tbody tr")
    await expect(rows).to_have_count(3)
    await expect(rows.first).to_contain_text("Quarterly report")  # newest activity first
    await shot(page, shots, "conversations")
    await page.get_by_label("Search titles and messages").fill("out of memory")  # no Enter: live
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("Deploy failed")
    assert "q=out%20of%20memory" in page.url  # the search is a URL
    await page.get_by_label("Search titles and messages").fill("")
    await page.get_by_label("Platform").select_option("discord")
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("Lunch plans")
    await page.get_by_label("Platform").select_option("")
    await page.get_by_label("Rated").select_option("bad")
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("Lunch plans")
    await page.get_by_role("link", name="Lunch plans").click()
    await expect(page.locator(".feedback")).to_contain_text("👎 1 (U9)")
    await page.go_back()
    await page.get_by_label("Rated").select_option("")
    await page.get_by_label("Search titles and messages").fill("invoices")
    await page.get_by_label("Search titles and messages").press("Enter")
    await expect(rows).to_have_count(1)

    await page.get_by_role("link", name="Deploy failed").click()
    await expect(page.get_by_role("heading", name="Deploy failed")).to_be_visible()
    article = page.locator(f"#m{answer}")
    await expect(article.locator(".final")).to_have_text("The invoices job ran out of memory.")
    await article.locator("summary").first.click()  # the thinking, replayed from the log
    await expect(article.get_by_label("Todo list")).to_contain_text("Read the logs")
    await expect(article.get_by_label("Tools")).to_contain_text("read_file")
    await expect(article.get_by_label("Thinking stream")).to_contain_text("Let me look at the logs.")
    await shot(page, shots, "conversation")


async def test_a_run_thinks_live_and_its_question_is_answered_from_the_page(
    page: Page, console_url: str, pool: RunPool, llm: ScriptedLLM, shots: Path
) -> None:
    planning, writing = asyncio.Event(), asyncio.Event()
    llm.script(tool_reply(ToolCall("todo", TODOS), text="Let me plan this deploy.", gate=planning),
               tool_reply(ToolCall("clarify", WHERE)),
               text_reply("Deployed to staging: the checks are green.", gate=writing))
    session = await sessions.create_session(title="Deploy the app")
    run = await turns.start(pool, session.id, "deploy the app")
    await until(pool, run.run_id, lambda u: str(u.state.thinking).startswith("Let"))

    await sign_in(page, console_url, f"/console/conversations/{session.id}")
    answer = page.locator(f"#m{run.message_id}")
    await expect(answer.get_by_label("Thinking stream")).to_contain_text("Let")
    await expect(answer.get_by_label("Todo list")).to_contain_text("No todo list.")
    await page.evaluate("window.samePage = true")
    planning.set()  # the run goes on: the page follows it over the run's SSE, not by reloading
    await expect(answer.get_by_label("Todo list")).to_contain_text("Pick the environment")
    await expect(answer.get_by_label("Tools")).to_contain_text("todo")
    await expect(answer.locator(".question .asked")).to_contain_text("Which environment?")
    assert await page.evaluate("window.samePage") is True
    await shot(page, shots, "conversation-live")

    await answer.get_by_role("button", name="staging").click()
    await expect(page.get_by_role("status").first).to_have_text("Answered: staging")
    answer = page.locator(f"#m{run.message_id}")
    await expect(answer.get_by_label("Thinking stream")).to_contain_text("Dep")
    await page.evaluate("window.samePage = true")
    writing.set()
    await expect(answer.locator(".final")).to_have_text("Deployed to staging: the checks are green.")
    await expect(answer.locator(".asked-done")).to_contain_text("answered by console: “staging”")
    await expect(answer.locator(".status")).to_contain_text("Done")
    assert await page.evaluate("window.samePage") is True
    assert (await finished(pool, run.run_id)).status == MessageStatus.SUCCESS
    await shot(page, shots, "conversation-answered")


async def test_now_lists_runs_and_questions_and_takes_an_answer_typed_there(
    page: Page, console_url: str, pool: RunPool, llm: ScriptedLLM, shots: Path
) -> None:
    llm.script(tool_reply(ToolCall("clarify", WHERE)), text_reply("Going to production."))
    session = await sessions.create_session(title="Ship it")
    run = await turns.start(pool, session.id, "ship it")
    await until(pool, run.run_id, lambda u: u.pause is not None)

    await sign_in(page, console_url)
    await page.get_by_label("Waiting on a question").check()
    rows = page.locator("#results tbody tr")
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("Ship it")
    await expect(rows.first.locator(".live")).to_have_text("running")
    await page.get_by_role("link", name="Now").click()
    runs = page.locator("#runs")
    await expect(runs.locator("tbody tr")).to_have_count(1)
    await expect(runs).to_contain_text("Ship it")
    await expect(runs).to_contain_text("Waiting for your answer")
    waiting = page.locator("#waiting article")
    await expect(waiting).to_have_count(1)
    await expect(waiting).to_contain_text("Which environment?")
    await shot(page, shots, "now")
    await waiting.get_by_label("Or your own answer").fill("production, after the checks")
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("status").first).to_have_text("Answered: production, after the checks")
    done = await finished(pool, run.run_id)
    assert done.status == MessageStatus.SUCCESS and done.pause.answered_by == "console"
    await expect(page.locator("#waiting")).to_contain_text("Nobody is waited on.")
    await expect(page.locator("#runs")).to_contain_text("Nothing runs.")  # polled: no reload


async def test_regenerate_switch_versions_export_reset_and_delete(
    page: Page, console_url: str, pool: RunPool, llm: ScriptedLLM, shots: Path
) -> None:
    llm.script(text_reply("Second draft."))
    session = await conversation("Release notes", ("write the release notes", "First draft."))
    first = (await _branch(session.id))[1]

    await sign_in(page, console_url, f"/console/conversations/{session.id}")
    await page.locator(f"#m{first}").get_by_role("button", name="Regenerate").click()
    answers = page.locator("article.answer")
    await expect(answers.locator(".final")).to_have_text("Second draft.")  # live, then final
    await expect(answers.locator(".versions .position")).to_have_text("2/2")
    await expect(page.locator("article.user")).to_have_count(1)

    await answers.get_by_role("button", name="Previous version").click()
    await expect(page.locator("article.answer .final")).to_have_text("First draft.")
    await expect(page.locator("article.answer .versions .position")).to_have_text("1/2")
    await painted(page)  # the page of the previous version, drawn before a key is pressed on it
    async with page.expect_navigation():  # a button works from the keyboard
        await page.locator("article.answer").get_by_role("button", name="Next version").press("Enter")
    await expect(page.locator("article.answer .final")).to_have_text("Second draft.")
    await shot(page, shots, "conversation-versions")

    async with page.expect_download() as markdown:
        await page.get_by_role("link", name="Export Markdown").click()
    text = Path(await (await markdown.value).path()).read_text(encoding="utf-8")
    assert "write the release notes" in text and "Second draft." in text
    async with page.expect_download() as every:
        await page.get_by_role("link", name="Export JSON").click()
    exported = json.loads(Path(await (await every.value).path()).read_text(encoding="utf-8"))
    assert exported["session"]["title"] == "Release notes"

    await page.get_by_label("and start the conversation afresh").check()
    await page.get_by_role("button", name="Reset the agent").click()
    await expect(page.get_by_role("status").first).to_contain_text("starts afresh")
    await expect(page.locator("ol.branch")).to_contain_text("No message yet.")
    assert (await sessions.get_session(session.id)).hermes_session != session.hermes_session

    await page.get_by_role("link", name="Delete…").click()
    await expect(page.get_by_role("heading", name="Delete “Release notes”?")).to_be_visible()
    await shot(page, shots, "delete")
    await page.get_by_role("button", name="Delete for good").click()
    await page.wait_for_url(f"{console_url}/console/conversations")
    await expect(page.get_by_role("status").first).to_contain_text("was deleted")
    await expect(page.locator("#results")).to_contain_text("No conversation matches.")


async def _branch(session_id: int) -> list[int]:
    return await tree.active_branch_ids(session_id)


async def test_stop_ends_a_run_from_its_page(
    page: Page, console_url: str, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("A very long answer that nobody waits for.", gate=asyncio.Event()))
    session = await sessions.create_session(title="Too long")
    run = await turns.start(pool, session.id, "write a novel")
    await until(pool, run.run_id, lambda u: str(u.state.thinking) != "")

    await sign_in(page, console_url, f"/console/conversations/{session.id}")
    answer = page.locator(f"#m{run.message_id}")
    async with page.expect_navigation():
        await answer.get_by_role("button", name="Stop").press("Enter")
    await expect(page.get_by_role("status").first).to_have_text("Stopped.")
    assert (await finished(pool, run.run_id)).status == MessageStatus.STOPPED
    await expect(page.locator(f"#m{run.message_id} .status")).to_contain_text("Stopped")
    await expect(page.locator(f"#m{run.message_id}").get_by_role("button", name="Regenerate")).to_be_visible()
