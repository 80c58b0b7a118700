"""`DiscordServices`: everything the adapter's handlers use, built once by `DiscordBot` and
reached from an interaction through its client (discord.py builds the items, not us)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import discord

from bots.discord.catch_up import CatchUp
from bots.discord.conversation import DiscordConversation, SessionFinder
from bots.discord.delivery.first_sign import FirstSign
from bots.discord.delivery.live import Notices, RunFollower
from bots.discord.delivery.outbox import Outbox, Outboxes
from bots.discord.delivery.writer import WRITE_TIMEOUT, Writer
from bots.discord.files import DiscordFiles
from bots.discord.intake import DiscordIntake
from bots.discord.refs import DiscordRefs
from core.conversation.presenting import UsageShown
from core.conversation.vocabulary import DEFAULT_MESSAGES, Bridge, Catalogue, FileReader, Policy, RunPool
from core.edge.ratelimit import RateLimiter


@dataclass(frozen=True, slots=True)
class DiscordServices:
    pool: RunPool
    catalogue: Catalogue
    bridge: Bridge
    allow_list: tuple[str, ...]  # DISCORD_CHANNELS
    refs: DiscordRefs
    sessions: SessionFinder
    intake: DiscordIntake
    conversation: DiscordConversation
    follower: RunFollower
    outboxes: Outboxes  # messages; reactions and renames on budgets of their own
    catch_up: CatchUp  # at each READY, the messages sent while no replica listened
    schedule_timezone: str = "UTC"  # SCHEDULE_TIMEZONE: a new schedule's, unless it names one

    @property
    def outbox(self) -> Outbox:
        """The message writes."""
        return self.outboxes.messages

    @classmethod
    def build(cls, client: discord.Client, pool: RunPool, catalogue: Catalogue, bridge: Bridge,
              limiter: RateLimiter, allow_list: tuple[str, ...], policy: Policy,
              write_timeout: float = WRITE_TIMEOUT, reader: FileReader | None = None,
              context_messages: int = DEFAULT_MESSAGES,
              cached: Callable[[int], object | None] | None = None,
              files: DiscordFiles | None = None,
              usage: UsageShown = UsageShown.OFF,
              schedule_timezone: str = "UTC") -> DiscordServices:
        """`cached`: a channel as this replica's gateway caches have it (`client`'s by default);
        `files`: where attachments are downloaded from (Discord's CDN by default); `usage`:
        SHOW_USAGE."""
        outboxes, writer, refs = Outboxes.on(limiter), Writer(client, write_timeout), DiscordRefs()
        notices, sessions = Notices(writer, outboxes.messages), SessionFinder(client, refs)
        intake, sign = DiscordIntake(policy, notices), FirstSign(writer, outboxes.typing)
        conversation = DiscordConversation(client, pool, sessions, intake, notices, sign,
                                           allow_list, reader or FileReader(), context_messages,
                                           files)
        return cls(pool, catalogue, bridge, allow_list, refs, sessions, intake, conversation,
                   RunFollower(pool, refs, writer, outboxes, client, cached or client.get_channel,
                               usage),
                   outboxes, CatchUp(conversation), schedule_timezone)


def services_of(interaction: discord.Interaction) -> DiscordServices:
    """The services of the client an interaction came to."""
    services = getattr(interaction.client, "services", None)
    if not isinstance(services, DiscordServices):
        raise TypeError("the Discord client has no services: DiscordBot attaches them")
    return services
