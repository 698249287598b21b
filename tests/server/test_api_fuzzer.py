"""The API fuzzer (``make fuzz-api``) generates requests as installed (RELIABILITY, server).

schemathesis draws requests through hypothesis-jsonschema, which calls a hypothesis API that hypothesis
6.170.10 removed (``many.more``): every case then fails to generate and the fuzzer runs nothing while looking
busy. The dev extra pins a working set; this test draws cases for every operation of lit3r's own OpenAPI
document and fails if any operation yields none.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402

from lit3r.server.app import create_app  # noqa: E402
from lit3r.settings import Settings  # noqa: E402

EXAMPLES = 3


def cases(operation) -> int:
    """How many cases hypothesis draws for one operation (each checked to be a request of it)."""
    count = 0

    @settings(max_examples=EXAMPLES, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(operation.as_strategy())
    def draw(case) -> None:
        nonlocal count
        assert case.operation.path == operation.path and case.method.upper() == operation.method.upper()
        count += 1

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draw()
    return count


def test_every_operation_of_the_api_generates_fuzz_cases(tmp_path: Path) -> None:
    app = create_app(Settings(home=tmp_path), watch=False)
    schema = schemathesis.openapi.from_dict(app.openapi())
    drawn: dict[str, int] = {}
    for result in schema.get_all_operations():
        operation = result.ok()
        drawn[f"{operation.method.upper()} {operation.path}"] = cases(operation)
    assert len(drawn) >= 15, drawn  # the API's operations were read
    assert all(count > 0 for count in drawn.values()), {k: v for k, v in drawn.items() if not v}
