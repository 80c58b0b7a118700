"""The console's assets are the service's own: htmx is the pinned file its README names, and no
template or asset refers to anything outside this service."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

CONSOLE = Path(__file__).parents[2] / "console"
HTMX = CONSOLE / "static" / "htmx"


def test_htmx_is_the_file_its_readme_pins() -> None:
    readme = (HTMX / "README.md").read_text(encoding="utf-8")
    assert "htmx.org 2.0.11" in readme
    digest = hashlib.sha256((HTMX / "htmx.min.js").read_bytes()).hexdigest()
    assert f"| `htmx.min.js` | `{digest}` |" in readme


def test_no_page_or_asset_names_another_host() -> None:
    sources = [*(CONSOLE / "templates").glob("*.html"), CONSOLE / "static" / "console.css",
               CONSOLE / "static" / "console.js"]
    found = {p.name: hits for p in sources
             if (hits := re.findall(r"(?:https?:)?//[A-Za-z0-9.-]+\.[a-z]{2,}", p.read_text("utf-8")))}
    assert found == {}
