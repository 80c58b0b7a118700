"""Getting a turn onto Slack: `budgets` (our share of Slack's rate limits), `sender` (every Web
API call inside its budgets, 429s and outages retried), `live` (a run's presence in its
thread, from the first status to the answer and its follow-ups), `stream` (the same turn
streamed into one message, with the edited live message as its fallback)."""
