"""Who may reach a service of ours: a bearer token compared in constant time, and without a
token, loopback callers only. The admin API (ADMIN_TOKEN) and the Bridge (BRIDGE_TOKEN) share
both rules."""

from __future__ import annotations

import hmac
import ipaddress

from core.errors import InvalidInput


def bearer_matches(authorization: str, expected: str) -> bool:
    """True if `authorization` (the header's value) is `Bearer <expected>`, the scheme in any
    case. The token goes through `hmac.compare_digest` whatever its length, so no early exit
    tells a caller how much of it matched."""
    scheme, _, given = authorization.partition(" ")
    matches = hmac.compare_digest(given.strip().encode(), expected.encode())
    return matches and scheme.lower() == "bearer"


def is_loopback(host: str) -> bool:
    """True for `localhost` and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_binding(service: str, host: str, token: str | None, host_key: str,
                  token_key: str) -> None:
    """Refuse to serve on a non-loopback `host` without a token: InvalidInput names both keys."""
    if token or is_loopback(host):
        return
    raise InvalidInput(
        f"{token_key} is unset, so {service} only binds to loopback; "
        f"{host_key}={host} refused. Set {token_key} or use 127.0.0.1."
    )
