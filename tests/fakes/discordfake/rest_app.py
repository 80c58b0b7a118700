"""REST routes of login and setup: the bot user, its application, gateway URL, guilds, commands."""

from __future__ import annotations

from aiohttp import web

from .core import BODY_KEY, Missing, body_of, core_of
from .responses import error, form_error, json_response, not_found
from .validation import check_commands

API = "/api/v10"
COMMANDS = API + "/applications/{application_id}/commands"
GUILD_COMMANDS = API + "/applications/{application_id}/guilds/{guild_id}/commands"


def add_routes(app: web.Application) -> None:
    router = app.router
    router.add_get(API + "/users/@me", bot_user)
    router.add_post(API + "/users/@me/channels", open_dm)
    router.add_get(API + "/users/{user_id}", get_user)
    router.add_get(API + "/oauth2/applications/@me", application)
    router.add_get(API + "/applications/@me", application)
    router.add_get(API + "/gateway", gateway)
    router.add_get(API + "/gateway/bot", gateway)
    router.add_get(API + "/guilds/{guild_id}", get_guild)
    router.add_get(API + "/guilds/{guild_id}/members/{user_id}", get_member)
    for path in (COMMANDS, GUILD_COMMANDS):
        router.add_get(path, list_commands)
        router.add_put(path, overwrite_commands)
        router.add_post(path, upsert_command)


async def bot_user(request: web.Request) -> web.Response:
    user = core_of(request).world.bot
    return json_response(dict(user, verified=True, mfa_enabled=False, locale="en-US", email=None))


async def get_user(request: web.Request) -> web.Response:
    user = core_of(request).world.users.get(request.match_info["user_id"])
    return json_response(user) if user else not_found(10013, "User")


async def open_dm(request: web.Request) -> web.Response:
    world = core_of(request).world
    user = world.users.get(str(body_of(request).get("recipient_id")))
    if user is None:
        return not_found(10013, "User")
    return json_response(world.dm_channel(user))


async def application(request: web.Request) -> web.Response:
    world = core_of(request).world
    owner = next(u for u in world.users.values() if not u["bot"])
    return json_response({
        "id": world.application_id,
        "name": world.bot["username"],
        "description": "",
        "icon": None,
        "bot_public": False,
        "bot_require_code_grant": False,
        "verify_key": "0" * 64,
        "owner": owner,
        "team": None,
        "flags": (1 << 19) | (1 << 15) | (1 << 23),
        "bot": world.bot,
        "interactions_endpoint_url": None,
        "rpc_origins": [],
        "tags": [],
    })


async def gateway(request: web.Request) -> web.Response:
    core = core_of(request)
    limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
    return json_response({"url": core.gateway.url, "shards": core.gateway.shard_count, "session_start_limit": limit})


def _guild_id(request: web.Request) -> str:
    guild_id = request.match_info["guild_id"]
    if guild_id not in core_of(request).world.guilds:
        raise Missing(not_found(10004, "Guild"))
    return guild_id


async def get_guild(request: web.Request) -> web.Response:
    guild = core_of(request).world.guild_payload(_guild_id(request))
    listed = ("channels", "threads", "members")
    return json_response({k: v for k, v in guild.items() if k not in listed})


async def get_member(request: web.Request) -> web.Response:
    member = core_of(request).world.member(_guild_id(request), request.match_info["user_id"])
    return json_response(member) if member else not_found(10007, "Member")


def _scope(request: web.Request) -> str | None:
    core = core_of(request)
    if request.match_info["application_id"] != core.world.application_id:
        raise Missing(error(403, 50001, "Missing Access"))
    return _guild_id(request) if "guild_id" in request.match_info else None


async def list_commands(request: web.Request) -> web.Response:
    return json_response(core_of(request).world.commands.get(_scope(request), []))


async def overwrite_commands(request: web.Request) -> web.Response:
    core = core_of(request)
    scope = _scope(request)
    bodies = request.get(BODY_KEY) or []
    if len(bodies) > core.limits.commands:
        message = f"Maximum number of application commands reached ({core.limits.commands})"
        return error(400, 30032, message)
    errors = check_commands(bodies, core.limits)
    if errors:
        return form_error(errors)
    return json_response(core.world.overwrite_commands(scope, bodies))


async def upsert_command(request: web.Request) -> web.Response:
    core = core_of(request)
    scope = _scope(request)
    body = body_of(request)
    errors = check_commands([body], core.limits)
    if errors:
        return form_error(errors)
    others = [c for c in core.world.commands.get(scope, []) if c["name"] != body.get("name")]
    commands = core.world.overwrite_commands(scope, [*others, body])
    return json_response(commands[-1], status=201)
