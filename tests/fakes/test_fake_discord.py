"""The fake Discord against the real discord.py 2.7: login, messages, threads, limits,
persistent views, modals, app commands, RESUME with replay, faults."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator

import discord
import httpx
import pytest
from discord import app_commands

from tests.fakes import discord_payloads as dp
from tests.fakes.discordfake import FakeDiscord, Limits, ManualClock
from tests.fakes.discordfake.validation import check_message, check_modal
from tests.fakes.discordfake.world import NONCE_SECONDS

POST_MESSAGE = "POST /channels/{channel_id}/messages"
EDIT_MESSAGE = "PATCH /channels/{channel_id}/messages/{message_id}"
CALLBACK = "POST /interactions/{webhook_id}/{webhook_token}/callback"
EDIT_ORIGINAL = "PATCH /webhooks/{webhook_id}/{webhook_token}/messages/@original"


def intents(*, message_content: bool = True) -> discord.Intents:
    chosen = discord.Intents.default()
    chosen.message_content = message_content
    return chosen


def make_client(**options: object) -> discord.Client:
    # guild_ready_timeout: discord.py waits this long after the last GUILD_CREATE before READY.
    chosen = options.pop("intents", intents())
    return discord.Client(intents=chosen, guild_ready_timeout=0.05, **options)


@pytest.fixture(autouse=True)
async def no_leaked_tasks() -> AsyncIterator[None]:
    before = asyncio.all_tasks()
    yield
    leaked = {t for t in asyncio.all_tasks() - before if t is not asyncio.current_task()}
    if leaked:
        await asyncio.wait(leaked, timeout=2.0)
    assert not [t for t in leaked if not t.done()]


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server, server.patch_discord():
        yield server


async def test_patch_discord_points_discord_py_at_the_fake_and_restores() -> None:
    original = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    async with FakeDiscord() as server:
        with server.patch_discord():
            assert discord.http.Route.BASE == server.api_base
            assert str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY) == server.gateway_url
    assert (discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY) == original


async def test_client_logs_in_and_becomes_ready(fake: FakeDiscord) -> None:
    client = make_client()
    async with fake.connected(client):
        assert client.user is not None and client.user.id == fake.bot_id
        assert client.application_id == fake.application_id
        guild = client.get_guild(fake.guild_id)
        assert guild is not None and guild.get_channel(fake.channel_id) is not None
        # Other members are cached only with the members intent.
        assert guild.me is not None and guild.member_count == 2
    assert [c.route for c in fake.calls[:2]] == ["GET /users/@me", "GET /oauth2/applications/@me"]
    query = fake.gateway.connections[0].query
    assert query == {"v": "10", "encoding": "json", "compress": "zlib-stream"}
    identify = fake.gateway.received(2)[0].d
    assert identify["token"] == fake.token and identify["intents"] & (1 << 15)
    ready = fake.gateway.sent("READY")[0].d
    assert ready["guilds"] == [{"id": str(fake.guild_id), "unavailable": True}]
    assert ready["resume_gateway_url"] == fake.gateway_url
    assert fake.gateway.received(1), "discord.py heartbeats right after HELLO"


async def test_wrong_token_is_a_login_failure(fake: FakeDiscord) -> None:
    client = make_client()
    with pytest.raises(discord.LoginFailure):
        await client.login("not-the-token")
    await client.close()
    assert fake.rejected[0].status == 401


async def test_privileged_intents_not_enabled_close_the_gateway_with_4014() -> None:
    async with FakeDiscord(privileged_intents=False) as fake, fake.patch_discord():
        with pytest.raises(discord.PrivilegedIntentsRequired):
            async with fake.connected(make_client()):
                pass
        assert len(fake.gateway.received(2)) == 1 and fake.gateway.session is None


async def test_mention_is_received_and_answered_with_reply_and_file(fake: FakeDiscord) -> None:
    client = make_client()
    seen: list[discord.Message] = []

    @client.event
    async def on_message(message: discord.Message) -> None:
        if message.author == client.user:
            return
        seen.append(message)
        await message.reply(f"hello {message.author.name}")
        file = discord.File(io.BytesIO(b"report"), filename="report.txt")
        await message.channel.send(embed=discord.Embed(description="details"), file=file)

    async with fake.connected(client):
        sent = await fake.send_user_message(f"<@{fake.bot_id}> hi there")
        await fake.wait_for_call(POST_MESSAGE, count=2)

    assert seen[0].content == f"<@{fake.bot_id}> hi there" and client.user in seen[0].mentions
    user_msg, reply, with_file = fake.messages_in(fake.channel_id)
    assert user_msg["id"] == sent["id"]
    assert reply["content"] == "hello alice" and reply["type"] == 19
    assert reply["message_reference"]["message_id"] == sent["id"]
    assert with_file["embeds"][0]["description"] == "details"
    attachment = with_file["attachments"][0]
    assert attachment["filename"] == "report.txt" and fake.attachment(attachment["id"]) == b"report"
    assert fake.calls_to(POST_MESSAGE)[1].files[0].data == b"report"
    assert fake.rejected == []


async def test_without_content_intent_only_mentions_carry_content(fake: FakeDiscord) -> None:
    client = make_client(intents=intents(message_content=False))
    contents: list[str] = []
    got_two = asyncio.Event()

    @client.event
    async def on_message(message: discord.Message) -> None:
        contents.append(message.content)
        if len(contents) == 2:
            got_two.set()

    async with fake.connected(client):
        await fake.send_user_message("not for the bot")
        await fake.send_user_message(f"<@{fake.bot_id}> for the bot")
        await asyncio.wait_for(got_two.wait(), 5)
    assert contents == ["", f"<@{fake.bot_id}> for the bot"]


async def test_direct_message_is_received_and_answered(fake: FakeDiscord) -> None:
    client = make_client(intents=intents(message_content=False))
    seen: list[discord.Message] = []

    @client.event
    async def on_message(message: discord.Message) -> None:
        if message.author != client.user:
            seen.append(message)
            await message.channel.send("hi in private")

    dm = fake.dm_channel_id()
    async with fake.connected(client):
        await fake.send_user_message("a secret", channel_id=dm)
        await fake.wait_for_call(POST_MESSAGE)
    assert seen[0].guild is None and seen[0].content == "a secret"  # DMs carry content anyway
    assert [m["content"] for m in fake.messages_in(dm)] == ["a secret", "hi in private"]


async def test_user_edit_reaches_on_message_edit(fake: FakeDiscord) -> None:
    client = make_client()
    edits: list[tuple[str, str]] = []
    cached, edited = asyncio.Event(), asyncio.Event()

    @client.event
    async def on_message(message: discord.Message) -> None:
        cached.set()

    @client.event
    async def on_message_edit(before: discord.Message, after: discord.Message) -> None:
        edits.append((before.content, after.content))
        edited.set()

    async with fake.connected(client):
        sent = await fake.send_user_message("first")
        await asyncio.wait_for(cached.wait(), 5)
        await fake.edit_user_message(sent["id"], "second")
        await asyncio.wait_for(edited.wait(), 5)
    assert edits == [("first", "second")]


async def test_raw_edit_of_an_uncached_message_reaches_on_raw_message_edit(
    fake: FakeDiscord,
) -> None:
    client = make_client()
    raw_edits: list[discord.RawMessageUpdateEvent] = []
    edited = asyncio.Event()

    @client.event
    async def on_raw_message_edit(payload: discord.RawMessageUpdateEvent) -> None:
        raw_edits.append(payload)
        edited.set()

    async with fake.connected(client):
        old = dp.make_message(
            channel_id=fake.channel_id, author=fake.user, content="edited long ago",
            guild_id=fake.guild_id, edited_timestamp=dp.iso_time(),
        )
        await fake.dispatch("MESSAGE_UPDATE", old)
        await asyncio.wait_for(edited.wait(), 5)
    assert raw_edits[0].message_id == int(old["id"]) and raw_edits[0].cached_message is None
    assert raw_edits[0].message.content == "edited long ago"


async def test_message_create_thread_opens_a_thread_on_that_message(fake: FakeDiscord) -> None:
    client = make_client()
    created = asyncio.Event()

    @client.event
    async def on_message(message: discord.Message) -> None:
        if message.author != client.user:
            thread = await message.create_thread(name="Hermes: hi")
            await thread.send("working on it")

    @client.event
    async def on_thread_create(thread: discord.Thread) -> None:
        created.set()

    async with fake.connected(client):
        sent = await fake.send_user_message(f"<@{fake.bot_id}> hi")
        await fake.wait_for_call(POST_MESSAGE)
        await asyncio.wait_for(created.wait(), 5)
        thread = client.get_channel(int(sent["id"]))
        assert isinstance(thread, discord.Thread) and thread.parent_id == fake.channel_id
        await fake.send_user_message("follow-up in thread", channel_id=sent["id"])

    (thread_payload,) = fake.threads_of(fake.channel_id)
    assert thread_payload["id"] == sent["id"] and thread_payload["name"] == "Hermes: hi"
    in_thread = [m["content"] for m in fake.messages_in(sent["id"])]
    assert in_thread == ["working on it", "follow-up in thread"]
    assert fake.message(sent["id"])["thread"]["id"] == sent["id"]


async def test_seventh_write_in_window_gets_429_that_discord_py_waits_out() -> None:
    clock = ManualClock()
    limits = Limits(rate_limit_headers=False, retry_after=0.05)
    async with FakeDiscord(clock=clock, limits=limits) as fake, fake.patch_discord():
        client = make_client()
        async with fake.connected(client):
            channel = client.get_channel(fake.channel_id)
            assert isinstance(channel, discord.TextChannel)
            message = await channel.send("v0")
            clock.advance(5.0)  # a fresh window for the edits

            async def edit_six_times() -> None:
                for version in range(1, 7):
                    await message.edit(content=f"v{version}")

            editing = asyncio.create_task(edit_six_times())
            await fake.wait_until(lambda: fake.rate_limited, what="a 429")
            clock.advance(5.0)
            await asyncio.wait_for(editing, 5)

    assert len(fake.rate_limited) >= 1
    limited = fake.rate_limited[0]
    assert limited.route == EDIT_MESSAGE and limited.response == {
        "message": "You are being rate limited.", "retry_after": 0.05, "global": False}
    assert len([c for c in fake.calls_to(EDIT_MESSAGE) if c.status == 200]) == 6
    assert fake.message(message.id)["content"] == "v6"


async def test_with_rate_limit_headers_discord_py_throttles_itself() -> None:
    async with FakeDiscord(limits=Limits(message_window=0.3)) as fake, fake.patch_discord():
        client = make_client()
        async with fake.connected(client):
            channel = client.get_channel(fake.channel_id)
            assert isinstance(channel, discord.TextChannel)
            for n in range(7):
                await channel.send(f"m{n}")
    posts = fake.calls_to(POST_MESSAGE)
    assert fake.rate_limited == [] and len(posts) == 7
    assert posts[5].at - posts[0].at >= 0.3


async def test_over_length_content_and_embed_are_400s(fake: FakeDiscord) -> None:
    client = make_client()
    async with fake.connected(client):
        channel = client.get_channel(fake.channel_id)
        assert isinstance(channel, discord.TextChannel)
        with pytest.raises(discord.HTTPException) as too_long:
            await channel.send("x" * 2001)
        with pytest.raises(discord.HTTPException) as big_embed:
            await channel.send(embed=discord.Embed(description="y" * 4097))
        await channel.send("x" * 2000)
    assert (too_long.value.status, too_long.value.code) == (400, 50035)
    assert "In content: Must be 2000 or fewer in length." in too_long.value.text
    assert "embeds.0.description" in big_embed.value.text
    assert len(fake.rejected) == 2 and len(fake.messages_in(fake.channel_id)) == 1


def row(*components: dict) -> dict:
    return {"type": 1, "components": list(components)}


def button(custom_id: str, label: str = "ok") -> dict:
    return {"type": 2, "style": 1, "label": label, "custom_id": custom_id}


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"content": "x" * 2001}, "content"),
        ({"embeds": [{"description": "d" * 4097}]}, "embeds.0.description"),
        ({"embeds": [{"description": "d" * 4000}, {"description": "d" * 2001}]}, "embeds"),
        ({"components": [row(button("a", label="l" * 81))]}, "components.0.components.0.label"),
        ({"components": [row(button("c" * 101))]}, "components.0.components.0.custom_id"),
        ({"components": [row(button(str(i))) for i in range(6)]}, "components"),
        ({"components": [row(*(button(str(i)) for i in range(6)))]}, "components.0.components"),
        ({"components": [row(button("x"), button("x"))]}, "components.0.components.1.custom_id"),
    ],
)
def test_message_limits(body: dict, path: str) -> None:
    assert path in check_message(body, Limits())


def test_limits_are_inclusive() -> None:
    at_limit = {"content": "x" * 2000, "embeds": [{"description": "d" * 4096}]}
    assert check_message(at_limit, Limits()) == {}


def test_modal_limits() -> None:
    text_input = row({"type": 4, "custom_id": "a", "label": "l", "style": 1})

    def modal(title: str, rows: int) -> dict:
        return {"custom_id": "m", "title": title, "components": [text_input] * rows}

    assert check_modal(modal("t", 1), Limits()) == {}
    assert "data.title" in check_modal(modal("t" * 46, 1), Limits())
    assert "data.components" in check_modal(modal("t", 6), Limits())


class AnswerModal(discord.ui.Modal, title="Custom answer"):
    answer = discord.ui.TextInput(label="Your answer", custom_id="answer")

    def __init__(self, received: asyncio.Future[str]) -> None:
        super().__init__(custom_id="hermes:custom-answer")
        self.received = received

    async def on_submit(self, interaction: discord.Interaction) -> None:
        self.received.set_result(self.answer.value)
        await interaction.response.send_message(f"got {self.answer.value}", ephemeral=True)


class PersistentControls(discord.ui.View):
    def __init__(self, modal_result: asyncio.Future[str]) -> None:
        super().__init__(timeout=None)
        self.modal_result = modal_result

    @discord.ui.button(label="Regenerate", custom_id="hermes:regen")
    async def regenerate(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await interaction.response.send_message("regenerating", ephemeral=True)

    @discord.ui.button(label="Show thinking", custom_id="hermes:thinking")
    async def thinking(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await interaction.response.edit_message(content="thinking shown")

    @discord.ui.button(label="Custom answer…", custom_id="hermes:custom")
    async def custom(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await interaction.response.send_modal(AnswerModal(self.modal_result))


class ViewClient(discord.Client):
    def __init__(self) -> None:
        super().__init__(intents=intents(), guild_ready_timeout=0.05)
        self.modal_result: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def setup_hook(self) -> None:
        self.add_view(PersistentControls(self.modal_result))


def bot_message_with_buttons(fake: FakeDiscord) -> dict:
    """A message a previous run of the bot left behind, with persistent buttons."""
    buttons = row(
        button("hermes:regen", "Regenerate"),
        button("hermes:thinking", "Show thinking"),
        button("hermes:custom", "Custom answer…"),
    )
    message = dp.make_message(
        id=fake.world.ids.next(), channel_id=fake.channel_id, author=fake.bot,
        content="the answer", components=[buttons],
    )
    return fake.world.store_message(message)


async def test_persistent_view_handles_clicks_after_a_restart(fake: FakeDiscord) -> None:
    old = bot_message_with_buttons(fake)
    client = ViewClient()
    async with fake.connected(client):
        regen = await fake.click(old["id"], "hermes:regen")
        reply = await fake.wait_for_response(regen)
        flip = await fake.click(old["id"], "hermes:thinking")
        update = await fake.wait_for_response(flip)
        await fake.wait_until(lambda: fake.gateway.sent("MESSAGE_UPDATE"))

    assert reply["type"] == 4 and reply["data"]["content"] == "regenerating"
    assert reply["data"]["flags"] == 64
    ephemeral = fake.message(regen.original_message_id)
    created = [f.d["id"] for f in fake.gateway.sent("MESSAGE_CREATE")]
    assert ephemeral["flags"] & 64 and ephemeral["id"] not in created
    assert update["type"] == 7 and fake.message(old["id"])["content"] == "thinking shown"
    assert fake.calls_to(CALLBACK)[0].query == {"with_response": "1"}


async def test_modal_opens_and_its_submission_runs_on_submit(fake: FakeDiscord) -> None:
    old = bot_message_with_buttons(fake)
    client = ViewClient()
    async with fake.connected(client):
        opened = await fake.click(old["id"], "hermes:custom")
        await fake.wait_for_response(opened)
        assert opened.modal is not None and opened.modal["title"] == "Custom answer"
        submitted = await fake.submit_modal(opened, {"answer": "blue"})
        answer = await asyncio.wait_for(client.modal_result, 5)
        reply = await fake.wait_for_response(submitted)
    assert answer == "blue"
    assert reply["data"]["content"] == "got blue"


async def test_late_interaction_answer_is_unknown_interaction() -> None:
    clock = ManualClock()
    async with FakeDiscord(clock=clock) as fake, fake.patch_discord():
        old = bot_message_with_buttons(fake)
        client = make_client()
        proceed = asyncio.Event()
        failures: list[discord.HTTPException] = []

        @client.event
        async def on_interaction(interaction: discord.Interaction) -> None:
            await proceed.wait()
            try:
                await interaction.response.send_message("too late")
            except discord.NotFound as exc:
                failures.append(exc)

        async with fake.connected(client):
            await fake.click(old["id"], "hermes:regen")
            clock.advance(3.5)
            proceed.set()
            await fake.wait_for_call(CALLBACK)
            await fake.wait_until(lambda: failures)
    assert failures[0].code == 10062


def hermes_tree(client: discord.Client, seen: dict[str, object]) -> app_commands.CommandTree:
    tree = app_commands.CommandTree(client)
    hermes = app_commands.Group(name="hermes", description="Talk to Hermes")

    @hermes.command(name="status", description="Show the session status")
    async def status(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("all good", ephemeral=True)

    @hermes.command(name="model", description="Pick the model")
    async def model(interaction: discord.Interaction, name: str) -> None:
        seen["model"] = name
        await interaction.response.send_message(f"model set to {name}")

    @model.autocomplete("name")
    async def model_names(
        interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        names = ("gpt-x", "gpt-y", "claude")
        return [app_commands.Choice(name=n, value=n) for n in names if n.startswith(current)]

    @hermes.command(name="export", description="Export the session")
    async def export(interaction: discord.Interaction) -> None:
        await interaction.response.defer(thinking=True)
        log = discord.File(io.BytesIO(b"# log"), filename="log.md")
        await interaction.followup.send("here it is", file=log)
        await interaction.edit_original_response(content="export done")

    tree.add_command(hermes)
    return tree


async def test_app_commands_sync_invoke_autocomplete_and_follow_up(fake: FakeDiscord) -> None:
    client = make_client()
    seen: dict[str, object] = {}
    tree = hermes_tree(client, seen)
    async with fake.connected(client):
        synced = await tree.sync()
        status = await fake.run_command("hermes", "status")
        status_reply = await fake.wait_for_response(status)
        complete = await fake.autocomplete(
            "hermes", "model", focused="name", options={"name": "gpt"}
        )
        choices = await fake.wait_for_response(complete)
        model = await fake.run_command("hermes", "model", options={"name": "claude"})
        await fake.wait_for_response(model)
        export = await fake.run_command("hermes", "export")
        await fake.wait_for_call(EDIT_ORIGINAL)

    assert [c.name for c in synced] == ["hermes"]
    assert {o["name"] for o in fake.commands()[0]["options"]} == {"status", "model", "export"}
    assert status_reply == {"type": 4, "data": {"tts": False, "content": "all good", "flags": 64}}
    assert choices == {"type": 8, "data": {"choices": [{"name": "gpt-x", "value": "gpt-x"},
                                                        {"name": "gpt-y", "value": "gpt-y"}]}}
    assert seen["model"] == "claude"
    assert export.response == {"type": 5}
    (followup_id,) = export.followup_ids
    assert fake.message(followup_id)["attachments"][0]["filename"] == "log.md"
    assert fake.message(export.original_message_id)["content"] == "export done"
    assert fake.rejected == []


async def test_resume_replays_missed_events_and_can_redeliver(fake: FakeDiscord) -> None:
    client = make_client()
    received: list[str] = []
    resumed = asyncio.Event()

    @client.event
    async def on_message(message: discord.Message) -> None:
        received.append(message.content)

    @client.event
    async def on_resumed() -> None:
        resumed.set()

    async with fake.connected(client):
        await fake.send_user_message("before")
        await fake.wait_until(lambda: received == ["before"])
        await fake.disconnect(redeliver=1, hold=True)
        await fake.send_user_message("while away")
        fake.release_gateway()
        await asyncio.wait_for(resumed.wait(), 5)
        await fake.wait_until(lambda: len(received) == 3)

    # "before" arrives twice: deduplicating redelivered events is the bot's job.
    assert received == ["before", "before", "while away"]
    (resume,) = fake.gateway.received(6)
    assert resume.d["session_id"] == fake.gateway.session.id
    assert len(fake.gateway.received(2)) == 1, "resumed, not re-identified"
    assert len(fake.gateway.connections) == 2


async def test_reconnect_opcode_leads_to_resume(fake: FakeDiscord) -> None:
    client = make_client()
    resumed = asyncio.Event()

    @client.event
    async def on_resumed() -> None:
        resumed.set()

    async with fake.connected(client):
        await fake.request_reconnect()
        await asyncio.wait_for(resumed.wait(), 5)
    assert len(fake.gateway.received(6)) == 1


async def test_faults_hang_and_fail_routes(fake: FakeDiscord) -> None:
    client = make_client()
    async with fake.connected(client):
        channel = client.get_channel(fake.channel_id)
        assert isinstance(channel, discord.TextChannel)
        hang = fake.hang_next(POST_MESSAGE)
        sending = asyncio.create_task(channel.send("held"))
        await fake.wait_until(lambda: hang.arrived == 1)
        assert not sending.done() and fake.messages_in(fake.channel_id) == []
        hang.release()
        await asyncio.wait_for(sending, 5)
        fake.fail_next(POST_MESSAGE, status=503)
        with pytest.raises(discord.DiscordServerError):
            await channel.send("fails")
        with pytest.raises(discord.NotFound):
            await client.http.request(discord.http.Route("GET", "/no/such/route"))
    assert [m["content"] for m in fake.messages_in(fake.channel_id)] == ["held"]
    assert fake.calls[-1].route == "GET /no/such/route" and fake.calls[-1].status == 404


async def test_an_outage_holds_for_its_window_of_the_clock_and_says_who_met_it() -> None:
    clock = ManualClock()
    async with FakeDiscord(clock=clock) as fake, fake.patch_discord():
        client = make_client()
        async with fake.connected(client):
            channel = client.get_channel(fake.channel_id)
            assert isinstance(channel, discord.TextChannel)
            down = fake.outage(60.0, POST_MESSAGE)
            with pytest.raises(discord.DiscordServerError):
                await channel.send("lost")
            clock.advance(60.0)
            await channel.send("through")
            hung = fake.outage(30.0, POST_MESSAGE, hang=True)
            sending = asyncio.create_task(channel.send("held"))
            await fake.wait_until(lambda: hung.met == 1)
            assert not sending.done()
            clock.advance(30.0)  # the outage ends: the held write answers 503, not applied
            with pytest.raises(discord.DiscordServerError):
                await asyncio.wait_for(sending, 5)
            held = fake.hang_next(POST_MESSAGE)
            sending = asyncio.create_task(channel.send("held, then Discord is down"))
            await fake.wait_until(lambda: held.arrived == 1)
            late = fake.outage(60.0)
            held.release()  # let go during an outage: it meets the outage
            with pytest.raises(discord.DiscordServerError):
                await asyncio.wait_for(sending, 5)
            clock.advance(1.0)
            with pytest.raises(discord.DiscordServerError):
                await channel.send("a second later")
        assert down.met == 1
        assert late.met == 2 and late.met_at(POST_MESSAGE) == [1090.0, 1091.0]
        assert late.met_at("GET *") == []
        assert [m["content"] for m in fake.messages_in(fake.channel_id)] == ["through"]


async def test_shards_get_only_their_guilds_and_dms_go_to_shard_zero(fake: FakeDiscord) -> None:
    fake.gateway.shard_count = 2
    on_one = fake.add_guild("Second", shard=(1, 2))
    on_zero = fake.add_guild("Third", shard=(0, 2))
    seen: dict[int, list[str]] = {0: [], 1: []}
    clients = {s: make_client(shard_id=s, shard_count=2) for s in (0, 1)}
    for shard, client in clients.items():
        client.event(_recorder(seen[shard]))

    async with fake.connected(clients[0]), fake.connected(clients[1]):
        assert (await clients[0].http.get_bot_gateway())[0] == 2  # the recommended count
        for channel in (on_one, on_zero, fake.dm_channel_id()):
            await fake.send_user_message(f"to {channel}", channel_id=channel)
        await fake.wait_until(lambda: len(seen[0]) + len(seen[1]) == 3)
        default_shard = fake.gateway.shard_of(fake.guild_id, 2)
        guilds = {s: {str(g.id) for g in c.guilds} for s, c in clients.items()}

    assert seen == {0: [f"to {on_zero}", f"to {fake.dm_channel_id()}"], 1: [f"to {on_one}"]}
    assert fake.channel(on_one)["guild_id"] in guilds[1]
    assert fake.channel(on_zero)["guild_id"] in guilds[0]
    assert str(fake.guild_id) in guilds[default_shard] and not guilds[0] & guilds[1]
    ready = {tuple(f.d["shard"]) for f in fake.gateway.sent("READY")}
    assert ready == {(0, 2), (1, 2)} and len(fake.gateway.live_sessions()) == 0


async def test_two_sessions_of_one_shard_both_get_its_events(fake: FakeDiscord) -> None:
    """As on Discord: what the replicas' claims must prevent, the fake makes visible."""
    seen: list[str] = []
    first, second = make_client(shard_id=0, shard_count=1), make_client(shard_id=0, shard_count=1)
    first.event(_recorder(seen))
    second.event(_recorder(seen))
    async with fake.connected(first), fake.connected(second):
        await fake.send_user_message("once")
        await fake.wait_until(lambda: len(seen) == 2)
        assert len(fake.gateway.live_sessions()) == 2


