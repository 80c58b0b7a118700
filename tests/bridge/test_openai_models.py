"""openai's response models are built once the Bridge is imported, not on first use in a turn's
thread (that lazy build races between threads)."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = "import openai.types.chat as t; print(t.ChatCompletionChunk.__pydantic_complete__)"


def _complete(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "DEFER_PYDANTIC_BUILD"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout.strip()


def test_the_bridge_builds_openais_models_at_import() -> None:
    assert _complete(PROBE) == "False"  # openai's default: deferred to the first use
    assert _complete("import bridge; " + PROBE) == "True"
