"""Run routes: start, follow (SSE), state, resume a clarify, stop, list; regenerate's run."""