@pytest.mark.parametrize(("shard", "code"), [((2, 2), 4010), ((0, 1), 4011)])
async def test_a_bad_or_missing_shard_closes_the_gateway(
    fake: FakeDiscord, shard: tuple[int, int], code: int
) -> None:
    fake.gateway.required_shards = 2
    client = make_client(shard_id=shard[0], shard_count=shard[1])
    with pytest.raises(discord.ConnectionClosed) as closed:
        async with fake.connected(client):
            pass
    assert closed.value.code == code and fake.gateway.session is None


def _recorder(into: list[str]) -> object:
    async def on_message(message: discord.Message) -> None:
        into.append(message.content)

    return on_message


async def test_reactions_are_added_and_removed_per_message(fake: FakeDiscord) -> None:
    client = make_client()
    async with fake.connected(client):
        sent = await fake.send_user_message("react to me")
        message = client.get_partial_messageable(fake.channel_id).get_partial_message(int(sent["id"]))
        await message.add_reaction("👀")
        await message.add_reaction("✅")
        await message.remove_reaction("👀", discord.Object(fake.bot_id))
        await message.remove_reaction("👀", discord.Object(fake.bot_id))  # gone already: still 204
        with pytest.raises(discord.NotFound):
            await client.get_partial_messageable(fake.channel_id).get_partial_message(1).add_reaction("✅")
    assert fake.reactions_on(sent["id"]) == ["✅"]
    adds = fake.calls_to("PUT /channels/{channel_id}/messages/{message_id}/reactions/{emoji}/@me")
    assert [c.params["emoji"] for c in adds] == ["👀", "✅", "✅"]


