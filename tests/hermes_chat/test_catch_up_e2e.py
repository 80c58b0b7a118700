"""A Discord message sent while `serve` was down (killed with SIGKILL, not started again yet):
Discord never sends it to the next gateway session; the next `serve` reads it at its READY and
answers it in its thread (bots/discord/catch_up.py)."""

from __future__ import annotations

from pathlib import Path

from core.store.models import ChatMessage, Role
from tests.bots.discord.harness import answered, mention
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM, text_reply
from tests.support.durable import kill_9, world
from tests.support.replicas import about, replica, resolved, until


async def test_a_discord_message_sent_while_serve_was_down_is_answered_by_the_next_serve(
    db: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    llm.script(text_reply("Paris is the capital.", match=about("capital")),
               text_reply("About 2.1 million people.", match=about("how many")))
    async with world(db, llm, tmp_path) as w, FakeDiscord() as discord:
        settings = {**w.settings, "DISCORD_TOKEN": discord.token,
                    "DISCORD_API_URL": discord.api_base, "DISCORD_GATEWAY_URL": discord.gateway_url}
        async with replica("first", tmp_path, settings) as first:
            await until(lambda: resolved(discord.gateway.live_sessions()), "the gateway session", first)
            asked = await discord.send_user_message(mention(discord, "What is the capital of France?"))
            thread = int(asked["id"])
            await until(lambda: resolved(answered(discord, thread, "Paris is the capital.")),
                        "the first answer", first)
            await kill_9(w, first)
        missed = await discord.send_user_message("how many people live there?", channel_id=thread)
        async with replica("second", tmp_path, settings) as second:
            done = await until(lambda: resolved(answered(discord, thread, "About 2.1 million")),
                               "the message sent while serve was down answered", second)
        assert f"message {missed['id']} in {thread} came while no replica listened" in second.output()
    assert done["message_reference"]["message_id"] == missed["id"]  # type: ignore[index]
    users = await ChatMessage.filter(role=Role.USER).order_by("id")
    assert [u.platform_message_id for u in users] == [asked["id"], missed["id"]]
