"""The documentation a newcomer reads: a short README whose first screen gets them to a first
answer, and links between the documents that lead somewhere."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from core.config import Settings

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
DOCUMENTS = sorted([README, ROOT / "CHANGELOG.md", ROOT / "bench" / "README.md", *(ROOT / "docs").glob("*.md")])
FENCE = re.compile(r"^(`{3,}|~{3,})(\S*).*?$\n(.*?)^\1\s*$", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of each fenced code block, in order."""
    return [(m.group(2), m.group(3)) for m in FENCE.finditer(text)]


def prose(text: str) -> str:
    """The text outside fenced code blocks (a link in a code block is an example, not a link)."""
    return FENCE.sub("", text)


def anchors(document: Path) -> set[str]:
    """The anchors GitHub gives the headings of a Markdown document."""
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", prose(document.read_text(encoding="utf-8")), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def test_the_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_the_first_screen_points_the_agent_at_a_model_then_runs_it() -> None:
    first_screen = "\n".join(README.read_text(encoding="utf-8").splitlines()[:60])
    quick_start = first_screen.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    blocks = fenced_blocks(quick_start)
    [dotenv] = [body for info, body in blocks if info == "dotenv"]
    keys = re.findall(r"^([A-Z_]+)=", dotenv, re.MULTILINE)
    assert keys == ["OPENAI_BASE_URL", "OPENAI_API_KEY", "HERMES_MODEL"]
    assert set(keys) <= {f.name.upper() for f in fields(Settings)}
    [commands] = [body for info, body in blocks if info == "sh"]
    assert [line.split("#")[0].strip() for line in commands.splitlines()] == [
        "./scripts/serve", ".venv/bin/hermes-chat chat"]
    assert [info for info, _ in blocks] == ["dotenv", "sh"]
    assert "`./scripts/test`" in prose(quick_start)
    assert "(docs/setup-slack.md)" in quick_start and "(docs/setup-discord.md)" in quick_start


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(document: Path) -> None:
    broken = []
    for target in LINK.findall(prose(document.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        linked = (document.parent / path).resolve() if path else document
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no such heading in {linked.relative_to(ROOT)}")
    assert not broken, f"{document.relative_to(ROOT)}: {broken}"
