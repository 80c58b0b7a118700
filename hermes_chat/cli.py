"""`hermes-chat`: the composition root. Reads settings once and starts what was asked for."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence

from dotenv import dotenv_values

from core.catalogue import load_catalogue
from core.config import Settings
from core.errors import HermesChatError
from core.logs import configure_logging, quiet_level
from hermes_chat.bridge_process import with_child_token

log = logging.getLogger("hermes_chat")


def load_environment(environ: Mapping[str, str], dotenv_path: str = ".env") -> dict[str, str]:
    """The process environment over the keys of a local .env file (if there is one)."""
    file_values = {k: v for k, v in dotenv_values(dotenv_path).items() if v is not None}
    return {**file_values, **environ}


def _serve(settings: Settings, args: argparse.Namespace,
           environ: Mapping[str, str]) -> None:
    from hermes_chat.serve import serve

    asyncio.run(serve(settings, environ))


def _migrate(settings: Settings, args: argparse.Namespace,
             environ: Mapping[str, str]) -> None:
    from core.db import migrate

    applied = asyncio.run(migrate(settings.database_url))
    for name in applied:
        log.info("applied migration %s", name)
    log.info("database migrated (%d new migrations applied)", len(applied))


def _bridge(settings: Settings, args: argparse.Namespace,
            environ: Mapping[str, str]) -> None:
    from hermes_chat.bridge_command import run_bridge

    run_bridge(settings, environ)


def _chat(settings: Settings, args: argparse.Namespace,
          environ: Mapping[str, str]) -> None:
    """A client of the running service (ADMIN_HOST, ADMIN_PORT, ADMIN_TOKEN, or --url)."""
    from hermes_chat.chat import ChatOptions, quiet_logs, run_chat
    from hermes_chat.service_client import service_url

    quiet_logs(settings.log_level)
    url = args.url or service_url(settings.admin_host, settings.admin_port)
    options = ChatOptions(url.rstrip("/"), settings.admin_token, args.session, args.last,
                          args.list)
    code = asyncio.run(run_chat(options))
    if code:
        sys.exit(code)


def _secrets(settings: Settings, environ: Mapping[str, str]) -> tuple[str, ...]:
    """Settings.secrets() and the value of every key variable a model or the Bridge may use."""
    try:
        catalogued = load_catalogue(settings.models_file, settings.skills_dir).key_envs()
    except HermesChatError:  # a bad models.toml: the command that reads it says so
        catalogued = ()
    names = dict.fromkeys((*settings.bridge_key_envs, *catalogued))
    return (*settings.secrets(), *(environ[name] for name in names if environ.get(name)))


Command = Callable[[Settings, argparse.Namespace, Mapping[str, str]], None]
COMMANDS: dict[str, tuple[Command, str]] = {
    "serve": (_serve, "run the service: migrate, then serve the admin API and the chat bots"),
    "migrate": (_migrate, "apply database migrations and exit"),
    "bridge": (_bridge, "run the Hermes Bridge (the agent service) on BRIDGE_HOST:BRIDGE_PORT"),
    "chat": (_chat, "chat with the agent in this terminal (needs a running Bridge)"),
}
QUIET = frozenset({"chat"})  # a conversation in the terminal: no INFO lines inside it


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `hermes-chat` console script."""
    parser = argparse.ArgumentParser(prog="hermes-chat", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, (_, help_text) in COMMANDS.items():
        command = commands.add_parser(name, help=help_text)
        if name == "chat":
            command.add_argument("--session", type=int, metavar="N",
                                 help="take up session N: its last turns, its question, its run")
            command.add_argument("--last", action="store_true",
                                 help="take up the newest session not bound to a Slack or "
                                      "Discord thread")
            command.add_argument("--list", action="store_true",
                                 help="list the sessions and exit")
            command.add_argument("--url", help="the service (default: http://ADMIN_HOST:"
                                               "ADMIN_PORT, as `serve` listens)")
    args = parser.parse_args(argv)
    environ = load_environment(os.environ)
    try:
        settings = Settings.from_env(environ)
        if args.command == "serve":
            settings = with_child_token(settings)
    except HermesChatError as error:
        print(f"hermes-chat: bad setting: {error.message}", file=sys.stderr)
        return 2
    level = quiet_level(settings.log_level) if args.command in QUIET else settings.log_level
    configure_logging(level, settings.log_format, _secrets(settings, environ))
    try:
        COMMANDS[args.command][0](settings, args, environ)
    except HermesChatError as error:
        log.error("%s", error.message)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
