"""The markers tests/conftest.py sets: `db` on every database test (the SQLite pass runs them
all), `backend` on those the PostgreSQL pass runs again. Checked by a real `pytest --collect-only`
of a few modules, one of each kind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent
MODULES = (
    "tests/core/chat/test_tree.py",  # the store: backend
    "tests/hermes_chat/test_serve.py",  # a `db` mark without the fixture (migrate): backend
    "tests/admin/test_sessions.py",  # the admin API: SQLite only
    "tests/admin/test_listing.py",  # reads BACKEND: backend
    "tests/security/test_run_quota.py",  # some tests marked `backend`
)


# One collection prints each test's `db` and `backend` marks (a pytest process costs seconds).
MARKS = """
import sys, pytest
class Marks:
    def pytest_collection_finish(self, session):
        for item in session.items:
            print("MARK", item.nodeid, *(m for m in ("db", "backend") if item.get_closest_marker(m)))
sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *sys.argv[1:]], plugins=[Marks()]))
"""


def collected() -> dict[str, set[str]]:
    """The tests of MODULES (their names, parameters left off) that carry each mark."""
    result = subprocess.run([sys.executable, "-c", MARKS, *MODULES],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    marks: dict[str, set[str]] = {"db": set(), "backend": set()}
    for line in result.stdout.splitlines():
        if line.startswith("MARK "):
            _, test, *names = line.split()
            for name in names:
                marks[name].add(test.split("[")[0])
    return marks


def test_the_postgresql_pass_holds_the_store_and_what_front_ends_mark_as_backend() -> None:
    marks = collected()
    every, backend = marks["db"], marks["backend"]
    assert backend < every
    modules = {test.split("::")[0] for test in backend}
    assert modules == set(MODULES) - {"tests/admin/test_sessions.py"}, modules
    assert {t for t in every if t.startswith("tests/core/chat/test_tree.py")} <= backend
    assert "tests/hermes_chat/test_serve.py::test_migrate_applies_the_same_files_to_a_fresh_database_once" in backend
    assert {t for t in every if t.startswith("tests/admin/test_listing.py")} <= backend
    quota = {t.split("::")[1] for t in backend if t.startswith("tests/security/test_run_quota.py")}
    assert quota == {
        "test_the_bucket_refills_evenly_and_says_when",
        "test_two_replicas_count_one_quota_in_the_database",
        "test_full_buckets_are_swept_and_odd_user_ids_are_kept_apart",
    }
    assert any(t.startswith("tests/admin/test_sessions.py") for t in every)  # SQLite runs them
