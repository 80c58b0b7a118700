"""`GET/PUT/DELETE /api/channels/{platform}/{workspace}/{channel}`: thin handlers over core
(core.conversation.channels); channel `*` names the whole workspace's (guild's) settings."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete, get, post, put
from litestar.di import NamedDependency
from litestar.params import JSONBody, Parameter

from admin.channels.schemas import ChannelIn, ChannelOut, channel_out
from admin.openapi import errors
from admin.services import AdminServices
from core.conversation import channels

Services = NamedDependency[AdminServices]
PlatformName = Annotated[str, Parameter(description="slack or discord")]
Workspace = Annotated[str, Parameter(description="the Slack team or Discord guild id")]
Channel = Annotated[str, Parameter(description="the channel id, or `*`: the workspace's own "
                                               "settings, the default of its channels")]
Apply = Annotated[bool, Parameter(description="the conversations already there go back to "
                                              "the settings that remain, too")]
PATH = "/{platform:str}/{workspace:str}/{channel:str}"
NO_PLATFORM = "No such platform (slack or discord)"
BY = "admin"  # who set them, as the settings show it


class ChannelController(Controller):
    path = "/api/channels"
    tags = ("channels",)

    @get(PATH, summary="A channel's (or workspace's) settings and what they come to",
         responses=errors(404, meanings={404: NO_PLATFORM}))
    async def read(self, services: Services, platform: PlatformName, workspace: Workspace,
                   channel: Channel) -> ChannelOut:
        place = channels.Place.of(platform, workspace, channel)
        return channel_out(await channels.read(services.runtime.channel_defaults, place))

    @put(PATH, summary="Set (null: remove) settings of a channel or workspace",
         responses=errors(404, 413, meanings={404: NO_PLATFORM}))
    async def change(self, services: Services, platform: PlatformName, workspace: Workspace,
                     channel: Channel, data: JSONBody[ChannelIn]) -> ChannelOut:
        place = channels.Place.of(platform, workspace, channel)
        view = await channels.change(services.runtime.channel_defaults, services.catalogue,
                                     place, data.changes(), BY, apply=data.apply)
        return channel_out(view)

    @post(PATH + "/apply", status_code=200,
          summary="Give the conversations already there the settings set now",
          responses=errors(404, meanings={404: NO_PLATFORM}))
    async def apply(self, services: Services, platform: PlatformName, workspace: Workspace,
                    channel: Channel) -> ChannelOut:
        place = channels.Place.of(platform, workspace, channel)
        return channel_out(await channels.apply(services.runtime.channel_defaults, place))

    @delete(PATH, status_code=200,
            summary="Remove every setting and spend limit of a channel or workspace",
            responses=errors(404, meanings={404: "No such platform, or nothing was set there"}))
    async def forget(self, services: Services, platform: PlatformName, workspace: Workspace,
                     channel: Channel, apply: Apply = False) -> ChannelOut:
        place = channels.Place.of(platform, workspace, channel)
        return channel_out(await channels.forget(services.runtime.channel_defaults, place,
                                                 apply))
