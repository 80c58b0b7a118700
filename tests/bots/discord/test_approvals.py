"""Tool approvals in Discord: the real bot against FakeDiscord, a real Bridge with `terminal`
enabled and the scripted LLM asking to `rm -rf` a directory the test owns. The approval shows
as a message with the command and four buttons; only the asker or a chat admin decides ("Always
allow" an admin only), others are refused privately; the message then shows who decided what;
the buttons work after a restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bots.discord.render.approval import COMMAND_CHARS, approval_part
from tests.bridge.harness import RunningBridge
from core.conversation.refusals import ADMIN_ONLY
from core.store.models import ApprovalRule, ClarifyPause, PauseKind, PauseStatus
from core.runtime.pool import RunPool
from core.runtime.recovery import recover
from core.runtime.updates import PauseView
from tests.bots.discord.harness import (
    answered,
    bot_messages,
    button,
    buttons,
    ephemeral_replies,
    mention,
    running_bot,
    text_of,
)
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM, text_reply, tool_reply
from tests.support.approvals import rm
from tests.fakes.changes import WAIT

TITLE = "⚠️ Tool approval"
LABELS = ["Allow once", "Allow in this conversation", "Always allow", "Deny"]
Payload = dict[str, Any]


@pytest.fixture
def bridge(terminal_bridge: RunningBridge) -> RunningBridge:
    """The Bridge of every pool here (`pool`, `second_pool`) runs `terminal`."""
    return terminal_bridge


async def ask(fake: FakeDiscord) -> tuple[int, Payload]:
    """Mention the bot; the thread and the approval's message once it shows with buttons."""
    asked = await fake.send_user_message(mention(fake, "clean up"))
    thread = int(asked["id"])

    def shown() -> Payload | None:
        return next((m for m in bot_messages(fake, thread)
                     if m["embeds"] and m["embeds"][0].get("title") == TITLE and buttons(m)), None)

    await fake.wait_until(shown, WAIT, "the approval")
    message = shown()
    assert message is not None
    return thread, message


async def until_decided(fake: FakeDiscord, message: Payload, text: str) -> Payload:
    await fake.wait_until(lambda: text in text_of(fake.message(message["id"])), WAIT, text)
    return fake.message(message["id"])


async def test_the_asker_denies_and_others_are_refused_privately(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM, victim: Path
) -> None:
    bob = fake.add_user("bob")
    llm.script(tool_reply(rm(victim)), text_reply("Left it alone."))
    async with running_bot(fake, pool, conversation_actions="anyone"):  # does not widen deciding
        thread, message = await ask(fake)
        assert [b["label"] for b in buttons(message)] == LABELS
        shown = text_of(message)
        assert f"```\nrm -rf {victim}\n```" in shown and "`terminal`" in shown
        deny, always_allow = (button(message, label)["custom_id"] for label in ("Deny", "Always allow"))
        others = await fake.click(message["id"], deny, user=bob)
        always = await fake.click(message["id"], always_allow)
        await fake.wait_for_response(others)
        await fake.wait_for_response(always)
        assert (await ClarifyPause.get()).status == PauseStatus.UNANSWERED, "nothing changed"
        assert buttons(fake.message(message["id"])) and victim.exists()
        denied = await fake.click(message["id"], deny)
        await fake.wait_until(lambda: answered(fake, thread, "Left it alone."), WAIT, "the answer")
        decided = await until_decided(fake, message, "⛔ Denied by")
    for refused, text in ((others, f"🔒 Only <@{fake.user['id']}>, who asked"), (always, ADMIN_ONLY)):
        record = fake.interaction(refused.id)
        said = record.response.get("data", {}) if record.response else {}
        assert text in (said.get("content") or ""), record.response
        assert said.get("flags", 0) & 64, "told privately"
    assert fake.interaction(denied.id).response == {"type": 6}
    assert ephemeral_replies(fake, denied.id) == []
    assert f"⛔ Denied by <@{fake.user['id']}>" in text_of(decided) and not buttons(decided)
    pause = await ClarifyPause.get()
    assert (pause.kind, pause.status, pause.answer, pause.answered_by) == (
        PauseKind.APPROVAL, PauseStatus.ANSWERED, "deny", fake.user["id"])
    assert victim.exists(), "denied: the command never ran"
    assert "BLOCKED" in llm.requests[-1]["messages"][-1]["content"]  # the Bridge told the agent


