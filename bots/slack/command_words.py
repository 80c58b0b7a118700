"""`/hermes` subcommands (pure): parsing, and the help text for anything else."""

from __future__ import annotations

from dataclasses import dataclass

from core.conversation.commands import COMMANDS

SUBCOMMANDS = tuple(COMMANDS)
TAKES_ARGUMENT = ("model", "skill", "export")
USAGE = {"model": "model [name]", "skill": "skill [name]", "export": "export [md|json] [active|all]"}
HELP = "\n".join([
    "*Hermes commands* (`/hermes <command>`, or mention me with the same words in a thread)",
    *(f"• `{USAGE.get(name, name)}`: {what}" for name, what in COMMANDS.items() if name != "help"),
])


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    argument: str | None = None
    unknown: str | None = None  # what the user typed when it was no command


def parse_command(text: str) -> Command:
    """A slash command's text; anything unknown becomes help that says so."""
    words = text.split()
    if not words:
        return Command("help")
    name = words[0].lower()
    if name not in SUBCOMMANDS or (len(words) > 1 and name not in TAKES_ARGUMENT):
        return Command("help", unknown=text.strip())
    return Command(name, " ".join(words[1:]) or None)


def mention_command(text: str) -> Command | None:
    """A mention that is a command: one subcommand word, plus one argument where it takes one.
    Anything longer is a message for the agent ("status of the deploy?" is not `status`)."""
    words = text.split()
    if not words or words[0].lower() not in SUBCOMMANDS:
        return None
    name = words[0].lower()
    most = 3 if name == "export" else 2 if name in TAKES_ARGUMENT else 1
    return Command(name, " ".join(words[1:]) or None) if len(words) <= most else None


def help_text(command: Command) -> str:
    if command.unknown:
        return f"I don't know the command `{command.unknown}`.\n\n{HELP}"
    return HELP
