"""`/hermes` on Slack: the words (pure parsing and help), what each subcommand says
(`HANDLERS`, a table of word → handler; `core.conversation.commands` decides what it does),
the slash command's listener, which decides where the reply goes, and the model and skill
menus those commands answer with.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from core.conversation import bindings, channels, commands
from core.conversation.commands import COMMANDS, OwnUsage, Status
from core.conversation.presenting import status_line
from core.conversation.refusals import NO_CONVERSATION, NOT_ALLOWED
from core.conversation.vocabulary import ChatSession, Memory, Platform, ThreadKey
from core.errors import NotFound

from . import ids
from .actions import check_session, click_listener
from .inbound import Click, SlackPlace, SlashCommand, is_dm, place_of
from .intake import to_clicker, to_user, typed
from .render.blocks import Payload, actions, clip, option, section
from .render.mrkdwn import escape
from .schedules import SlackSchedules
from .services import SlackServices


@dataclass(frozen=True, slots=True)
class Where:
    """Where a command was given: a thread (a mention, a DM) or just a channel (slash)."""

    team: str
    channel: str
    user: str
    place: SlackPlace | None = None  # known for mentions and DMs


Handler = Callable[["Commands", "Command", Where], Awaitable[Payload]]


class Commands:
    def __init__(self, services: SlackServices, schedules: SlackSchedules) -> None:
        self._services = services
        self._schedules = schedules

    async def run(self, command: Command, where: Where) -> Payload:
        return await HANDLERS[command.name](self, command, where)

    async def help(self, command: Command, where: Where) -> Payload:
        return _text(help_text(command))

    async def status(self, command: Command, where: Where) -> Payload:
        return status_payload(commands.status(self._services.pool, await self._existing(where)))

    async def usage(self, command: Command, where: Where) -> Payload:
        return usage_payload(await commands.own_usage(self._services.pool, where.user))

    async def new(self, command: Command, where: Where) -> Payload:
        replaced = await self._existing(where)
        if where.place is not None:
            await commands.new_conversation(where.place.key, replaced)
            return _text("🆕 New conversation: what I knew in this thread before is forgotten.")
        root = await self._services.sender.post(where.team, where.channel, None, _text(
            f"🧵 <@{where.user}> started a new conversation with Hermes. Reply in this thread."))
        key = ThreadKey(Platform.SLACK, where.team, where.channel, root)
        await commands.new_conversation(key, replaced)
        return _text("🆕 New conversation started: reply in its thread.")

    async def reset(self, command: Command, where: Where) -> Payload:
        session = await self._session(where)
        outcome = await commands.reset(self._services.bridge, session.id)
        caveat = commands.reset_caveat(outcome)
        return _text(f"🔄 <@{where.user}> reset the agent of this conversation "
                     "(a fresh agent session; the messages here are kept)."
                     + (f" {caveat}" if caveat else ""))

    async def model(self, command: Command, where: Where) -> Payload:
        session = await self._session(where)
        catalogue = self._services.catalogue
        if command.argument is None:
            options = [(m.id, m.name) for m in catalogue.models]
            return choice_menu("model", session.id, options, session.model_id)
        entry = await commands.choose_model(catalogue, session.id, command.argument)
        return _text(model_chosen(entry.name, entry.id))

    async def skill(self, command: Command, where: Where) -> Payload:
        session = await self._session(where)
        if command.argument is None:
            options = [(s.folder, s.name) for s in self._services.catalogue.skills()]
            return choice_menu("skill", session.id, options, session.skill_folder)
        skill = await commands.choose_skill(self._services.catalogue, session.id, command.argument)
        return _text(skill_chosen(skill.name if skill else None))

    async def memory(self, command: Command, where: Where) -> Payload:
        session = await self._session(where)
        return memory_payload(await commands.memory(self._services.bridge, session.id))

    async def export(self, command: Command, where: Where) -> Payload:
        session = await self._session(where)
        export = await commands.export(session.id, *commands.export_options(command.argument))
        binding = await bindings.latest_binding(session.id, Platform.SLACK)
        channel = binding.channel if binding else where.channel
        thread = (binding.thread or None) if binding else None
        await self._services.sender.upload(where.team, channel, thread, export.filename,
                                           export.content,
                                           f"📎 <@{where.user}> exported this conversation")
        return _text(f"📎 Exported `{export.filename}` to the conversation's thread.")

    async def schedule(self, command: Command, where: Where) -> Payload:
        """`/hermes schedule …` (bots/slack/schedules.py)."""
        return await self._schedules.command(command.argument or "", where.team,
                                                      where.channel, where.user)

    async def channel(self, command: Command, where: Where) -> Payload:
        """`/hermes channel …`: this channel's settings; a change is confirmed in the channel
        (the thread of a mention), what the admin sees comes back privately."""
        key = where.place.key if where.place is not None else ThreadKey(
            Platform.SLACK, where.team, where.channel)
        services = self._services
        reply = await channels.run_command(
            services.pool.channel_defaults, services.catalogue, services.policy.admins,
            channels.Place.of_key(key), where.user, channels.parse_command(command.argument))
        if reply.public is not None:
            thread = where.place.reply_thread if where.place is not None else None
            await services.sender.post(where.team, where.channel, thread, _text(reply.public))
        return _text(reply.private)

    async def _session(self, where: Where) -> ChatSession:
        """The command's conversation: its thread's (created if new), else the channel's latest."""
        if where.place is not None:
            return (await bindings.session_for_thread(where.place.key))[0]
        session = await self._existing(where)
        if session is None:
            raise NotFound(NO_CONVERSATION)
        return session

    async def _existing(self, where: Where) -> ChatSession | None:
        if where.place is not None:
            return await bindings.bound_session(where.place.key)
        binding = await bindings.latest_in_channel(Platform.SLACK, where.team, where.channel)
        return binding.session if binding else None


