"""`/api/usage` and `/api/limits`: what the agent's model calls spent, summed by user, channel,
workspace, model or day, and the spend limits that bound it; the usage shape every answer of
the admin API shows."""