async def test_allow_once_runs_it_and_a_second_click_is_told_who_decided(
    fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM, victim: Path
) -> None:
    llm.script(tool_reply(rm(victim)), text_reply("Gone."))
    async with running_bot(fake, pool):
        thread, message = await ask(fake)
        once, deny = (button(message, label)["custom_id"] for label in ("Allow once", "Deny"))
        await fake.click(message["id"], once)
        await fake.wait_until(lambda: answered(fake, thread, "Gone."), WAIT, "the answer")
        decided = await until_decided(fake, message, "✅ Allowed once by")
        late = await fake.click(message["id"], deny)  # a client that has not seen the edit
        await fake.wait_until(lambda: ephemeral_replies(fake, late.id), WAIT, "the late refusal")
    assert f"✅ Allowed once by <@{fake.user['id']}>" in text_of(decided) and not buttons(decided)
    assert ephemeral_replies(fake, late.id) == [
        f"Nothing was changed: ✅ Allowed once by <@{fake.user['id']}>"]
    pause = await ClarifyPause.get()
    assert (pause.status, pause.answer) == (PauseStatus.ANSWERED, "once")
    assert not victim.exists() and await ApprovalRule.all().count() == 0


async def test_an_admin_always_allows_after_a_restart(
    fake: FakeDiscord, pool: RunPool, second_pool: RunPool, llm: ScriptedLLM,
    victim: Path
) -> None:
    admin = fake.add_user("admin")
    llm.script(tool_reply(rm(victim)), text_reply("Gone for good."))
    async with running_bot(fake, pool, chat_admins=(admin["id"],)):
        thread, message = await ask(fake)
    await pool.close()
    async with running_bot(fake, second_pool, chat_admins=(admin["id"],)):
        await recover(second_pool)
        await fake.click(message["id"], button(message, "Always allow")["custom_id"], user=admin)
        await fake.wait_until(lambda: answered(fake, thread, "Gone for good."), WAIT, "the answer")
        decided = await until_decided(fake, message, "✅ Always allowed by")
    assert f"✅ Always allowed by <@{admin['id']}>" in text_of(decided) and not buttons(decided)
    rule = await ApprovalRule.get()
    assert (rule.session_id, rule.decided_by) == (None, admin["id"]) and not victim.exists()
    titled = [m for m in bot_messages(fake, thread) if m["embeds"] and m["embeds"][0].get("title") == TITLE]
    assert len(titled) == 1, "the same message, not posted again after the restart"


def pending(command: str) -> PauseView:
    return PauseView(pause_id=7, clarify_id="a1", question=command,
                     choices=("once", "session", "always", "deny"), status=PauseStatus.UNANSWERED,
                     kind=PauseKind.APPROVAL, tool="terminal", reason="recursive delete")


@pytest.mark.parametrize("command", ["echo ```\n**bold** <@everyone>``` " + "x" * 10_000,
                                     "`" * 3000, "x" * (COMMAND_CHARS - 2) + "```"])
def test_the_command_cannot_break_out_of_its_code_block(command: str) -> None:
    part = approval_part(pending(command))
    description = part.embed.description or ""
    assert description.count("```") == 2, "only the fence itself"
    assert description.endswith("\n```") and len(description) < COMMAND_CHARS + 1000 < 4096
    assert "recursive delete" in description and "`terminal`" in description
    assert [b.custom_id for b in part.buttons] == [
        "hermes:decide:7:once", "hermes:decide:7:session", "hermes:decide:7:always", "hermes:decide:7:deny"]
