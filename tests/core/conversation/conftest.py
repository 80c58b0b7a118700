"""The conversation layer's tests use the run pools and Bridges of tests/core/runtime."""

from tests.core.runtime.conftest import fake_bridge, skills_dir  # noqa: F401
