"""Requirement (issue #8 §5): "skill names cannot escape SKILLS_DIR (path traversal)".

A skill name is a folder name of SKILLS_DIR: `..`, absolute paths, separators (plain or
percent-encoded) and symlinks that lead out of SKILLS_DIR are refused with a clear error on
every path a name comes in by: the admin API, Slack's `/hermes skill` and its menu, Discord's
`/hermes skill` and its menu. Already covered and left where it is: tests/admin/test_errors.py
(`skillFolder: "../../etc"` on POST /api/chat/sessions)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from core.agent.catalogue import Catalogue
from core.errors import InvalidInput, NotFound
from core.runtime.pool import RunPool
from core.store.models import ChatMessage, ChatSession
from tests.bots.discord.harness import answered, mention, reply_of, running_bot, text_of
from tests.bots.slack.harness import Harness, until
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.fakes.slack_payloads import CHANNEL_ID, make_block_action

SECRET_SKILL = "---\nname: Stolen\n---\nTHE-OUTSIDE-FILE"
TRAVERSALS = [
    "..", "../etc", "../../etc/passwd", "/etc", "/etc/passwd", "readme-gen/../../outside",
    "readme-gen/SKILL.md", "%2e%2e", "..%2f..%2fetc", "readme-gen%2F..%2F..", "a\\..\\..\\b",
    "C:\\Windows", "~root", ".hidden", "readme-gen\x00", " readme-gen", "x" * 200,
]
ESCAPING = ["escape", "linked-file"]  # symlinks in SKILLS_DIR that lead outside


@pytest.fixture
def escapes(skills_dir: Path) -> Path:
    """Beside readme-gen: a folder link and a SKILL.md link leading out, a link staying in."""
    outside = skills_dir.parent / "outside" / "secret"
    outside.mkdir(parents=True)
    (outside / "SKILL.md").write_text(SECRET_SKILL, encoding="utf-8")
    (skills_dir / "escape").symlink_to(outside, target_is_directory=True)
    (skills_dir / "linked-file").mkdir()
    (skills_dir / "linked-file" / "SKILL.md").symlink_to(outside / "SKILL.md")
    (skills_dir / "inside-link").symlink_to(skills_dir / "readme-gen", target_is_directory=True)
    return skills_dir


@pytest.mark.parametrize("name", TRAVERSALS)
def test_names_that_are_not_a_folder_name_are_refused(escapes: Path, name: str) -> None:
    with pytest.raises(InvalidInput, match="is not a skill name"):
        Catalogue((), escapes).skill(name)


def test_symlinks_out_of_skills_dir_are_no_skills_and_listing_skips_them(escapes: Path) -> None:
    catalogue = Catalogue((), escapes)
    for name in ESCAPING:
        with pytest.raises(NotFound, match="unknown skill"):
            catalogue.skill(name)
    assert [s.folder for s in catalogue.skills()] == ["inside-link", "readme-gen"]
    assert catalogue.skill("inside-link").content == "Write a README."


async def test_the_admin_api_refuses_them_on_every_route_and_writes_nothing(
    escapes: Path, api: httpx.AsyncClient
) -> None:
    session = (await api.post("/api/chat/sessions", json={"title": "kept"})).json()
    routes = [("POST", "/api/chat/sessions", {}), ("PATCH", f"/api/chat/sessions/{session['id']}", {}),
              ("POST", f"/api/chat/sessions/{session['id']}/runs", {"message": "hi"})]
    for name in [*TRAVERSALS, *ESCAPING]:
        for method, path, body in routes:
            response = await api.request(method, path, json={**body, "skillFolder": name})
            assert response.status_code == 400, (method, path, name, response.text)
            error = response.json()
            assert (error["code"], error["field"]) == ("invalid_input", "skillFolder")
            assert error["message"].startswith("skillFolder: ")
    assert await ChatSession.all().count() == 1 and await ChatMessage.all().count() == 0
    assert (await ChatSession.get()).skill_folder is None
    listed = await api.get("/api/skills")
    assert listed.status_code == 200 and "THE-OUTSIDE-FILE" not in listed.text
    assert [s["folder"] for s in listed.json()] == ["inside-link", "readme-gen"]


async def test_slack_refuses_them_by_name_and_in_the_menu(
    escapes: Path, h: Harness, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Hi!"))
    thread = (await h.event("app_mention", text="hello"))["ts"]
    await h.answered(CHANNEL_ID, thread)
    session = await ChatSession.get()
    for name in ["../../etc/passwd", "/etc", "..%2fetc", "readme-gen/../../outside"]:
        assert f"{name!r} is not a skill name" in (await h.command(f"skill {name}"))["text"]
    for name in ESCAPING:
        assert f"Unknown skill '{name}'" in (await h.command(f"skill {name}"))["text"]
    menu = (await h.command("skill"))["blocks"][1]["elements"][0]
    assert [o["value"] for o in menu["options"]] == [f"{session.id}:inside-link",
                                                     f"{session.id}:readme-gen"]
    for name in ["../../etc", "escape"]:
        option = {"text": {"type": "plain_text", "text": name}, "value": f"{session.id}:{name}"}
        await h.interact(make_block_action("hermes.session.skill", action_type="static_select",
                                           selected_option=option, channel=CHANNEL_ID))
    await until(lambda: len([e for e in h.ephemerals() if "skill" in e.lower()]) == 2)
    said = [e for e in h.ephemerals() if "skill" in e.lower()]
    # the two clicks are handled concurrently: their answers may come in either order
    assert any("'../../etc' is not a skill name" in e for e in said)
    assert any("Unknown skill 'escape'" in e for e in said)
    assert (await ChatSession.get()).skill_folder is None


async def test_discord_refuses_them_by_name_and_in_the_menu(
    escapes: Path, fake: FakeDiscord, pool: RunPool, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("Hi!"))
    async with running_bot(fake, pool):
        thread = int((await fake.send_user_message(mention(fake, "hello")))["id"])
        await fake.wait_until(lambda: answered(fake, thread, "Hi!"), 15.0, "the answer")
        session = await ChatSession.get()
        for name in ["../../etc/passwd", "/etc", "escape"]:
            reply = await reply_of(fake, await fake.run_command(
                "hermes", "skill", options={"name": name}, channel_id=thread))
            expected = "Unknown skill" if name == "escape" else "is not a skill name"
            assert expected in text_of(reply) and reply["flags"] & 64, text_of(reply)
        menu = await reply_of(fake, await fake.run_command("hermes", "skill", channel_id=thread))
        options = [o["value"] for o in menu["components"][0]["components"][0]["options"]]
        assert "escape" not in options and "linked-file" not in options
        for name in ["../../etc", "escape"]:
            picked = await fake.click(menu["id"], f"hermes:skill:{session.id}", component_type=3,
                                      values=[name])
            reply = await reply_of(fake, picked)
            assert name in text_of(reply) and reply["flags"] & 64
    assert (await ChatSession.get()).skill_folder is None
