"""Everything the Discord adapter is made of, built once and passed down (the composition)."""

from __future__ import annotations

from dataclasses import dataclass

import discord
from discord import app_commands

from bots.discord.actions import Actions
from bots.discord.budget import ChannelBudget
from bots.discord.clarify_actions import ClarifyActions
from bots.discord.commands.info import InfoCommands
from bots.discord.commands.session import SessionCommands
from bots.discord.commands.settings import SettingsCommands
from bots.discord.commands.tree import hermes_group
from bots.discord.commands.where import CommandPlaces
from bots.discord.dividers import DividerPresenter
from bots.discord.edits import Edits
from bots.discord.ids import Action
from bots.discord.incoming import Conversations
from bots.discord.info_actions import InfoActions
from bots.discord.notices import Notices
from bots.discord.outbox import Outbox
from bots.discord.pauses import PausePresenter
from bots.discord.sessions import SessionFinder
from bots.discord.targets import Targets
from bots.discord.turn_actions import TurnActions
from bots.discord.turns import TurnPresenter
from bots.discord.updater import LiveUpdater
from bots.discord.writer import WRITE_TIMEOUT, Writer
from core.attachments import DEFAULT_LIMITS, Limits
from core.bridge.port import Bridge
from core.catalogue import Catalogue
from core.ratelimit import RateLimiter
from core.runtime.pool import RunPool


@dataclass(frozen=True, slots=True)
class Services:
    conversations: Conversations
    edits: Edits
    actions: Actions
    updater: LiveUpdater
    outbox: Outbox
    commands: app_commands.Group


def build_services(client: discord.Client, pool: RunPool, catalogue: Catalogue, bridge: Bridge,
                   limiter: RateLimiter, allow_list: tuple[str, ...],
                   write_timeout: float = WRITE_TIMEOUT,
                   limits: Limits = DEFAULT_LIMITS) -> Services:
    outbox = Outbox(ChannelBudget(limiter))
    writer, targets = Writer(client, write_timeout), Targets()
    pauses = PausePresenter(targets, writer, outbox)
    updater = LiveUpdater(pool, targets, TurnPresenter(targets, writer, outbox), pauses,
                          DividerPresenter(targets, writer, outbox))
    notices, finder = Notices(writer, outbox), SessionFinder(client, targets)
    places = CommandPlaces(finder, allow_list)
    settings = SettingsCommands(places, catalogue)
    return Services(
        conversations=Conversations(client, pool, finder, notices, allow_list, limits),
        edits=Edits(client, pool, finder, notices),
        actions=_actions(TurnActions(pool, updater), ClarifyActions(pool, pauses), InfoActions(pool),
                         settings),
        updater=updater,
        outbox=outbox,
        commands=hermes_group(SessionCommands(places, bridge, targets), settings,
                              InfoCommands(places, pool, bridge)),
    )


def _actions(turns: TurnActions, clarify: ClarifyActions, info: InfoActions,
             settings: SettingsCommands) -> Actions:
    return Actions({
        Action.REGENERATE: turns.regenerate, Action.VERSION: turns.version, Action.STOP: turns.stop,
        Action.THINKING: info.thinking, Action.PAGE: info.page, Action.SUMMARY: info.summary,
        Action.CHOICE: clarify.choice, Action.CUSTOM: clarify.custom, Action.ANSWER: clarify.submitted,
        Action.MODEL: settings.picked, Action.SKILL: settings.picked,
        Action.FEEDBACK: turns.feedback,
    })
