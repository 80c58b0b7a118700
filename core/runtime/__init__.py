"""The run runtime: run pool, log buffer, subscriptions, clarify, recovery, jobs."""
