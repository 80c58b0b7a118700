"""The Slack adapter: threads are sessions, one live message per turn, clarify
buttons and modal, versions, `/hermes` commands. Only translates between Slack and `core`."""

from .bot import SlackBot

__all__ = ["SlackBot"]