HANDLERS: dict[str, Handler] = {
    "help": Commands.help, "status": Commands.status, "new": Commands.new,
    "reset": Commands.reset, "model": Commands.model, "skill": Commands.skill,
    "memory": Commands.memory, "export": Commands.export, "usage": Commands.usage,
    "schedule": Commands.schedule,
    "channel": Commands.channel,
}
PRIVATE = ("channel",)  # said only to who asked, as a mention too (an ephemeral)


def model_chosen(name: str, model_id: str) -> str:
    return f"✅ This conversation now uses the model *{name}* (`{model_id}`)."


def skill_chosen(name: str | None) -> str:
    if name is None:
        return "✅ This conversation now uses no skill."
    return f"✅ This conversation now uses the skill *{name}*."


def _text(text: str) -> Payload:
    return Payload(text, [section(text)])


# --- the words (pure) ---------------------------------------------------------------------
# `/hermes` subcommands (pure): parsing, and the help text for anything else.

SUBCOMMANDS = tuple(COMMANDS)
CHANNEL_WORDS = (*channels.ACTIONS, "workspace")
TAKES_ARGUMENT = ("model", "skill", "export", "schedule", "channel")
NOT_BY_MENTION = ("schedule",)  # a slash command only: "@hermes schedule a call" is a message
USAGE = {"model": "model [name]", "skill": "skill [name]", "export": "export [md|json] [active|all]",
         "schedule": 'schedule "<when>" [tz=<zone>] <prompt> | list | pause|resume|delete|history <id>',
         "channel": "channel [workspace] [set <key> <value> | unset <key> | apply | clear]"}
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
    return Command(name, _after_first_word(text))


def _after_first_word(text: str) -> str | None:
    """What follows the command's word, as written (a system prompt keeps its lines)."""
    parts = text.strip().split(maxsplit=1)
    return parts[1] if len(parts) > 1 else None


def mention_command(text: str) -> Command | None:
    """A mention that is a command: one subcommand word, plus one argument where it takes one.
    Anything longer is a message for the agent ("status of the deploy?" is not `status`)."""
    words = text.split()
    if not words or words[0].lower() not in SUBCOMMANDS or words[0].lower() in NOT_BY_MENTION:
        return None
    name = words[0].lower()
    if name == "channel":  # only its own words after it: "channel 5 is down" is a message
        first = words[1].lower() if len(words) > 1 else "show"
        return Command(name, _after_first_word(text)) if first in CHANNEL_WORDS else None
    most = 3 if name == "export" else 2 if name in TAKES_ARGUMENT else 1
    return Command(name, " ".join(words[1:]) or None) if len(words) <= most else None


def help_text(command: Command) -> str:
    if command.unknown:
        return f"I don't know the command `{command.unknown}`.\n\n{HELP}"
    return HELP


# --- status, usage and memory (pure) ------------------------------------------------------
# `/hermes status`, `/hermes usage` and `/hermes memory` as messages (pure).

MEMORY_CHARS = 2800


def status_payload(status: Status) -> Payload:
    lines = [f"*Runs:* {status.running} running, {status.queued} queued"]
    session = status.session
    if session is not None:
        mine = status.current
        lines.append(f"*This conversation:* {escape(status_line(mine)) if mine else 'idle'}")
        lines.append(f"*Model:* `{escape(session.model_id or 'default')}` · "
                     f"*Skill:* `{escape(session.skill_folder or 'none')}`")
        lines.append(f"*Channel settings:* {escape(status.settings or '')}")
    text = "\n".join(lines)
    return Payload(text, [section(text)])


def usage_payload(usage: OwnUsage) -> Payload:
    """`/hermes usage`: what the person's messages spent today and this month."""
    lines = ["*What your messages have spent* (UTC)"]
    lines += [f"*{label}:* {escape(words)}" for label, words in usage.lines()]
    if usage.limits:
        lines.append(f"*Your limits:* {escape('; '.join(usage.limits))}")
    text = "\n".join(lines)
    return Payload(text, [section(text)])


