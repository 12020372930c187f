"""Schemathesis fuzzes every operation of the published OpenAPI schema against the live
service (SQLite and PostgreSQL), with a valid token: valid and invalid requests alike must never
get a 5xx, and every answer must match the schema (status, media type, body)."""

from __future__ import annotations

from typing import Any

import hypothesis
import pytest

from tests.service.secured import ROUTES, Env


@pytest.fixture(scope="session")
def api_schema(env: Env) -> Any:
    import schemathesis

    return schemathesis.openapi.from_url(env.server.url + "/openapi.json")


FUZZED = [(m, p) for m, p in ROUTES if p != "/openapi.json"]


@pytest.mark.parametrize(("method", "path"), FUZZED, ids=[f"{m} {p}" for m, p in FUZZED])
def test_fuzzed_requests_never_cause_a_server_error(
    api_schema: Any, env: Env, method: str, path: str
) -> None:
    """Schemathesis generates requests from the published schema, valid ones and invalid
    ones (types, missing parts, odd strings), sent with a valid token: no 5xx."""
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
    )

    operation = api_schema[path][method]
    cases = hypothesis.strategies.one_of(
        operation.as_strategy(GenerationMode.POSITIVE),
        operation.as_strategy(GenerationMode.NEGATIVE),
    )
    statuses: list[int] = []

    @hypothesis.given(case=cases)
    @hypothesis.settings(
        max_examples=25,
        deadline=None,
        derandomize=True,  # the same examples on every run: a failure reproduces
        database=None,
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    def fuzz(case: Any) -> None:
        # Half the run ids become a real finished run, so the result endpoints' parameters
        # (limits, filters, resamples, gates, uploads) reach the code behind the run lookup.
        params = case.path_parameters or {}
        # A labelling task, once made, changes its run (its label uploads are refused): the
        # labelling routes get a run (and token) of their own.
        labelling = path.startswith("/v1/runs/{run_id}/labelling")
        if "run_id" in params and len(str(params["run_id"])) % 2:
            params["run_id"] = env.lab_run if labelling else env.alice_run
        response = case.call_and_validate(
            headers={"Authorization": f"Bearer {env.carol if labelling else env.alice}"},
            checks=[not_a_server_error, response_schema_conformance, content_type_conformance],
        )
        statuses.append(response.status_code)
        env.bodies.append(response.text)

    fuzz()
    assert statuses and max(statuses) < 500
