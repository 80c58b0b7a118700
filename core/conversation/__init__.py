"""The conversation layer (docs/conversation.md): what a person's message, edit, click or
command does to a conversation, platform-neutral. The adapters translate their platform's
payloads into these calls and render the results; they decide nothing of their own."""
