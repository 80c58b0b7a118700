"""The model a run that names none goes to, as `serve` works it out at start: said in its
start-up line and by `/api/health`, so that a service with no model is seen before the first
message fails.

In order: the `default = true` entry of MODELS_FILE (its endpoint, else OPENAI_BASE_URL), then
HERMES_MODEL at OPENAI_BASE_URL (the child Bridge's own default). With external Bridges
(HERMES_BRIDGE_URL) and no default entry, each Bridge's own settings choose: `serve` cannot
see them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.agent.catalogue import Catalogue
from core.edge.urls import endpoint_only

SetBy = Literal["MODELS_FILE", "HERMES_MODEL", "HERMES_BRIDGE_URL"]
NONE_SET = ("none set: put OPENAI_BASE_URL, OPENAI_API_KEY and HERMES_MODEL in .env, or a "
            "default = true entry in MODELS_FILE (see README)")


@dataclass(frozen=True, slots=True)
class DefaultModel:
    """`name` at `endpoint` (no credentials in it), and which setting chose it; `set_by` is
    None when no model is set (every run would fail)."""

    name: str | None
    endpoint: str | None
    set_by: SetBy | None

    def describe(self) -> str:
        """What the start-up line says after `model: `."""
        if self.set_by is None:
            return NONE_SET
        if self.set_by == "HERMES_BRIDGE_URL":
            return "chosen by each Bridge of HERMES_BRIDGE_URL (its HERMES_MODEL and OPENAI_BASE_URL)"
        return f"{self.name} at {self.endpoint} (from {self.set_by})"


def default_model(catalogue: Catalogue, hermes_model: str | None, openai_base_url: str | None,
                  external_bridges: bool) -> DefaultModel:
    """The default model from the catalogue and the settings (see the module's docstring)."""
    entry = catalogue.default_model()
    if entry is not None and (endpoint := entry.base_url or openai_base_url):
        return DefaultModel(entry.model, endpoint_only(endpoint), "MODELS_FILE")
    if external_bridges:
        return DefaultModel(entry.model if entry else None, None, "HERMES_BRIDGE_URL")
    if hermes_model and openai_base_url:
        return DefaultModel(hermes_model, endpoint_only(openai_base_url), "HERMES_MODEL")
    return DefaultModel(None, None, None)
