"""Chat sessions and their messages: sessions, the message tree and its branches, attachments,
thread context, feedback, the channel policy, read models of sessions and messages, and
export."""
