"""What the Slack adapter shows, as Block Kit (pure): `blocks` (primitives and Slack's limits),
`mrkdwn` (Markdown to Slack's mrkdwn and back), `turn` (a turn in its thread: the live
message, the streamed chunks, the answer with its controls, the compaction divider). The
clarify question and the thinking modal live with their listeners (`actions/`), the command
replies with the commands (`commands.py`)."""
