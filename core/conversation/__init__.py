"""The conversation layer (docs/conversation.md): what a person's message, edit, click or
command does to a conversation, platform-neutral, and what an operator does to a session
(`session_commands`); the words of a run's live view (`presenting`). The adapters translate their
platform's payloads into these calls and render the results; they decide nothing of their own.
The top of core's layers: it may use every layer below (docs/architecture.md, Layers)."""
