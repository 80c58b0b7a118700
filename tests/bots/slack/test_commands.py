"""`/hermes` subcommands over HTTP, and the same words as a mention in a thread."""

from __future__ import annotations

import json

from bots.slack import ids
from core.store.models import ChatSession, ConversationBinding
from tests.bots.slack.harness import Harness, texts, until
from tests.fakes.fake_bridge import FakeBridge
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack_payloads import CHANNEL_ID, DM_CHANNEL_ID, make_block_action


async def conversation(h: Harness, llm: ScriptedLLM, text: str = "hello there") -> str:
    llm.script(text_reply("Hi!"))
    thread = (await h.event("app_mention", text=text))["ts"]
    await h.answered(CHANNEL_ID, thread)
    return thread


def choose(action_id: str, value: str) -> dict:
    option = {"text": {"type": "plain_text", "text": value}, "value": value}
    return make_block_action(action_id, action_type="static_select", selected_option=option,
                             channel=CHANNEL_ID)


async def test_status_help_and_a_channel_without_conversation(h: Harness, llm: ScriptedLLM) -> None:
    nothing = await h.command("model")
    assert "There is no conversation here yet" in nothing["text"]
    await conversation(h, llm)
    status = (await h.command("status"))["text"]
    assert "0 running, 0 queued" in status and "This conversation:* idle" in status
    assert "`model [name]`" in (await h.command(""))["text"]
    unknown = (await h.command("frobnicate now"))["text"]
    assert "I don't know the command `frobnicate now`" in unknown and "`export [md|json] [active|all]`" in unknown


async def test_model_and_skill_by_name_and_by_menu(h: Harness, llm: ScriptedLLM) -> None:
    await conversation(h, llm)
    menu = (await h.command("model"))
    select = menu["blocks"][1]["elements"][0]
    assert select["action_id"] == ids.SET_MODEL and [o["value"] for o in select["options"]] == ["1:scripted"]
    await h.interact(choose(ids.SET_MODEL, "1:scripted"))
    await until(lambda: any("now uses the model *Scripted*" in t for t in h.ephemerals()))
    assert (await ChatSession.get(id=1)).model_id == "scripted"

    assert "Unknown model 'nope'" in (await h.command("model nope"))["text"]
    assert "Unknown skill 'nope'" in (await h.command("skill nope"))["text"]
    assert "now uses the skill *readme-gen*" in (await h.command("skill readme-gen"))["text"]
    skills = (await h.command("skill"))["blocks"][1]["elements"][0]
    assert skills["action_id"] == ids.SET_SKILL and skills["initial_option"]["value"] == "1:readme-gen"
    assert (await ChatSession.get(id=1)).skill_folder == "readme-gen"
    await ChatSession.filter(id=1).update(skill_folder=None)
    await h.interact(choose(ids.SET_SKILL, skills["options"][0]["value"]))
    await until(lambda: any("now uses the skill *readme-gen*" in t for t in h.ephemerals()))
    assert (await ChatSession.get(id=1)).skill_folder == "readme-gen"


async def test_export_memory_and_reset(h: Harness, llm: ScriptedLLM) -> None:
    thread = await conversation(h, llm, "remember the milk")
    before = (await ChatSession.get(id=1)).hermes_session
    assert "Exporting" in (await h.command("export"))["text"]
    await h.command("export json all")
    uploads = await h.slack.wait_for_calls("files.completeUploadExternal", count=2)
    contents = sorted(h.slack.file_content(c.response["files"][0]["id"]).decode() for c in uploads)
    markdown, exported = next(c for c in contents if c.startswith("#")), next(c for c in contents if c.startswith("{"))
    assert "remember the milk" in markdown
    assert json.loads(exported)["messages"][0]["content"] == "remember the milk"
    shared = [m for m in h.slack.thread(CHANNEL_ID, thread) if m.files]
    assert len(shared) == 2
    await h.command("export pdf")
    await until(lambda: any("md, json" in t for t in h.ephemerals()))

    await h.command("memory")
    await until(lambda: any("MEMORY.md" in t or "memory" in t for t in h.ephemerals()))
    await h.command("reset")
    await until(lambda: any("reset the agent" in t for t in h.ephemerals()))
    assert (await ChatSession.get(id=1)).hermes_session != before


