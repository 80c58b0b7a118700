"""Session routes: create, list, detail, change, delete, reset, export, messages, memory."""