async def test_a_thread_is_renamed_within_discords_100_characters(fake: FakeDiscord) -> None:
    client = make_client()
    async with fake.connected(client):
        sent = await fake.send_user_message("name me")
        channel = client.get_channel(fake.channel_id)
        assert isinstance(channel, discord.TextChannel)
        thread = await channel.get_partial_message(int(sent["id"])).create_thread(name="first name")
        renamed = await thread.edit(name="a better name")
        with pytest.raises(discord.HTTPException) as too_long:
            await thread.edit(name="x" * 101)
    assert renamed.name == "a better name" and fake.channel(thread.id)["name"] == "a better name"
    assert too_long.value.status == 400


async def test_forum_posts_by_people_and_by_the_bot(fake: FakeDiscord) -> None:
    forum_id = fake.add_forum_channel("help")
    client = make_client()
    seen: list[discord.Message] = []
    starter_seen = asyncio.Event()

    @client.event
    async def on_message(message: discord.Message) -> None:
        seen.append(message)
        starter_seen.set()

    async with fake.connected(client):
        forum = client.get_channel(forum_id)
        assert isinstance(forum, discord.ForumChannel)
        post = await fake.create_post(forum_id, "My printer", f"<@{fake.bot_id}> it is on fire")
        await asyncio.wait_for(starter_seen.wait(), 5)
        made = await forum.create_thread(name="Conversation with Hermes", content="Write here.")
        with pytest.raises(discord.HTTPException):
            await client.get_partial_messageable(forum_id).send("no messages in a forum")

    starter = seen[0]
    assert isinstance(starter.channel, discord.Thread) and starter.channel.parent_id == forum_id
    assert starter.id == starter.channel.id == int(post["id"]) and client.user in starter.mentions
    assert made.thread.parent_id == forum_id and made.thread.owner_id == fake.bot_id
    assert made.message.id == made.thread.id and made.message.content == "Write here."
    assert [m["content"] for m in fake.messages_in(made.thread.id)] == ["Write here."]
    assert {t["name"] for t in fake.threads_of(forum_id)} == {"My printer", "Conversation with Hermes"}


