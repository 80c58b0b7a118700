"""What the Slack adapter shows, as Block Kit (pure: no I/O, and nothing of `delivery/` or
`actions/`): `blocks` (primitives and Slack's limits), `mrkdwn` (Markdown to Slack's mrkdwn
and back), `turn` (a turn in its thread: the live message, the streamed chunks, the answer with
its controls, the compaction divider), `clarify` (a clarify question, its "Custom answer…"
modal, why it takes no more answers), `approval` (a tool approval). The thinking modal lives
with its listener (`actions/thinking.py`), the command replies with the commands
(`commands.py`)."""
