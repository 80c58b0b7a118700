"""Channel settings' own rules (pure, then the rows): every value checked and cleaned, a
channel's keys over its workspace's over the service's, and who may act, talk and decide
approvals as a channel's settings change the policy."""

from __future__ import annotations

import pytest

from core.chat import channel_settings as cs
from core.chat.channel_settings import ChannelDefaults
from core.chat.policy import ActionMode, Policy
from core.errors import AdminOnly, NotYours
from core.store.models import ChannelSetting, Platform
from core.text.field_errors import InvalidField


def test_values_are_checked_and_cleaned() -> None:
    assert cs.checked({"system_prompt": "  Be brief.\x00 ", "toolsets": ["todo", " todo", "memory"],
                       "thread_context": 0, "busy_mode": "queue", "model": None}) == {
        "system_prompt": "Be brief.\ufffd", "toolsets": ["todo", "memory"], "thread_context": 0,
        "busy_mode": "queue", "model": None}


@pytest.mark.parametrize(("key", "value"), [
    ("colour", "blue"), ("busy_mode", "later"), ("actions", "all"), ("approvals", "never"),
    ("thread_context", 201), ("thread_context", -1), ("thread_context", True),
    ("thread_context", "5"), ("system_prompt", "   "), ("system_prompt", "x" * 8001),
    ("model", 3), ("toolsets", "todo"), ("toolsets", [""]), ("allowed_users", ["x" * 65]),
    ("allowed_roles", ["R"] * 201),
])
def test_a_bad_value_names_its_key(key: str, value: object) -> None:
    with pytest.raises(InvalidField) as refused:
        cs.checked({key: value})
    assert refused.value.field == key


def test_a_channel_overrides_its_workspace_which_overrides_the_service() -> None:
    defaults = ChannelDefaults(thread_context=7, busy_mode="queue", allowed_users=("U9",))
    got = cs.effective(defaults, {"busy_mode": "steer", "model": "fast"}, {"busy_mode": "refuse"})
    assert (got["busy_mode"], got.sources["busy_mode"]) == ("refuse", "channel")
    assert (got["model"], got.sources["model"]) == ("fast", "workspace")
    assert (got["thread_context"], got.sources["thread_context"]) == (7, "service")
    assert got["allowed_users"] == ["U9"] and got["toolsets"] is None
    assert cs.merged({"a": 1, "b": 1}, {"b": 2}) == {"a": 1, "b": 2}


def test_a_channels_settings_change_who_may_act_talk_and_decide() -> None:
    service = Policy.of("asker", admins=["ADMIN"], allowed_users=["U1", "U2"])
    channel = service.in_channel({"actions": "anyone", "allowed_users": ["U2"],
                                  "approvals": "admins"})
    assert channel.actions is ActionMode.ANYONE and channel.may_act("U3", "U1")
    assert channel.may_talk("U2") and not channel.may_talk("U1") and channel.may_talk("ADMIN")
    with pytest.raises(NotYours):
        channel.check_approve("U1", "U1", "once")  # admins only: not even the asker
    channel.check_approve("ADMIN", "U1", "once")
    with pytest.raises(AdminOnly):
        service.check_approve("U1", "U1", "always")
    assert service.in_channel({}) is service


async def test_rows_save_merge_and_remove(db: str) -> None:
    await cs.save(Platform.SLACK, "T1", "", {"busy_mode": "queue", "model": "fast"}, "U1")
    await cs.save(Platform.SLACK, "T1", "C1", {"busy_mode": "steer"}, "U1")
    await cs.save(Platform.SLACK, "T1", "C1", {"thread_context": 4, "busy_mode": None}, "U2")
    assert await cs.stored(Platform.SLACK, "T1", "C1") == {
        "busy_mode": "queue", "model": "fast", "thread_context": 4}
    assert await cs.stored(Platform.SLACK, "T1", "C2") == {"busy_mode": "queue", "model": "fast"}
    assert await cs.stored(Platform.DISCORD, "T1", "C1") == {}
    assert (await ChannelSetting.get(channel="C1")).updated_by == "U2"
    assert await cs.remove(Platform.SLACK, "T1", "C1") and not await cs.remove(
        Platform.SLACK, "T1", "C1")
