"""Who a run's model calls are counted against: where it was asked and who asked."""

from __future__ import annotations

from dataclasses import dataclass

from core.store.models import ConversationBinding

OPERATOR = "admin"  # the user of a run an operator started (the admin API, the terminal chat)
API = "api"  # the platform of such a run


@dataclass(frozen=True, slots=True)
class Spender:
    """The platform a run was asked from (`slack`, `discord`, or `api` for an operator), the
    workspace and channel of its conversation (empty when it is bound to none), and who asked
    (a platform user id, or `admin`). `exempt`: no spend limit applies (ADMIN_UNLIMITED_TOKEN)."""

    platform: str = ""
    workspace: str = ""
    channel: str = ""
    user: str = ""
    exempt: bool = False


async def spender_of(session_id: int, author: str | None, exempt: bool = False) -> Spender:
    """The spender of a run in the session asked by `author` (None: an operator)."""
    binding = await ConversationBinding.filter(session_id=session_id).order_by("id").first()
    if binding is None:
        return spender_at("", "", "", author, exempt)
    return spender_at(str(binding.platform), binding.workspace, binding.channel, author, exempt)


def spender_at(platform: str, workspace: str, channel: str, author: str | None,
               exempt: bool = False) -> Spender:
    """The spender of a run asked by `author` (None: an operator) in a session whose first
    binding is that `platform`'s `channel` of `workspace` (all empty: none)."""
    if author is None:
        return Spender(API, workspace, channel, OPERATOR, exempt)
    return Spender(platform, workspace, channel, author, exempt)
