"""`hermes-chat`: reads the settings once (the environment over .env) and runs one command."""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from dotenv import dotenv_values

from core.agent.catalogue import load_catalogue
from core.config import Settings
from core.errors import HermesChatError
from core.logs import configure_logging, quiet_level
from hermes_chat.bridge_process import with_child_token
from hermes_chat.exits import Exit, StartupFailure

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
    from core.store.db import migrate
    from hermes_chat.startup import check_data_folder, reaching_database

    async def migrated() -> list[str]:
        async with reaching_database(settings.database_url):
            return await migrate(settings.database_url)

    check_data_folder(settings.database_url)
    applied = asyncio.run(migrated())
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
DESCRIPTION = """\
hermes-chat: chat with a Hermes agent from Slack threads and Discord channels, with an admin
API to browse, export and reset conversations. Settings come from the environment and a .env
file in the working folder (see .env.example); the environment wins."""
EPILOG = """\
examples:
  hermes-chat serve              run everything configured (docs/operations.md: exit codes)
  hermes-chat migrate            bring the database up to date, then exit
  hermes-chat bridge             run the agent service alone (for HERMES_BRIDGE_URL)
  hermes-chat chat               talk to the agent in this terminal
  hermes-chat <command> --help   more on one command"""


@dataclass(frozen=True, slots=True)
class CommandHelp:
    """What `--help` says of a command: one line in the list, a description, examples."""

    summary: str
    description: str
    examples: str


COMMANDS: dict[str, tuple[Command, CommandHelp]] = {
    "serve": (_serve, CommandHelp(
        "run the service: migrate, then serve the admin API and the chat bots",
        "Migrate the database, start the Bridge (unless HERMES_BRIDGE_URL names one), the "
        "admin API on\nADMIN_HOST:ADMIN_PORT and every chat platform whose tokens are set; "
        "stop on Ctrl-C or SIGTERM.\nA start-up mistake is one line on stderr and an exit "
        "code of its own (docs/operations.md).",
        "  hermes-chat serve\n"
        "  DATABASE_URL=postgres://hermes:secret@db:5432/hermes ADMIN_PORT=9000 hermes-chat serve\n"
        "  curl -s http://127.0.0.1:8080/api/health   # from another terminal")),
    "migrate": (_migrate, CommandHelp(
        "apply database migrations and exit",
        "Apply every migration the database named by DATABASE_URL has not seen yet (serve "
        "does this too).",
        "  hermes-chat migrate\n"
        "  DATABASE_URL=postgres://hermes:secret@db:5432/hermes hermes-chat migrate")),
    "bridge": (_bridge, CommandHelp(
        "run the Hermes Bridge (the agent service) on BRIDGE_HOST:BRIDGE_PORT",
        "Run the Bridge alone, for serve processes that name it in HERMES_BRIDGE_URL; its "
        "model is\nHERMES_MODEL at OPENAI_BASE_URL (key OPENAI_API_KEY), its routes need "
        "BRIDGE_TOKEN.",
        "  BRIDGE_TOKEN=change-me hermes-chat bridge\n"
        "  BRIDGE_HOST=0.0.0.0 BRIDGE_TOKEN=change-me HERMES_MODEL=gpt-4o-mini \\\n"
        "    OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=sk-... hermes-chat bridge")),
    "chat": (_chat, CommandHelp(
        "chat with the agent in this terminal (a client of a running serve)",
        "Talk to the agent in this terminal: a client of the running serve's admin API, found "
        "from the same\nsettings (ADMIN_HOST, ADMIN_PORT, ADMIN_TOKEN; .env). /help in the chat "
        "lists its commands.",
        "  hermes-chat chat\n"
        "  hermes-chat chat --list           # the sessions, newest first\n"
        "  hermes-chat chat --session 12     # take up session 12, its waiting question included\n"
        "  hermes-chat chat --last           # take up the newest terminal session")),
}
QUIET = frozenset({"chat"})  # a conversation in the terminal: no INFO lines inside it


def parser() -> argparse.ArgumentParser:
    """The command line: `--version`, and one subcommand of COMMANDS, each with examples."""
    top = argparse.ArgumentParser(prog="hermes-chat", description=DESCRIPTION, epilog=EPILOG,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    top.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (_, about) in COMMANDS.items():
        command = commands.add_parser(
            name, help=about.summary, description=about.description,
            epilog=f"examples:\n{about.examples}",
            formatter_class=argparse.RawDescriptionHelpFormatter)
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
    return top


def version() -> str:
    """The installed package's version."""
    try:
        return importlib.metadata.version("hermes-chat")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `hermes-chat` console script; the exit code (hermes_chat/exits.py)."""
    args = parser().parse_args(argv)
    environ = load_environment(os.environ)
    try:
        settings = Settings.from_env(environ)
        if args.command == "serve":
            settings = with_child_token(settings)
    except HermesChatError as error:
        return _failed(StartupFailure(Exit.BAD_SETTING, f"bad setting: {error.message}"))
    level = quiet_level(settings.log_level) if args.command in QUIET else settings.log_level
    configure_logging(level, settings.log_format, _secrets(settings, environ))
    try:
        COMMANDS[args.command][0](settings, args, environ)
    except StartupFailure as failure:
        return _failed(failure)
    except HermesChatError as error:
        log.error("%s", error.message)
        return Exit.FAILED
    except KeyboardInterrupt:
        return Exit.INTERRUPTED
    return Exit.OK


def _failed(failure: StartupFailure) -> int:
    """One line on stderr, whatever LOG_FORMAT says: read by a person starting the service."""
    print(f"hermes-chat: {failure.message}", file=sys.stderr)
    return failure.code


if __name__ == "__main__":
    sys.exit(main())
