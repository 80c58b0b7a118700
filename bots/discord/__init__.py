"""The Discord adapter (discord.py): channels, threads and DMs <-> sessions, live embeds,
persistent buttons, the Custom answer modal and the /hermes commands.

It translates, renders and delivers; the rules are core's (`core.conversation`). One module
per concept, the same layout as the Slack adapter:

- `bot.py`: `DiscordBot` (start, stop), the discord.py client and its hooks;
  `services.py`: `DiscordServices`, what the handlers share, built once.
- `inbound.py`: what is read of Discord's payloads, typed at the edge (pure).
- `intake.py`: the gate: who may talk, and the slash commands' one error boundary.
- `conversation.py`: a message or an edit -> a turn of the right session.
- `actions.py`: one DynamicItem per click (who may act, in `interaction_check`);
  `commands.py`: `/hermes`.
- `render/`: what each message shows (pure), and the presenters keeping messages in step
  (with the reactions on a person's message and the names of the bot's threads).
- `delivery.py`: the channel budget, the outbox and the writer; `refs.py`: platform_refs.
- `supervisor.py`: the gateway connection, kept up.
"""

from bots.discord.bot import DiscordBot

__all__ = ["DiscordBot"]
