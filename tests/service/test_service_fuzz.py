"""schemathesis against a live ``neardup serve``: no request the API schema allows (or
nearly allows) gets a server error. A short, fixed budget per operation."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from tests.service.test_service import Server, make_collection, serving


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("fuzz")
    db = make_collection(tmp / "c.db")
    with serving(str(db), tmp / "server.log", "--max-batch", "20") as running:
        yield running


@pytest.fixture(scope="module")
def api_schema(live: Server):
    schema = schemathesis.openapi.from_url(f"{live.url}/openapi.json")
    schema.config.base_url = live.url
    return schema


api = schemathesis.pytest.from_fixture("api_schema")


@api.parametrize()
@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_no_request_gets_a_server_error(case, live):
    response = case.call(base_url=live.url, timeout=60)
    case.validate_response(response, checks=[not_a_server_error])
    assert "Traceback" not in live.output()
