"""The environment of the child Bridge of `serve`: an allow-list, not the whole of `serve`'s.

The agent runs tools and talks to an LLM endpoint; whatever its process holds may leak through
either (a tool that prints the environment, a provider that echoes a header). So it gets what
the Bridge reads (its settings, written out from `serve`'s), what a Python process needs to run
(PATH, HOME, locale, temp dirs, CA bundles, proxies), and the values of the key variables it may
use (BRIDGE_KEY_ENVS: the catalogue's `api_key_env` names); never a Slack, Discord or admin
token, nor DATABASE_URL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from core.agent.catalogue import Catalogue
from core.config import Settings
from core.errors import InvalidInput
from core.logs import quiet_level
from hermes_chat.bridge_command import bridge_settings

_BASICS = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM",
    "TMPDIR", "TEMP", "TMP", "PYTHONPATH", "PYTHONHOME", "PYTHONUNBUFFERED", "PYTHONIOENCODING",
    "PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    "http_proxy", "https_proxy", "no_proxy", "all_proxy",
})
# What the Bridge and hermes-agent read: their settings, the LLM's, the log format.
_PREFIXES = ("LC_", "BRIDGE_", "HERMES_", "OPENAI_", "LOG_")
# The service's own secrets: no model may name one as its key.
SERVICE_SECRETS = frozenset({
    "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "DISCORD_TOKEN", "ADMIN_TOKEN",
    "DATABASE_URL",
})


def child_key_envs(settings: Settings, catalogue: Catalogue) -> tuple[str, ...]:
    """BRIDGE_KEY_ENVS of the child: the configured names and the catalogue's `api_key_env`
    names. A name of one of the service's secrets is refused (InvalidInput): it would let a
    model's endpoint receive, say, the Discord bot token."""
    names = tuple(dict.fromkeys((*settings.bridge_key_envs, *catalogue.key_envs())))
    forbidden = sorted(SERVICE_SECRETS.intersection(names))
    if forbidden:
        raise InvalidInput(f"{', '.join(forbidden)} may not be a model's key (api_key_env in "
                           f"{settings.models_file}, or BRIDGE_KEY_ENVS): it is a secret of the "
                           "service itself, never given to the Bridge")
    return names


def child_environment(settings: Settings, environ: Mapping[str, str], token: str,
                      key_envs: Iterable[str]) -> dict[str, str]:
    """The whole environment of the child Bridge (see the module)."""
    names = tuple(key_envs)
    kept = {key: value for key, value in environ.items()
            if key in _BASICS or key.startswith(_PREFIXES)}
    keys = {name: environ[name] for name in names if environ.get(name)}
    bridge = replace(bridge_settings(settings), token=token, key_envs=names,
                     log_level=quiet_level(settings.log_level))  # serve says when it starts
    return {**kept, **keys, **bridge.to_env()}