async def test_new_starts_a_conversation_in_its_own_thread(h: Harness, llm: ScriptedLLM) -> None:
    first = await conversation(h, llm)
    assert "Starting a new conversation" in (await h.command("new"))["text"]
    await until(lambda: any("reply in its thread" in t for t in h.ephemerals()))
    root = await until(lambda: [m for m in h.slack.history(CHANNEL_ID) if "started a new conversation" in m.text])
    binding = await ConversationBinding.get(thread=root[0].ts)
    assert binding.session_id != 1
    llm.script(text_reply("Fresh start."))
    await h.event("thread_message", text="hello again", thread_ts=root[0].ts)
    [answer] = await h.answered(CHANNEL_ID, root[0].ts)
    assert "Fresh start." in texts(answer)
    assert first != root[0].ts

    await h.command("new", channel=DM_CHANNEL_ID)
    await until(lambda: any("what I knew in this thread before is forgotten" in t for t in h.ephemerals()))
    assert await ConversationBinding.filter(channel=DM_CHANNEL_ID).count() == 1


async def test_the_same_words_as_a_mention_answer_in_the_thread(h: Harness, llm: ScriptedLLM) -> None:
    thread = await conversation(h, llm)
    before = (await ChatSession.get(id=1)).hermes_session
    words = ["status", "model", "skill", "skill readme-gen", "export json", "memory", "reset",
             "", "new"]  # a bare mention is help
    for text in words:
        await h.event("app_mention", text=text, thread_ts=thread)
    replies = await until(lambda: _at_least(
        [m for m in h.bot_messages(CHANNEL_ID, thread) if not m.files], 1 + len(words)))
    status, model, skill, chosen, exported, memory, reset, help_, new = replies[1:]
    assert "This conversation:* idle" in texts(status)
    assert model.blocks[1]["elements"][0]["action_id"] == ids.SET_MODEL
    assert skill.blocks[1]["elements"][0]["action_id"] == ids.SET_SKILL
    assert "now uses the skill *readme-gen*" in texts(chosen)
    assert "Exported `" in texts(exported) and ".json`" in texts(exported)
    [shared] = [m for m in h.slack.thread(CHANNEL_ID, thread) if m.files]
    assert json.loads(h.slack.file_content(shared.files[0]["id"]))["messages"][0]["content"] == "hello there"
    assert "What the agent remembers (MEMORY.md)" in texts(memory)
    assert "reset the agent" in texts(reset) and (await ChatSession.get(id=1)).hermes_session != before
    assert "`model [name]`" in texts(help_)
    assert "New conversation" in texts(new)
    session = await ChatSession.get(id=1)
    assert session.skill_folder == "readme-gen"
    assert (await ConversationBinding.get(thread=thread)).session_id == 2


def _at_least(items: list, count: int) -> list | None:  # type: ignore[type-arg]
    return items if len(items) >= count else None


def ephemeral_texts(h: Harness) -> list[str]:
    """Each ephemeral as the user sees it: its blocks' texts when it has blocks."""
    shown: list[str] = []
    for sent in h.slack.workspace.ephemerals:
        blocks = sent.get("blocks") or []
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        shown.append("\n".join(b["text"]["text"] for b in blocks if "text" in b) or sent.get("text", ""))
    return shown


async def test_memory_shows_what_the_agent_remembers(fh: Harness, fake_bridge: FakeBridge) -> None:
    thread = (await fh.event("app_mention", text="hello"))["ts"]
    await fh.answered(CHANNEL_ID, thread)
    hermes_session = (await ChatSession.get(id=1)).hermes_session
    fake_bridge.memory[hermes_session] = {"memory": "The team deploys on Fridays.", "user": "Name: Ada"}

    assert "Reading the agent's memory" in (await fh.command("memory"))["text"]
    shown = await until(lambda: [t for t in ephemeral_texts(fh) if "MEMORY.md" in t])
    assert "The team deploys on Fridays." in shown[0] and "Name: Ada" in shown[0]

    await fh.event("app_mention", text="memory", thread_ts=thread)
    [reply] = await until(lambda: [m for m in fh.bot_messages(CHANNEL_ID, thread) if "MEMORY.md" in texts(m)])
    assert "The team deploys on Fridays." in texts(reply) and "Name: Ada" in texts(reply)
