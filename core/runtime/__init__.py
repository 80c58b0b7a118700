"""The run runtime (DESIGN §5): run pool, log buffer, subscriptions, clarify, recovery, jobs."""
