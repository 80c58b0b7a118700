"""Three `serve` replicas and two Bridges on one PostgreSQL, with the fake Slack and the fake
Discord (both platforms on every replica; Discord's three shards claimed across the replicas):
20 conversations, four of them clarify questions; kill -9 of a replica that holds Discord shards
and of a Bridge in the middle. Every conversation completes, every log row is stored once,
every thread shows one answer (plus its question) and no false "still working" on either
platform, and every click is handled once.

The fake Slack enforces its normal rate limits (per method, per channel's posts, per message's
edits): the three replicas share Slack's budgets through PostgreSQL, so none of them is ever
answered 429.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from bots.slack import ids
from core.store.models import ChatMessage, ChatMessageLog, ClarifyPause, MessageStatus, PauseStatus, Role
from tests.bots.discord.harness import answered, bot_messages, button, buttons, mention, text_of
from tests.bots.slack.harness import SECRET, has_button, texts
from tests.conftest import BACKEND
from tests.fakes.discordfake import FakeDiscord
from tests.fakes.llm_server import ScriptedLLM, ToolCall, text_reply, tool_reply
from tests.fakes.slack import FakeSlack
from tests.fakes.slack_payloads import CHANNEL_ID
from tests.support.replicas import (
    BRIDGE_TOKEN,
    Replica,
    about,
    assistant_turn,
    clarify_question,
    finished_in_slack,
    has_status,
    log_seqs,
    models_file,
    questions_posted,
    replica,
    resolved,
    slack_click,
    slack_mention,
    started_bridge,
    until,
)

pytestmark = pytest.mark.skipif(
    BACKEND != "postgres",
    reason="several replicas share PostgreSQL; on SQLite a second replica is refused by design",
)
LEASE = 6  # RUN_LEASE_SECONDS: runs and Discord shards of a dead replica move within this (shorter
# leases lapse under this load on two cores: runs would change hands while their replica lives)
SHARDS = 3
BUSY_WORDS = "still working"
TIDIED = "The answer is below ↓"
Payload = dict[str, Any]


def _story(word: str) -> str:
    return f"The tale of {word}: " + ("a lantern, a river and a long road home. " * 4).strip()


SLACK_STORIES = [f"slack story {n}" for n in range(8)]
SLACK_QUESTIONS = [f"slack paint {n}" for n in range(2)]
DISCORD_STORIES = [f"discord story {n}" for n in range(8)]
DISCORD_QUESTIONS = [f"discord paint {n}" for n in range(2)]
QUESTION = {"question": "Which colour?", "choices": ["red", "blue"]}


def _script(llm: ScriptedLLM, gate: asyncio.Event) -> None:
    for word in SLACK_STORIES + DISCORD_STORIES:  # held mid-stream until the kills; a
        llm.script(text_reply(_story(word), gate=gate, chunk_size=24, match=about(word)),
                   text_reply(_story(word), chunk_size=24, match=about(word)))  # continuation's
    for word in SLACK_QUESTIONS + DISCORD_QUESTIONS:
        llm.script(tool_reply(ToolCall("clarify", QUESTION), match=about(word, answered=False)),
                   text_reply(f"Blue it is for {word}.", match=about(word, answered=True)))


def _connected_shards(discord: FakeDiscord) -> list[int]:
    return sorted(s.shard[0] for s in discord.gateway.live_sessions())


def _holds_shards(r: Replica) -> bool:
    return bool(re.search(r"connecting shard \d", r.output()))


def _discord_question(discord: FakeDiscord, thread: int) -> Payload | None:
    return next((m for m in bot_messages(discord, thread)
                 if m["embeds"] and m["embeds"][0].get("title") == "❓ Hermes asks"
                 and "Which colour?" in text_of(m) and buttons(m)), None)


def _untidy(slack: FakeSlack, thread: str) -> list[str]:
    """Bot messages of the thread that are neither its answer, its question, nor a stream the
    answer outgrew (closed pointing at the answer below)."""
    bot = [m for m in slack.thread(CHANNEL_ID, thread) if m.bot_id]
    return [texts(m) for m in bot if not has_button(m, ids.REGENERATE)
            and not has_button(m, ids.CLARIFY_CUSTOM) and "answered by" not in texts(m)
            and TIDIED not in texts(m)]


async def _all_posted(count: int) -> bool:
    return await questions_posted() == count


async def _all_placed(words: list[str]) -> list[ChatMessage] | None:
    turns = [await assistant_turn(w) for w in words]
    if any(t is None or t.bridge is None for t in turns):
        return None
    return turns  # type: ignore[return-value]


async def test_three_replicas_two_bridges_both_platforms_kill_9_of_a_replica_and_a_bridge(
    db: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    gate = asyncio.Event()
    _script(llm, gate)
    (tmp_path / "skills").mkdir()
    bridges = [await started_bridge(tmp_path, name) for name in ("a", "b")]
    try:
        async with FakeSlack(bot_token="xoxb-test") as slack, \
                FakeDiscord() as discord, contextlib.AsyncExitStack() as stack:
            discord.gateway.shard_count = SHARDS  # GET /gateway/bot recommends three
            channels = [discord.add_guild(f"Guild {s}", shard=(s, SHARDS)) for s in range(SHARDS)]
            settings = {
                "DATABASE_URL": db, "HERMES_BRIDGE_URL": ",".join(b.url for b in bridges),
                "BRIDGE_TOKEN": BRIDGE_TOKEN, "MODELS_FILE": str(models_file(tmp_path, llm)),
                "SKILLS_DIR": str(tmp_path / "skills"), "RUN_LEASE_SECONDS": str(LEASE),
                "MAX_ACTIVE_RUNS": "20",  # per replica: every turn in flight at the kills
                "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SECRET,
                "SLACK_API_URL": slack.api_url, "DISCORD_TOKEN": discord.token,
                "DISCORD_API_URL": discord.api_base, "DISCORD_GATEWAY_URL": discord.gateway_url,
            }
            three: list[Replica] = list(await asyncio.gather(*(
                stack.enter_async_context(replica(name, tmp_path, settings)) for name in "ABC")))
            http = await stack.enter_async_context(httpx.AsyncClient(timeout=60.0))
            await until(lambda: resolved(_connected_shards(discord) == list(range(SHARDS))),
                        "every Discord shard connected once", *three)

            slack_words = SLACK_STORIES + SLACK_QUESTIONS
            slack_threads = {w: await slack_mention(http, three[n % 3], w) for n, w in enumerate(slack_words)}
            discord_words = DISCORD_STORIES + DISCORD_QUESTIONS
            discord_threads: dict[str, int] = {}
            for n, word in enumerate(discord_words):
                asked = await discord.send_user_message(mention(discord, word),
                                                        channel_id=channels[n % SHARDS])
                discord_threads[word] = int(asked["id"])
            words = slack_words + discord_words
            turns: list[ChatMessage] = await until(lambda: _all_placed(words), "20 turns placed",
                                                   *three)
            await until(lambda: resolved(len(llm.requests) >= len(words)), "every turn streaming",
                        *three)
            for word in SLACK_QUESTIONS:
                await until(lambda: resolved(clarify_question(slack, slack_threads[word])),
                            "the Slack questions shown", *three)
            for word in DISCORD_QUESTIONS:
                await until(lambda: resolved(_discord_question(discord, discord_threads[word])),
                            "the Discord questions shown", *three)
            # ... and where each was posted stored, as the other restart tests wait for: a kill
            # between a question's post and its stored id is test_clarify.py's, on each platform
            asked = len(SLACK_QUESTIONS + DISCORD_QUESTIONS)
            await until(lambda: _all_posted(asked), "the questions' messages stored", *three)

            victim = next(r for r in three if _holds_shards(r))
            survivors = [r for r in three if r is not victim]
            doomed = next(b for b in bridges if b.url == turns[0].bridge)
            victim.process.kill()  # kill -9: no clean-up; its runs' and shards' leases lapse
            await victim.process.wait()
            await doomed.kill()  # kill -9 of the Bridge holding the first conversation

            await until(lambda: resolved(_connected_shards(discord) == list(range(SHARDS))),
                        "the dead replica's shards taken over", *survivors)
            gate.set()
            shown_questions: dict[str, Any] = {}
            for n, word in enumerate(SLACK_QUESTIONS):
                shown_questions[word] = question = clarify_question(slack, slack_threads[word])
                assert question is not None
                await slack_click(http, survivors[n % 2], question, ids.choice_action(1))
            clicks = []
            for word in DISCORD_QUESTIONS:
                shown_questions[word] = asked_here = _discord_question(discord, discord_threads[word])
                assert asked_here is not None
                clicks.append(await discord.click(asked_here["id"],
                                                  button(asked_here, "blue")["custom_id"]))

            for turn in turns:
                await until(lambda: has_status(turn.id, MessageStatus.SUCCESS), "every turn done",
                            *survivors)
            for word in slack_words:
                await until(lambda: resolved(finished_in_slack(slack, slack_threads[word])),
                            "every Slack answer shown", *survivors)
                # a stream the answer outgrew is closed pointing at it afterwards, at progress
                # priority (Slack's budgets): the thread settles to one answer
                await until(lambda: resolved(not _untidy(slack, slack_threads[word])),
                            f"the Slack thread of {word!r} settled", *survivors)
            for word in discord_words:
                expected = f"Blue it is for {word}." if word in DISCORD_QUESTIONS else "The tale of"
                await until(lambda: resolved(answered(discord, discord_threads[word], expected)),
                            "every Discord answer shown", *survivors)
            for word in SLACK_QUESTIONS:  # whichever replica took the click, and drives the run
                await until(lambda: resolved("answered by <@U0ALICE>: blue" in texts(
                    slack.message(CHANNEL_ID, shown_questions[word].ts))), "Slack: who answered", *survivors)
            for word in DISCORD_QUESTIONS:
                await until(lambda: resolved("answered by" in text_of(
                    discord.message(shown_questions[word]["id"]))), "Discord: who answered", *survivors)
    finally:
        for child in bridges:
            await child.kill()

    assert await ChatMessage.filter(role=Role.USER).count() == len(words), "a message twice"
    for turn, word in zip(turns, words, strict=True):
        done = await ChatMessage.get(id=turn.id)
        questions = SLACK_QUESTIONS + DISCORD_QUESTIONS
        assert done.content == (f"Blue it is for {word}." if word in questions else _story(word))
        seqs = await log_seqs(turn.id)
        assert seqs == list(range(1, len(seqs) + 1)), seqs  # every row once, no gap
        assert await ChatMessageLog.filter(message_id=turn.id, kind="done").count() == 1
    assert await ClarifyPause.filter(status=PauseStatus.ANSWERED).count() == 4
    for word, thread in slack_threads.items():
        bot = [m for m in slack.thread(CHANNEL_ID, thread) if m.bot_id]
        assert len(finished_in_slack(slack, thread)) == 1, [texts(m) for m in bot]  # one answer
        asked = [m for m in bot if has_button(m, ids.CLARIFY_CUSTOM) or "answered by" in texts(m)]
        assert len(asked) == (1 if word in SLACK_QUESTIONS else 0), [texts(m) for m in bot]
        assert not _untidy(slack, thread)
        assert not [m for m in bot if BUSY_WORDS in texts(m)]
    for word, thread in discord_threads.items():
        bot = bot_messages(discord, thread)
        assert len(bot) == (2 if word in DISCORD_QUESTIONS else 1), [text_of(m) for m in bot]
    shown = [text_of(m) for c in channels for m in discord.messages_in(c)]
    shown += [text_of(m) for t in discord_threads.values() for m in discord.messages_in(t)]
    assert not [t for t in shown if BUSY_WORDS in t]
    for click in clicks:
        assert len(discord.interaction(click.id).callbacks) == 1  # one replica took it
    limited = [(c.method, c.args.get("channel"), c.args.get("ts"), c.at) for c in slack.calls
               if c.status == 429]
    assert slack.ratelimited == 0, limited  # the replicas share Slack's budgets
