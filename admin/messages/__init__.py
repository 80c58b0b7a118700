"""Message routes: edit, versions, activate; the message shapes the session routes return too."""
