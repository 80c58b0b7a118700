"""A URL's credentials taken out; which origins a file may come from (DISCORD_CDN_HOSTS)."""

from __future__ import annotations

import pytest

from core.config import Settings
from core.edge.urls import Origins, redacted_url
from core.errors import InvalidInput


@pytest.mark.parametrize(("url", "shown"), [
    ("http://u:p@h:1/x?y=1", "http://***@h:1/x?y=1"),
    ("postgres://user:p%40ss@db.internal:5432/hermes", "postgres://***@db.internal:5432/hermes"),
    ("https://token@bridge/health", "https://***@bridge/health"),
    ("http://h:1/a@b", "http://h:1/a@b"),  # an @ in the path is no credential
    ("http://127.0.0.1:18731", "http://127.0.0.1:18731"),
    ("not a url", "not a url"),
    ("http://a:p1@h:1, http://b:p@ss@h:2/x", "http://***@h:1, http://***@h:2/x"),
    ("the Bridge at https://u:p@h did not answer", "the Bridge at https://***@h did not answer"),
])
def test_credentials_are_taken_out_of_a_url(url: str, shown: str) -> None:
    assert redacted_url(url) == shown


def test_a_host_means_https_on_it_and_an_origin_exactly_that_one() -> None:
    origins = Origins.of(["cdn.discordapp.com", "http://127.0.0.1:8080"])
    assert origins.allow("https://cdn.discordapp.com/attachments/1/2/a.png")
    assert origins.allow("https://CDN.discordapp.com:443/a")
    assert origins.allow("http://127.0.0.1:8080/attachments/1")
    for refused in ("http://cdn.discordapp.com/a", "https://evil.example/a",
                    "https://cdn.discordapp.com.evil.example/a", "http://127.0.0.1:8081/a",
                    "https://127.0.0.1:8080/a", "https://u:p@cdn.discordapp.com/a",
                    "file:///etc/passwd", "nonsense"):
        assert not origins.allow(refused), refused


@pytest.mark.parametrize("entry", ["cdn.example/x", "host:99", "user@host"])
def test_an_entry_that_is_neither_a_host_nor_an_origin_is_refused(entry: str) -> None:
    with pytest.raises(ValueError):
        Origins.of([entry])


def test_discord_cdn_hosts_are_hosts_or_origins() -> None:
    assert Settings.from_env({}).discord_file_origins.allow("https://cdn.discordapp.com/a")
    custom = Settings.from_env({"DISCORD_CDN_HOSTS": "http://127.0.0.1:9000"}).discord_file_origins
    assert custom.allow("http://127.0.0.1:9000/a") and not custom.allow("https://cdn.discordapp.com/a")
    with pytest.raises(InvalidInput, match="DISCORD_CDN_HOSTS"):
        Settings.from_env({"DISCORD_CDN_HOSTS": "cdn.discordapp.com/attachments"})


def test_a_bad_bridge_url_is_named_without_its_password() -> None:
    with pytest.raises(InvalidInput) as refused:
        Settings.from_env({"HERMES_BRIDGE_URL": "ftp://u:pw-secret@h:1"})
    assert "pw-secret" not in str(refused.value) and "***@h:1" in str(refused.value)
