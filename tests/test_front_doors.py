"""The front ends (the Slack and Discord adapters, the admin API, the console, the terminal chat) run no
database query themselves: what they read or change goes through the conversation layer
(docs/architecture.md, DESIGN §15). import-linter keeps their imports there
(`[tool.importlinter]`); this keeps the records that core.conversation.vocabulary names from being
queried through it, and the ORM out. Read from the source: no database."""

from __future__ import annotations

import ast
from pathlib import Path

from tortoise.models import Model

from core.store import models

ROOT = Path(__file__).parents[1]
FRONT_ENDS = [*sorted((ROOT / "bots").rglob("*.py")), *sorted((ROOT / "admin").rglob("*.py")),
              *sorted((ROOT / "console").rglob("*.py")), ROOT / "hermes_chat" / "chat.py"]
RECORDS = {name for name, value in vars(models).items()
           if isinstance(value, type) and issubclass(value, Model) and value is not Model}
QUERIES = {"all", "annotate", "bulk_create", "bulk_update", "create", "delete", "exclude",
           "filter", "first", "get", "get_or_create", "get_or_none", "raw",
           "select_for_update", "update", "update_or_create"}


def queries_in(path: Path) -> list[str]:
    """`Record.query(...)` calls on a record class, and imports of the ORM, as `line: code`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in RECORDS \
                and node.func.attr in QUERIES:
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tortoise"):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Import) and any(a.name.startswith("tortoise") for a in node.names):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_check_knows_the_records_and_finds_a_query(tmp_path: Path) -> None:
    assert {"ChatMessage", "ChatSession", "ClarifyPause"} <= RECORDS
    probe = tmp_path / "probe.py"
    probe.write_text("from tortoise import Tortoise\n"
                     "async def f():\n    return await ChatMessage.filter(id=1).first()\n",
                     encoding="utf-8")
    assert len(queries_in(probe)) == 2


def test_no_front_end_queries_the_database_itself() -> None:
    offenders = {str(p.relative_to(ROOT)): found for p in FRONT_ENDS if (found := queries_in(p))}
    assert offenders == {}
