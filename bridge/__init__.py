"""The Hermes Bridge: the real hermes-agent behind an HTTP + SSE protocol."""

import os

# openai builds its response models on first use unless told otherwise, and that build is not
# thread-safe: the Bridge runs turns in threads, and a turn whose first streamed call raced
# another's failed with PydanticUserError ("BaseModel cannot be instantiated directly",
# openai-python #3079; seen in the scale-out e2e test). Built as openai is imported instead
# (the import lock orders that), before anything here imports it.
os.environ.setdefault("DEFER_PYDANTIC_BUILD", "false")
