"""`python -m bridge`: settings from BRIDGE_HOST, BRIDGE_PORT, HERMES_HOME, OPENAI_BASE_URL,
OPENAI_API_KEY, HERMES_MODEL (and BRIDGE_TOOLSETS, BRIDGE_SHARED_MEMORY, BRIDGE_POOL_SIZE,
CLARIFY_FALLBACK_HOURS)."""

from __future__ import annotations

import logging
import os

from bridge.server import serve
from bridge.settings import BridgeSettings


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    serve(BridgeSettings.from_env(os.environ))


if __name__ == "__main__":
    main()
