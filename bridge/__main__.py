"""`python -m bridge`: the Bridge on its own, configured by its environment only (BRIDGE_HOST,
BRIDGE_PORT, HERMES_HOME, OPENAI_BASE_URL, OPENAI_API_KEY, HERMES_MODEL, BRIDGE_TOOLSETS,
BRIDGE_SHARED_MEMORY, BRIDGE_POOL_SIZE, CLARIFY_FALLBACK_HOURS, BRIDGE_TOKEN, BRIDGE_KEY_ENVS,
LOG_LEVEL, LOG_FORMAT); it reads no .env file. This is how `serve` starts its child, with
`--instance` (named in GET /health) and `--parent-pid` (the Bridge stops when `serve` dies)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import replace

from bridge.parent_watch import end_with_parent
from bridge.server import serve
from bridge.settings import BridgeSettings
from core.errors import HermesChatError
from core.logs import configure_logging

log = logging.getLogger("bridge")


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGINT/SIGTERM; 1 for a setting the Bridge refuses, 2 for a malformed one."""
    args = _parser().parse_args(argv)
    try:
        settings = BridgeSettings.from_env(os.environ)
    except ValueError as error:
        print(f"bridge: bad setting: {error}", file=sys.stderr)
        return 2
    settings = replace(settings, instance=args.instance or settings.instance)
    configure_logging(settings.log_level, settings.log_format, settings.secrets(os.environ))
    if args.parent_pid is not None and not end_with_parent(args.parent_pid):
        log.error("bridge: process %s that started this Bridge is gone; not starting",
                  args.parent_pid)
        return 1
    try:
        serve(settings)
    except HermesChatError as error:
        log.error("%s", error.message)
        return 1
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bridge", description=__doc__)
    parser.add_argument("--instance", help="the id GET /health names (default: a fresh one)")
    parser.add_argument("--parent-pid", type=int,
                        help="stop when this process (the supervisor) dies")
    return parser


if __name__ == "__main__":
    sys.exit(main())
