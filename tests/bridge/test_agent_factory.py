"""Model per run (name, endpoint, key reference) and the agent's toolsets, seen by the LLM."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bridge.settings import BridgeSettings
from tests.bridge.harness import RunningBridge, new_id, run_to_end, running_bridge
from tests.fakes.llm_server import ScriptedLLM, text_reply

DEFAULT_KEY = "sk-default-0a1b2c"
TEAM_KEY = "sk-team-3d4e5f"


async def say(bridge: RunningBridge, session_id: str, model: dict[str, Any] | None) -> str:
    body = {"run_id": new_id("run"), "session_id": session_id, "user_message": "hi"}
    events = await run_to_end(bridge, body if model is None else {**body, "model": model})
    assert events[-1].name == "done", events[-1]
    return str(events[-1].data["final_text"])


async def test_each_run_uses_its_model_and_only_its_own_key(
    bridge_settings: BridgeSettings, llm: ScriptedLLM
) -> None:
    settings = replace(bridge_settings, openai_base_url=llm.base_url, model=llm.model,
                       openai_api_key=DEFAULT_KEY, key_envs=("TEAM_KEY",))
    session = new_id("chat")
    async with ScriptedLLM() as other, \
            running_bridge(settings, secrets={"TEAM_KEY": TEAM_KEY}) as bridge:
        llm.script(text_reply("default"), text_reply("renamed"))
        assert await say(bridge, session, None) == "default"
        assert (llm.requests[-1]["model"], llm.authorizations[-1]) == (llm.model,
                                                                       f"Bearer {DEFAULT_KEY}")
        # The same session switches model: its agent is rebuilt for the new one.
        other.script(text_reply("team"), text_reply("keyless"))
        team = {"name": "team-model", "base_url": other.base_url, "api_key_env": "TEAM_KEY"}
        assert await say(bridge, session, team) == "team"
        assert (other.requests[-1]["model"], other.authorizations[-1]) == ("team-model",
                                                                           f"Bearer {TEAM_KEY}")
        # Another endpoint without a named key never receives the default key.
        assert await say(bridge, session, {"name": "m3", "base_url": other.base_url}) == "keyless"
        assert other.requests[-1]["model"] == "m3"
        assert DEFAULT_KEY not in str(other.authorizations[-1])
        # A name alone means the default endpoint, with its key.
        assert await say(bridge, session, {"name": "renamed-model"}) == "renamed"
        assert (llm.requests[-1]["model"], llm.authorizations[-1]) == ("renamed-model",
                                                                       f"Bearer {DEFAULT_KEY}")


def tool_names(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools") or []}


async def test_the_default_toolsets_touch_nothing_on_the_host(
    bridge: RunningBridge, llm: ScriptedLLM
) -> None:
    llm.script(text_reply("hi"))
    await say(bridge, new_id("chat"), {"name": llm.model, "base_url": llm.base_url})
    assert tool_names(llm.requests[-1]) == {"todo", "clarify", "memory"}


async def test_toolsets_are_configurable(bridge_settings: BridgeSettings, llm: ScriptedLLM) -> None:
    async with running_bridge(replace(bridge_settings, toolsets=("todo",))) as bridge:
        llm.script(text_reply("hi"))
        await say(bridge, new_id("chat"), {"name": llm.model, "base_url": llm.base_url})
    assert tool_names(llm.requests[-1]) == {"todo"}
