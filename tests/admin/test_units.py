"""Pure helpers of the admin edge and its read models."""

from __future__ import annotations

import pytest

from admin.errors import camel
from core.session_queries import preview


@pytest.mark.parametrize(
    ("name", "spelled"),
    [("model_id", "modelId"), ("skill_folder", "skillFolder"), ("q", "q"), ("keep_history", "keepHistory")],
)
def test_core_field_names_are_spelled_camel_case(name: str, spelled: str) -> None:
    assert camel(name) == spelled


def test_previews_are_one_trimmed_line() -> None:
    assert preview("  two\n\nlines\t here ") == "two lines here"
    assert preview("x" * 10, limit=5) == "xxxx…"
    assert preview("exact", limit=5) == "exact"