async def test_a_create_with_an_enforced_nonce_answers_the_first_message_within_minutes() -> None:
    """Discord's `enforce_nonce`: a second create with the same nonce returns the first message
    and makes none; another nonce, a deleted first message or the window past make a new one."""
    clock = ManualClock()
    async with FakeDiscord(clock=clock) as fake, fake.patch_discord():
        async with fake.connected(make_client()):  # a create is dispatched to the gateway
            await _enforced_nonces(fake, clock)


async def _enforced_nonces(fake: FakeDiscord, clock: ManualClock) -> None:
    url = f"{fake.api_base}/channels/{fake.channel_id}/messages"
    headers = {"Authorization": f"Bot {fake.token}"}

    async def create(nonce: str, enforce: bool = True) -> str:
        body = {"content": "posted once", "nonce": nonce, "enforce_nonce": enforce}
        async with httpx.AsyncClient() as http:
            response = await http.post(url, json=body, headers=headers)
        assert response.status_code == 200, response.text
        return str(response.json()["id"])

    first = await create("hermes-pause-1")
    assert await create("hermes-pause-1") == first
    assert len(fake.messages_in(fake.channel_id)) == 1
    assert await create("hermes-pause-2") != first
    assert await create("hermes-pause-1", enforce=False) != first  # a nonce alone is not checked
    async with httpx.AsyncClient() as http:
        await http.delete(f"{url}/{first}", headers=headers)
    again = await create("hermes-pause-1")
    assert again != first
    clock.advance(NONCE_SECONDS + 1)
    assert await create("hermes-pause-1") != again
