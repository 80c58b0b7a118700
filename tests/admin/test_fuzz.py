"""schemathesis against the live server's /schema/openapi.json: no 5xx, answers as documented.

Each operation gets positive and negative cases, and positive cases again with its path ids
pinned to seeded rows so the happy paths answer real data (drawn ids almost never exist): runs
start on the fake Bridge (each ends at once) and the run stream replays a finished run's log, so
every SSE answer ends. Bounded and derandomized, so a run is reproducible and short; DELETE goes
last. The operations are dealt into SHARDS tests, each on its own server and database, so that
pytest's workers share the fuzzing (one test took the longest of the suite, minutes on one
worker).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.core.failures import FailureGroup

from core.chat import attachment_store
from core.chat.attachments import StoredFile
from core.runtime.pool import RunPool
from core.store.models import Attachment, ChatMessage, MessageStatus, Platform, Role
from tests.admin.builders import conversation, running_turn, store_logs, thinking_events
from tests.admin.conftest import AUTH
from tests.files import PNG

MAX_EXAMPLES = 30
SHARDS = 4
CONFIG = {
    "checks": {
        # The schema states the shape of a valid request, not which models, skills, cursors or
        # branch positions exist: rejecting those with 400 is right, so this check cannot hold.
        "positive_data_acceptance": {"enabled": False},
        # A body over 1 MiB is refused before it is read: 413 is a rejection too.
        "negative_data_rejection": {
            "expected-statuses": ["400", "401", "403", "404", "405", "409", "413", "415"]
        },
    },
    # The API ignores query parameters it does not know, as most HTTP APIs do.
    "generation": {"allow-extra-parameters": False},
}


async def _seed() -> dict[str, int | str]:
    """Ids of rows the pinned cases use: a session with a logged answer, its messages, its run."""
    first = await conversation(
        "Deploy plan", ("how do we deploy?", "blue/green"), ("and roll back?", "flip")
    )
    await conversation("Bound", ("hi", "hello"), platform=Platform.SLACK)
    busy = await conversation(None, ("one", "two"))
    await running_turn(busy.id, "still working?", MessageStatus.RUNNING)
    answer = await ChatMessage.filter(session_id=first.id, role=Role.ASSISTANT).order_by("id").first()
    assert answer is not None and answer.parent_id is not None
    await store_logs(answer.id, thinking_events())
    assert answer.run_id is not None
    await attachment_store.save(answer.parent_id, [StoredFile("shot.png", "image/png", PNG)])
    [attachment] = await Attachment.filter(message_id=answer.parent_id).values_list("id", flat=True)
    return {"session_id": first.id, "message_id": answer.parent_id, "answer_id": answer.id,
            "run_id": answer.run_id, "attachment_id": attachment}


def _pins(path: str, seeded: dict[str, int | str]) -> dict[str, int | str]:
    """The seeded ids of the path's parameters (regenerate takes the answer, not the question)."""
    chosen = {**seeded, "message_id": seeded["answer_id"]} if path.endswith("/regenerate") else seeded
    return {k: v for k, v in chosen.items() if f"{{{k}}}" in path}


@pytest.mark.parametrize("shard", range(SHARDS))
async def test_schemathesis_finds_no_server_error_and_no_undocumented_answer(
    shard: int, fake_pool_url: str, fake_pool: RunPool
) -> None:
    base_url = fake_pool_url
    pinned = await _seed()
    schema = await asyncio.to_thread(
        schemathesis.openapi.from_url, f"{base_url}/schema/openapi.json", headers=AUTH,
        config=schemathesis.Config.from_dict(CONFIG),
    )
    failures = await asyncio.to_thread(_fuzz, schema, base_url, pinned, shard)
    assert not failures, "\n\n".join(failures)


def _fuzz(
    schema: schemathesis.BaseSchema, base_url: str, pinned: dict[str, int | str], shard: int
) -> list[str]:
    """The failures of this shard's operations: every SHARDS-th of them in the schema's order."""
    every = [result.ok() for result in schema.get_all_operations()]
    operations = sorted(every[shard::SHARDS], key=lambda op: op.method.upper() == "DELETE")
    assert operations, f"shard {shard} of {len(every)} operations is empty"
    failures: list[str] = []
    with requests.Session() as session:
        for operation in operations:
            ids = _pins(operation.path, pinned)
            runs: list[tuple[GenerationMode, dict[str, Any] | None]] = [
                (GenerationMode.POSITIVE, None), (GenerationMode.NEGATIVE, None),
            ]
            if ids:
                runs.append((GenerationMode.POSITIVE, ids))
            for mode, path_parameters in runs:
                error = _run(operation, mode, path_parameters, session, base_url)
                if error:
                    failures.append(f"{operation.label} ({mode.value}, {path_parameters}): {error}")
    return failures


def _run(
    operation: Any, mode: GenerationMode, path_parameters: dict[str, Any] | None,
    session: requests.Session, base_url: str,
) -> str | None:
    strategy = operation.as_strategy(generation_mode=mode, path_parameters=path_parameters)

    @settings(
        max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
        suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
    )
    @given(case=strategy)
    def check(case: schemathesis.Case) -> None:
        case.call_and_validate(base_url=base_url, session=session, headers=AUTH)

    try:
        check()
    except Unsatisfiable:  # nothing to break: an operation without parameters or body
        return None
    except (AssertionError, FailureGroup, requests.RequestException) as error:
        return str(error)  # collected, so one report lists every operation's failure
    return None
