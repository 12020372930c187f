"""Gemini as a native provider (issue 34, item 5): `google/<model>` through the lean transport
and through the google-genai SDK, against the simulator over real HTTP (and, where the
simulator cannot say it, a small local server answering as the Gemini API does). Nothing is
monkeypatched: every reply and error is one the adapter really reads."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiohttp import web

from judge import JudgeSpec, Rubric, load_rubric, render_absolute, render_pairwise
from judge.errors import ConfigError, ProviderError
from judge.families import family_of
from judge.providers import Provider, ProviderCall, key_problem, make_provider
from judge.rubric.parsing import output_schema, parse_reply
from judge.simulator import SimulatorConfig, SimulatorHandle, simulator_fixture
from judge.types import BlindedResponse, ChatMessage, Item, JudgeRequest, Verdict
from tests.test_providers import _local_server

from .helpers import REPO

pytest.importorskip("google.genai", reason="the gemini extra: pip install 'judge-pipeline[gemini]'")

_CONFIG = SimulatorConfig(seed=1)
simulator = simulator_fixture(_CONFIG, scope="module")

TRANSPORTS = ("http", "sdk")
MODEL = "google/gemini-2.5-flash"
SECRET = "gemini-SECRET-key-123"
_PAIRWISE = load_rubric("pairwise_general")
_ABSOLUTE = load_rubric("absolute_1to5")
_ITEM = Item(item_id="i1", prompt="How do I reverse a list in Python?")
_GOOD = BlindedResponse(blind_id="r1", item_id="i1", output="Use xs[::-1]. ⟦quality=0.9⟧")
_BAD = BlindedResponse(blind_id="r2", item_id="i1", output="No idea. ⟦quality=0.1⟧")


@pytest.fixture(autouse=True)
def _default_knobs(simulator: SimulatorHandle) -> None:
    simulator.update(**_CONFIG.model_dump())


def _spec(transport: str, base_url: str, **fields: Any) -> JudgeSpec:
    values = {"model": MODEL, "base_url": base_url, "transport": transport, "api_key": SECRET}
    return JudgeSpec(**{**values, **fields})


def _call(
    rubric: Rubric = _PAIRWISE,
    *,
    structured: bool = False,
    messages: tuple[ChatMessage, ...] | None = None,
) -> ProviderCall:
    if messages is None:
        messages = (
            render_pairwise(rubric, _ITEM, _GOOD, _BAD)
            if rubric.kind == "pairwise"
            else render_absolute(rubric, _ITEM, _GOOD)
        )
    request = JudgeRequest(
        request_id="req-1",
        judge=MODEL,
        rubric_id=rubric.id,
        rubric_version=rubric.version,
        rubric_hash=rubric.hash,
        kind=rubric.kind,
        item_id=_ITEM.item_id,
        messages=messages or (ChatMessage(role="user", content="-"),),
        cache_key="k",
    )
    schema = output_schema(rubric) if structured else None
    return ProviderCall(request=request, messages=messages, schema=schema, timeout_s=10.0)


@asynccontextmanager
async def _provider(spec: JudgeSpec) -> AsyncIterator[Provider]:
    provider = make_provider(spec)
    try:
        yield provider
    finally:
        await provider.aclose()


async def _failure(provider: Provider, call: ProviderCall) -> BaseException:
    with pytest.raises(Exception) as caught:
        await provider.complete(call)
    return caught.value


_gemini_like = _local_server


# --- replies --------------------------------------------------------------------------------


def test_google_models_are_the_google_family_and_default_to_the_lean_transport() -> None:
    spec = JudgeSpec(model=MODEL, api_key=SECRET)
    assert family_of(spec.model) == "google" and spec.transport == "http"
    assert type(make_provider(spec)).__name__ == "GeminiHTTPProvider"
    assert type(make_provider(spec.model_copy(update={"transport": "sdk"}))).__name__ == (
        "GeminiProvider"
    )


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_text_reply_parses_to_a_verdict_with_usage_and_id(
    transport: str, simulator: SimulatorHandle
) -> None:
    simulator.update(reply_style="mtbench")  # free text: [[A]]
    simulator.reset()
    async with _provider(_spec(transport, simulator.base_url)) as provider:
        reply = await provider.complete(_call())
    verdict = parse_reply(reply.text, _PAIRWISE)
    assert isinstance(verdict, Verdict) and (verdict.label, verdict.parsed_from) == ("A", "text")
    assert reply.usage.input_tokens > 100 and reply.usage.output_tokens > 0
    assert reply.provider_request_id and reply.cost_usd is None  # priced by the runner
    assert simulator.stats()["by_route"] == {"/v1beta/models/{model}:generateContent": 1}


@pytest.mark.parametrize("rubric", [_PAIRWISE, _ABSOLUTE], ids=["pairwise", "absolute"])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_structured_output_follows_the_schema_reasoning_first(
    transport: str, rubric: Rubric, simulator: SimulatorHandle
) -> None:
    # In free-text mode this judge answers "[[A]]": JSON proves responseSchema was sent.
    simulator.update(reply_style="mtbench", noise=0.0)
    async with _provider(_spec(transport, simulator.base_url)) as provider:
        reply = await provider.complete(_call(rubric, structured=True))
    assert reply.text is not None
    data = json.loads(reply.text)
    schema = output_schema(rubric)
    # propertyOrdering keeps the schema's order: Gemini would otherwise sort the keys.
    assert list(data) == list(schema["properties"])
    verdict = parse_reply(reply.text, rubric)
    assert isinstance(verdict, Verdict) and verdict.parsed_from == "json"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_implicit_cache_is_reported_as_cached_input(
    transport: str, simulator: SimulatorHandle
) -> None:
    # The rubric's system message is ~500 tokens: a 256-token minimum lets the simulated
    # implicit cache serve it to the second request.
    simulator.update(prompt_cache=True, cache_min_tokens=256)
    simulator.reset()
    async with _provider(_spec(transport, simulator.base_url)) as provider:
        first = await provider.complete(_call())
        second = await provider.complete(_call(_PAIRWISE))
    assert first.usage.cache_read_tokens == 0
    assert 256 <= second.usage.cache_read_tokens < second.usage.input_tokens
    assert simulator.stats()["cache_read_tokens"] == second.usage.cache_read_tokens


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("fault", "kind"), [("rate_429", "rate_limit"), ("rate_500", "transient")])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_faults_classify_and_a_429_says_how_long_in_its_body(
    transport: str, fault: str, kind: str, simulator: SimulatorHandle
) -> None:
    simulator.update(**{fault: 1.0}, retry_after_s=7.5)
    async with _provider(_spec(transport, simulator.base_url)) as provider:
        exc = await _failure(provider, _call())
    assert provider.classify_error(exc) == kind
    # Gemini sends no Retry-After header: the delay is the body's RetryInfo.
    assert provider.retry_after(exc) == (7.5 if fault == "rate_429" else None)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_unavailable_is_transient(transport: str, simulator: SimulatorHandle) -> None:
    simulator.update(rate_overloaded=1.0)
    async with _provider(_spec(transport, simulator.base_url)) as provider:
        exc = await _failure(provider, _call())
    assert "UNAVAILABLE" in str(exc) or "503" in str(exc)
    assert provider.classify_error(exc) == "transient"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_invalid_request_is_final(transport: str, simulator: SimulatorHandle) -> None:
    only_system = (ChatMessage(role="system", content="Judge."),)  # no contents: a 400
    async with _provider(_spec(transport, simulator.base_url)) as provider:
        exc = await _failure(provider, _call(messages=only_system))
    assert provider.classify_error(exc) is None


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_per_day_quota_is_not_retried(transport: str) -> None:
    async def exhausted(request: web.Request) -> web.Response:
        violation = {"quotaMetric": "generate_content_free_tier_requests"}
        violation["quotaId"] = "GenerateRequestsPerDayPerProjectPerModel-FreeTier"
        error = {
            "code": 429,
            "message": "You exceeded your current quota.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "41.56s"},
            ],
        }
        return web.json_response({"error": error}, status=429)

    async with _gemini_like(exhausted) as url, _provider(_spec(transport, url)) as provider:
        exc = await _failure(provider, _call())
    assert provider.classify_error(exc) is None
    assert provider.retry_after(exc) == pytest.approx(41.56)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_key_never_appears_in_errors(transport: str) -> None:
    async def reject(request: web.Request) -> web.Response:
        key = request.headers.get("x-goog-api-key", "")
        error = {"code": 400, "message": f"API key not valid: {key}", "status": "INVALID_ARGUMENT"}
        return web.json_response({"error": error}, status=400)

    async with _gemini_like(reject) as url, _provider(_spec(transport, url)) as provider:
        exc = await _failure(provider, _call())
    assert provider.classify_error(exc) is None
    assert "API key not valid" in str(exc)
    assert SECRET not in f"{exc}\n{exc!r}\n{exc.args}\n{getattr(exc, 'message', '')}"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_both_transports_send_one_request_shape(transport: str) -> None:
    seen: list[tuple[str, dict[str, str], dict[str, Any]]] = []

    async def record(request: web.Request) -> web.Response:
        seen.append((request.path, dict(request.headers), json.loads(await request.read())))
        candidate = {"content": {"role": "model", "parts": [{"text": '{"verdict": "A"}'}]}}
        usage = {"promptTokenCount": 9, "candidatesTokenCount": 2, "thoughtsTokenCount": 5}
        return web.json_response({"candidates": [candidate], "usageMetadata": usage})

    spec_fields = {"service_tier": "flex", "params": {"temperature": 0, "max_tokens": 300}}
    async with (
        _gemini_like(record) as url,
        _provider(_spec(transport, url, **spec_fields)) as provider,
    ):
        reply = await provider.complete(_call(structured=True))
    # Thinking tokens are billed as output.
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (9, 7)
    ((path, headers, body),) = seen
    assert path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert headers["x-goog-api-key"] == SECRET
    assert body["serviceTier"] == "flex"
    assert [turn["role"] for turn in body["contents"]] == ["user"]
    assert "impartial" in body["systemInstruction"]["parts"][0]["text"]
    config = body["generationConfig"]
    assert config["maxOutputTokens"] == 300 and config["temperature"] == 0
    assert config["responseMimeType"] == "application/json"
    schema = config["responseSchema"]
    assert schema["type"] == "OBJECT" and "additionalProperties" not in schema
    # The SDK spells this nested field in snake case; the API reads both.
    ordering = schema.get("propertyOrdering") or schema.get("property_ordering")
    assert ordering == ["reasoning", "verdict"]


# --- keys, config, install ------------------------------------------------------------------


def test_the_key_comes_from_google_api_key_else_gemini_api_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for variable in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    spec = JudgeSpec(model=MODEL)
    problem = key_problem(spec)
    assert problem is not None and "GEMINI_API_KEY" in problem
    with pytest.raises(ProviderError, match="GEMINI_API_KEY"):
        make_provider(spec)
    monkeypatch.setenv("GEMINI_API_KEY", "from-gemini-variable")
    assert key_problem(spec) is None
    assert make_provider(spec)._key == "from-gemini-variable"  # type: ignore[attr-defined]
    monkeypatch.setenv("GOOGLE_API_KEY", "from-google-variable")  # preferred, as by the SDK
    assert make_provider(spec)._key == "from-google-variable"  # type: ignore[attr-defined]


def test_flex_is_for_synchronous_google_judges() -> None:
    assert JudgeSpec(model=MODEL, service_tier="flex").service_tier == "flex"
    for fields in (
        {"model": "openai/gpt-4.1-mini", "service_tier": "flex"},
        {"model": MODEL, "service_tier": "flex", "mode": "batch"},
    ):
        with pytest.raises(ValueError, match="Flex tier"):
            JudgeSpec(**fields)
    assert JudgeSpec(model=MODEL, mode="batch").mode == "batch"


def test_the_batch_flag_drops_flex(tmp_path: Any) -> None:
    from judge.batch import in_batch_mode
    from judge.config.run_config import config_from_mapping

    raw = {
        "name": "t",
        "data": {"items": "items.jsonl", "responses": "responses.jsonl"},
        "rubric": "pairwise_general",
        "judges": [{"model": MODEL, "service_tier": "flex"}],
    }
    config = in_batch_mode(config_from_mapping(raw, tmp_path, source="test"))
    (judge,) = config.judges
    assert (judge.mode, judge.service_tier) == ("batch", None)


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_sdk_is_imported_only_for_sdk_judges_and_named_when_missing() -> None:
    result = _python(
        f"""
        import sys
        from judge.config.run_config import JudgeSpec
        from judge.providers import make_provider
        make_provider(JudgeSpec(model="{MODEL}", api_key="k"))  # the lean transport
        print("google.genai" in sys.modules)
        sys.modules["google.genai"] = None  # as if it were not installed
        from judge.errors import ProviderError
        try:
            make_provider(JudgeSpec(model="{MODEL}", api_key="k", transport="sdk"))
        except ProviderError as exc:
            print(exc)
        """
    )
    assert result.returncode == 0, result.stderr
    imported, message = result.stdout.splitlines()
    assert imported == "False"
    assert "pip install 'judge-pipeline[gemini]'" in message


def test_an_unknown_provider_lists_google() -> None:
    with pytest.raises(ConfigError, match="google"):
        make_provider(JudgeSpec(model="gooogle/gemini-2.5-flash"))
