"""What meets the world outside: pacing (rate limits, budgets shared by replicas, run quotas,
backoff), the chat platforms' links and each event handled once (dedupe, the event
ledger), URLs shown and fetched, who may call our services, and the worker processes
that parse untrusted files."""
