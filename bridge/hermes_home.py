"""The one place that prepares the process for hermes-agent.

hermes-agent reads HERMES_HOME (and HERMES_DISABLE_LAZY_INSTALLS) from the environment,
some of it at import time, so both are set here, from the settings, before anything
imports `run_agent`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from bridge.settings import BridgeSettings

logger = logging.getLogger(__name__)

# Written only when HERMES_HOME has no config.yaml yet; operators may edit it freely.
DEFAULT_CONFIG_YAML = """\
# Written by the hermes-chat Bridge on first start. This is hermes-agent's own config.
model:
  supports_vision: true      # images users attach go to the model as image parts; false: as
                             # text descriptions (a text-only model)
memory:
  memory_enabled: true
  user_profile_enabled: true
  nudge_interval: 0          # no background memory-review LLM calls between turns
skills:
  creation_nudge_interval: 0 # no background skill-review LLM calls
approvals:
  mode: manual               # a flagged command waits for a person (no LLM approves it)
auxiliary:
  title_generation:
    enabled: false           # chat sessions are titled by hermes-chat itself
"""


def prepare_hermes_home(settings: BridgeSettings) -> Path:
    """Create HERMES_HOME (with a default config.yaml) and export it for hermes-agent."""
    home = Path(settings.hermes_home).expanduser().resolve()
    home.mkdir(parents=True, exist_ok=True)
    config = home / "config.yaml"
    if not config.exists():
        config.write_text(DEFAULT_CONFIG_YAML, encoding="utf-8")
    os.environ["HERMES_HOME"] = str(home)
    # Without this hermes-agent pip-installs optional dependencies at run time.
    os.environ["HERMES_DISABLE_LAZY_INSTALLS"] = "1"
    # Without a CLI or a gateway, hermes-agent approves a command it flags as dangerous
    # unasked; with this it asks the turn's registered approval path (bridge/approval_gate.py)
    # and refuses the command when there is none. Never auto-approved.
    os.environ["HERMES_EXEC_ASK"] = "1"
    # hermes-agent's YOLO mode would approve every flagged command: the Bridge has no such mode.
    if os.environ.pop("HERMES_YOLO_MODE", None) is not None:
        logger.warning("HERMES_YOLO_MODE is ignored: the Bridge asks before any command "
                       "hermes-agent flags as dangerous")
    return home
