"""Which model a run that names none goes to (core/agent/default_model.py), as serve says it."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.agent.catalogue import Catalogue, ModelEntry
from core.agent.default_model import DefaultModel, default_model
from core.edge.urls import endpoint_only

FAST = ModelEntry("fast", "Fast", "small-1", base_url="http://llm.internal/v1", default=True)
BARE = ModelEntry("bare", "Bare", "small-2", default=True)  # no base_url of its own


def _catalogue(*models: ModelEntry) -> Catalogue:
    return Catalogue(models, Path("skills"))


@pytest.mark.parametrize(("models", "hermes_model", "base_url", "external", "expected"), [
    ((FAST,), "gpt-4o-mini", "https://api.openai.com/v1", False,
     DefaultModel("small-1", "http://llm.internal/v1", "MODELS_FILE")),
    ((BARE,), None, "https://api.openai.com/v1", False,
     DefaultModel("small-2", "https://api.openai.com/v1", "MODELS_FILE")),
    ((), "gpt-4o-mini", "https://api.openai.com/v1", False,
     DefaultModel("gpt-4o-mini", "https://api.openai.com/v1", "HERMES_MODEL")),
    ((), "gpt-4o-mini", None, False, DefaultModel(None, None, None)),
    ((BARE,), None, None, False, DefaultModel(None, None, None)),
    ((), None, None, True, DefaultModel(None, None, "HERMES_BRIDGE_URL")),
])
def test_the_default_model_follows_the_settings_in_order(
    models: tuple[ModelEntry, ...], hermes_model: str | None, base_url: str | None,
    external: bool, expected: DefaultModel,
) -> None:
    assert default_model(_catalogue(*models), hermes_model, base_url, external) == expected


def test_none_set_says_how_to_set_one() -> None:
    assert DefaultModel(None, None, None).describe().startswith(
        "none set: put OPENAI_BASE_URL, OPENAI_API_KEY and HERMES_MODEL in .env")


def test_an_endpoint_loses_its_credentials() -> None:
    assert endpoint_only("https://me:pw@api.example.com:8443/v1?api-key=k#x") == \
        "https://api.example.com:8443/v1"
    assert endpoint_only("http://[::1:bad") == "(an endpoint that is not a URL)"
