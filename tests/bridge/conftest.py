"""The Bridge tests use the suite-wide `bridge` and `llm` fixtures of tests/conftest.py."""