def memory_payload(memory: Memory) -> Payload:
    parts = [("What the agent remembers (MEMORY.md)", memory.memory),
             ("What it knows about you (USER.md)", memory.user)]
    blocks = [section(f"*{title}*\n{escape(clip(body.strip(), MEMORY_CHARS)) or '_empty_'}")
              for title, body in parts]
    return Payload("The agent's memory", blocks)


# --- the model and skill menus (pure) -----------------------------------------------------
# The model and skill select menus (pure); the chosen option carries the session id.

MAX_OPTIONS = 100
ACTION = {"model": ids.SET_MODEL, "skill": ids.SET_SKILL}


def choice_menu(kind: str, session_id: int, options: list[tuple[str, str]],
                current: str | None) -> Payload:
    """"Choose a model" with a select of the catalogue, the current choice preselected."""
    if not options:
        text = f"No {kind}s are configured." + (" Add them to MODELS_FILE." if kind == "model"
                                                 else " Add skill folders to SKILLS_DIR.")
        return Payload(text, [section(text)])
    now = f"Current {kind}: `{escape(current)}`." if current else f"No {kind} chosen yet (the default)."
    choices = [option(name, option_value(session_id, value)) for value, name in options[:MAX_OPTIONS]]
    select = {"type": "static_select", "action_id": ACTION[kind], "options": choices,
              "placeholder": {"type": "plain_text", "text": f"Choose a {kind}"}}
    chosen = next((c for c, (value, _) in zip(choices, options, strict=False) if value == current), None)
    if chosen is not None:
        select["initial_option"] = chosen
    return Payload(f"Choose a {kind}", [section(f"{now} Choose the {kind} of this conversation:"),
                                        actions(select)])


def option_value(session_id: int, value: str) -> str:
    return f"{session_id}:{value}"


def parse_option(value: str | None) -> tuple[int, str]:
    """(session id, model id or skill folder) of a chosen option."""
    session, _, chosen = (value or "").partition(":")
    return ids.unpack(session, 1)[0], chosen


# --- the slash command --------------------------------------------------------------------
# `/hermes`: quick subcommands answer in the acknowledgement itself (only the user sees it);
# the ones that call the Bridge or upload a file acknowledge at once and finish in a task.

class CommandListener:
    """`/hermes` and the menus its `model` and `skill` answer with."""

    def __init__(self, services: SlackServices, commands: Commands) -> None:
        self._services = services
        self._commands = commands

    def register(self, app: AsyncApp) -> None:
        app.command(ids.COMMAND)(self.on_command)
        menu = click_listener(self._services, self._choose, "choose model or skill")
        app.action(ids.SET_MODEL)(menu)
        app.action(ids.SET_SKILL)(menu)

    async def on_command(self, ack: AsyncAck, context: AsyncBoltContext) -> None:
        command = typed(context, SlashCommand)
        if not self._services.policy.may_talk(command.user):
            await ack(text=NOT_ALLOWED)  # the command's own reply, which only its user sees
            return
        parsed = parse_command(command.text)
        where = _where(command)
        if parsed.name not in SLOW:  # a refusal here is the acknowledgement (intake.py)
            payload = await self._commands.run(parsed, where)
            await ack(text=payload.text, blocks=payload.blocks)
            return
        await ack(text=f"⏳ {SLOW[parsed.name]}")
        reply = to_user(self._services.sender, where.team, where.channel, where.user)
        self._services.background.spawn(self._slow(parsed.name, self._commands.run(parsed, where), where),
                                        reply, f"/hermes {parsed.name}")

    async def _slow(self, name: str, work: Any, where: Where) -> None:
        payload = await work
        if name != "export":  # the export's file is its own message in the thread
            await self._services.sender.ephemeral(where.team, where.channel, where.user, payload.text,
                                                  blocks=payload.blocks or None)

    async def _choose(self, clicked: Click) -> None:
        """A choice in the model or skill menu of `/hermes model` or `/hermes skill`."""
        session_id, chosen = parse_option(clicked.value)
        await check_session(clicked, session_id)
        catalogue = self._services.catalogue
        if clicked.action_id == ids.SET_MODEL:
            entry = await commands.choose_model(catalogue, session_id, chosen)
            text = model_chosen(entry.name, entry.id)
        else:
            skill = await commands.choose_skill(catalogue, session_id, chosen)
            text = skill_chosen(skill.name if skill else None)
        await to_clicker(self._services.sender, clicked)(text)


SLOW = {"reset": "Resetting…", "memory": "Reading the agent's memory…", "export": "Exporting…",
        "new": "Starting a new conversation…"}  # these call the Bridge or post to Slack


def _where(command: SlashCommand) -> Where:
    team, channel, user = command.team, command.channel, command.user
    dm = is_dm(channel)
    place = place_of(team, channel, "", None, "im") if dm else None
    return Where(team, channel, user, place)
