"""How tests/ holds together: what several test modules share lives in tests/support (fixtures
registered once as plugins by tests/conftest.py, helpers imported as any module is), so no
module imports from a test module, and no fixture is imported by name to be taken as a
parameter (what `noqa` comments for F401 and F811 used to hide). Read from the source: no pytest
run, no database."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).parent
NOQA = re.compile(r"noqa:[^\n]*\bF(401|811)\b")


def _modules() -> list[Path]:
    return sorted(TESTS.rglob("*.py"))


def _is_test_module(dotted: str) -> bool:
    return dotted.split(".")[-1].startswith("test_")


def imports_of_test_modules(path: Path) -> list[str]:
    """`from tests.x.test_y import ...`, `import tests.x.test_y`, `from tests.x import test_y`
    in the module at `path`, as `line: statement`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names = [f"{node.module or ''}.{alias.name}" for alias in node.names]
            if _is_test_module(node.module or "") or any(_is_test_module(n) for n in names):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Import) and any(_is_test_module(a.name) for a in node.names):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_imports_from_a_test_module() -> None:
    offenders = {str(p.relative_to(TESTS)): found for p in _modules()
                 if (found := imports_of_test_modules(p))}
    assert offenders == {}, "move what is shared to tests/support"


def test_no_fixture_is_imported_to_be_used_by_name() -> None:
    offenders = [f"{p.relative_to(TESTS)}:{number}: {line.strip()}" for p in _modules()
                 for number, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if NOQA.search(line)]
    assert offenders == [], "a shared fixture belongs in a tests/support plugin module"


def test_the_checks_see_what_they_look_for(tmp_path: Path) -> None:
    module = tmp_path / "sample.py"
    module.write_text("from tests.hermes_chat.test_serve import code_path\n"
                      "import tests.core.chat.test_tree\n"
                      "from tests.bots.slack import test_clarify\n"
                      "from tests.support.processes import free_port\n", encoding="utf-8")
    assert [line.split(":")[0] for line in imports_of_test_modules(module)] == ["1", "2", "3"]
    noqa = "# noqa" + ":"  # not written whole: this file is read by the check too
    assert NOQA.search(f"from x import y  {noqa} F401  (a fixture)")
    assert NOQA.search(f"def f(a: int) -> None:  {noqa} E501, F811")
    assert not NOQA.search(f"import x  {noqa} E402")
