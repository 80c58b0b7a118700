"""views.open / views.update / views.push, with trigger_ids that work once within 3 s."""

from __future__ import annotations

from typing import Any

from .state import SlackState
from .validation import check_view
from .wire import ApiError, Args, Body, require


def _stored_view(
    state: SlackState, view: dict[str, Any], view_id: str, root: str
) -> dict[str, Any]:
    identity = state.identity
    stored = {
        "private_metadata": "", "callback_id": "", "external_id": "", "clear_on_close": False,
        "notify_on_close": False, **view, "id": view_id, "team_id": identity.team_id,
        "state": {"values": {}}, "hash": state.new_id("hash."), "root_view_id": root,
        "previous_view_id": None, "app_id": identity.app_id, "bot_id": identity.bot_id,
    }
    state.views[view_id] = stored
    return stored


def open_view(state: SlackState, args: Args) -> Body:
    require(args, "trigger_id", "view")
    check_view(args["view"], state.limits)
    state.exchange_trigger(args["trigger_id"])
    view_id = state.new_id("V")
    return {"ok": True, "view": _stored_view(state, args["view"], view_id, view_id)}


def update_view(state: SlackState, args: Args) -> Body:
    require(args, "view")
    check_view(args["view"], state.limits)
    current = _find(state, args.get("view_id"), args.get("external_id"))
    if args.get("hash") and args["hash"] != current["hash"]:
        raise ApiError("hash_conflict")
    view = _stored_view(state, args["view"], current["id"], current["root_view_id"])
    return {"ok": True, "view": view}


def _find(state: SlackState, view_id: Any, external_id: Any) -> dict[str, Any]:
    for view in state.views.values():
        if view_id and view["id"] == view_id:
            return view
        if external_id and view["external_id"] == external_id:
            return view
    raise ApiError("not_found")


HANDLERS = {
    "views.open": open_view,
    "views.push": open_view,  # same trigger rules; the fake keeps no view stack
    "views.update": update_view,
}
