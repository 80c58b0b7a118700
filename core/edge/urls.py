"""URLs the service shows or logs, and where it may fetch from.

A Bridge URL or DATABASE_URL may carry `user:password@`; `redacted_url` is the one rule that
takes it out wherever a URL is shown (`/api/health`, `/metrics` labels, errors, log lines).
`Origins` says which hosts a file may be downloaded from (docs/security.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

HIDDEN = "***"
# `scheme://` then the userinfo: up to the last `@` before the authority ends.
_CREDENTIALS = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/?#\s,]*@")


def endpoint_only(url: str) -> str:
    """The URL without user, password, query (where a key may be passed) and fragment: an
    endpoint as `serve` and `/api/health` name it."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(an endpoint that is not a URL)"
    return urlunsplit((parts.scheme, f"{host}{port}", parts.path, "", ""))


def redacted_url(url: str) -> str:
    """`url` with any `user:password@` replaced by `***@`; everything else as written. Works
    on a comma-separated list of URLs (HERMES_BRIDGE_URL) and on a text that quotes URLs;
    text without credentials comes back unchanged."""
    return _CREDENTIALS.sub(rf"\g<scheme>{HIDDEN}@", url)


@dataclass(frozen=True, slots=True)
class Origins:
    """Where files may come from: each entry a host name, meaning `https://` on that host
    (any port), or an origin written with its scheme (`http://127.0.0.1:8080`, for a test
    double), meaning exactly that scheme, host and port."""

    hosts: frozenset[str] = frozenset()
    exact: frozenset[tuple[str, str, int | None]] = frozenset()

    @classmethod
    def of(cls, entries: Iterable[str]) -> Origins:
        """Parse the entries (ValueError for one that is neither a host nor an origin)."""
        hosts: set[str] = set()
        exact: set[tuple[str, str, int | None]] = set()
        for entry in (e.strip() for e in entries if e.strip()):
            if "://" in entry:
                exact.add(origin_of(entry))
            elif "/" in entry or ":" in entry or "@" in entry:
                raise ValueError(f"{entry!r} is neither a host name nor an origin")
            else:
                hosts.add(entry.lower())
        return cls(frozenset(hosts), frozenset(exact))

    def allow(self, url: str) -> bool:
        """Whether `url` is on one of these origins."""
        try:
            scheme, host, port = origin_of(url)
        except ValueError:
            return False
        return (scheme == "https" and host in self.hosts) or (scheme, host, port) in self.exact


def origin_of(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of an http(s) URL; ValueError for anything else."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
        raise ValueError(f"not an http(s) URL without credentials: {redacted_url(url)!r}")
    port = parts.port  # ValueError for a port out of range
    default = 443 if scheme == "https" else 80
    return scheme, parts.hostname.lower(), port if port is not None and port != default else None
