"""The Discord adapter (discord.py): channels, threads and DMs <-> sessions, live embeds,
persistent buttons, the Custom answer modal and the /hermes commands.

It translates, renders and delivers; the rules are core's (`core.conversation`). One module
per concept, the same layout as the Slack adapter:

- `bot.py`: `DiscordBot` (start, stop), the discord.py client and its hooks;
  `services.py`: `DiscordServices`, what the handlers share, built once.
- `inbound.py`: what is read of Discord's payloads, typed at the edge (pure).
- `intake.py`: the gate: who may talk, and the slash commands' one error boundary.
- `conversation.py`: a message or an edit -> a turn of the right session.
- `actions/`: one DynamicItem per click (who may act, in `interaction_check`), by role:
  `turn`, `clarify`, `approvals`, `thinking`; `commands.py`: `/hermes`.
- `render/`: what each message shows (pure: no I/O).
- `delivery/`: the channel budgets, the outbox and the writer, and what keeps the bot's
  messages in step with the runs (`live.py`: `RunFollower`; the reactions on a person's
  message, the names of the bot's threads); `refs.py`: where each turn shows (`Slot`).
- `supervisor.py`: the gateway connection, kept up.
"""

from bots.discord.bot import DiscordBot

__all__ = ["DiscordBot"]
