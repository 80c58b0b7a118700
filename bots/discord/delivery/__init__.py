"""Channel delivery: every write the bot makes to Discord goes through here, top to bottom.

1. **The budgets** (budgets.py). Discord allows about 5 message writes (POST and PATCH) per
   5 s per channel, a thread being a channel of its own, shared by everything the bot writes
   there; reactions and thread renames have budgets of their own.
2. **The outbox** (outbox.py). Pending writes per channel: one worker per busy channel, the
   latest job per key, so a run that changes ten times while its channel waits for budget
   costs one write, showing the newest state.
3. **The writer** (writer.py). The REST writes of message parts, each spending a token of its
   channel's budget; a 429 or Discord down closes the channel and the job is tried again.
4. **The components** (components.py). A part's buttons and selects as what discord.py sends.
5. **What is shown.** live.py follows every run and keeps each turn's messages, its questions
   and its dividers in step (and posts the one-off notices); reactions.py the reaction on the
   person's message, titles.py a thread's name.

What each message shows is rendered, pure, in bots/discord/render/.
"""
