"""Providers against the judge simulator over real HTTP, with the real SDK clients.

Every fault is injected by the simulator (or, for 401s echoing the key, by a tiny local server)
and surfaces as the exception the adapter really raises; nothing is monkeypatched.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from aiohttp import web

from judge import JudgeSpec, Rubric, load_rubric, render_absolute, render_pairwise
from judge.errors import ConfigError, ProviderError
from judge.judging.pricing import price, price_table_path
from judge.providers import Provider, ProviderCall, make_provider
from judge.providers._common import retry_after_from
from judge.rubric.parsing import output_schema, parse_reply
from judge.simulator import SimulatorConfig, SimulatorHandle, simulator_fixture
from judge.types import BlindedResponse, ChatMessage, Item, JudgeRequest, Usage, Verdict

from .helpers import REPO

_CONFIG = SimulatorConfig(seed=1)
simulator = simulator_fixture(_CONFIG, scope="module")

KINDS = ("openai-sdk", "anthropic-sdk", "openai-http", "anthropic-http")
_MODELS = {
    "openai": "openai/gpt-4.1-mini",
    # A real Anthropic model id draws SDK deprecation warnings as models retire.
    "anthropic": "anthropic/claude-judge-sim",
}
SECRET = "sk-test-SECRET-123"

_PAIRWISE = load_rubric("pairwise_general")
_ABSOLUTE = load_rubric("absolute_1to5")
_ITEM = Item(item_id="i1", prompt="How do I reverse a list in Python?")
_GOOD = BlindedResponse(
    blind_id="r1", item_id="i1", output="Use reversed(xs), or xs[::-1] for a copy. ⟦quality=0.9⟧"
)
_BAD = BlindedResponse(blind_id="r2", item_id="i1", output="No idea. ⟦quality=0.1⟧")


@pytest.fixture(autouse=True)
def _default_knobs(simulator: SimulatorHandle) -> None:
    # One server serves the module: every test starts from the default knobs.
    simulator.update(**_CONFIG.model_dump())


def _spec(kind: str, sim: SimulatorHandle, **fields: Any) -> JudgeSpec:
    family, transport = kind.split("-")
    base_url = sim.openai_base_url if family == "openai" else sim.base_url
    values: dict[str, Any] = {
        "model": _MODELS[family],
        "base_url": base_url,
        "transport": transport,
        "api_key": SECRET,
        **fields,
    }
    return JudgeSpec(**values)


def _call(
    rubric: Rubric = _PAIRWISE,
    *,
    messages: tuple[ChatMessage, ...] | None = None,
    structured: bool = False,
    timeout_s: float = 10.0,
) -> ProviderCall:
    if messages is None:
        if rubric.kind == "pairwise":
            messages = render_pairwise(rubric, _ITEM, _GOOD, _BAD)
        else:
            messages = render_absolute(rubric, _ITEM, _GOOD)
    request = JudgeRequest(
        request_id="req-1",
        judge="test/judge",
        rubric_id=rubric.id,
        rubric_version=rubric.version,
        rubric_hash=rubric.hash,
        kind=rubric.kind,
        item_id=_ITEM.item_id,
        messages=messages or (ChatMessage(role="user", content="-"),),
        cache_key="k",
    )
    schema = output_schema(rubric) if structured else None
    return ProviderCall(request=request, messages=messages, schema=schema, timeout_s=timeout_s)


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


# --- replies --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
async def test_text_reply_parses_to_a_verdict_with_usage_and_id(
    kind: str, simulator: SimulatorHandle
) -> None:
    simulator.update(reply_style="mtbench")  # free text: [[A]]
    async with _provider(_spec(kind, simulator, structured_output=False)) as provider:
        reply = await provider.complete(_call(structured=True))  # schema given, but switched off
    verdict = parse_reply(reply.text, _PAIRWISE)
    assert isinstance(verdict, Verdict)
    assert (verdict.label, verdict.parsed_from) == ("A", "text")
    assert reply.usage.input_tokens > 100 and reply.usage.output_tokens > 0
    prefix = "chatcmpl-" if kind.startswith("openai") else "msg_"
    assert reply.provider_request_id is not None and reply.provider_request_id.startswith(prefix)
    assert reply.cost_usd is None  # priced by the runner


@pytest.mark.parametrize("rubric", [_PAIRWISE, _ABSOLUTE], ids=["pairwise", "absolute"])
@pytest.mark.parametrize("kind", KINDS)
async def test_structured_output_is_json_matching_the_schema(
    kind: str, rubric: Rubric, simulator: SimulatorHandle
) -> None:
    # In free-text mode this judge would answer "[[A]]": JSON proves the structured path
    # (response_format json_schema, or the forced record_verdict tool) was taken.
    simulator.update(reply_style="mtbench", noise=0.0)
    async with _provider(_spec(kind, simulator)) as provider:
        reply = await provider.complete(_call(rubric, structured=True))
    assert reply.text is not None
    data = json.loads(reply.text)
    schema = output_schema(rubric)
    assert set(data) == set(schema["properties"]) == set(schema["required"])
    assert isinstance(data["reasoning"], str) and data["reasoning"]
    if rubric.kind == "pairwise":
        assert data["verdict"] in schema["properties"]["verdict"]["enum"]
    else:
        assert isinstance(data["score"], int) and 1 <= data["score"] <= 5
    verdict = parse_reply(reply.text, rubric)
    assert isinstance(verdict, Verdict) and verdict.parsed_from == "json"


@pytest.mark.parametrize("kind", ["openai-sdk", "openai-http"])
async def test_a_refusal_reaches_the_parser_as_a_refusal(
    kind: str, simulator: SimulatorHandle
) -> None:
    simulator.update(rate_refusal=1.0)
    async with _provider(_spec(kind, simulator)) as provider:
        reply = await provider.complete(_call(structured=True))
    failure = parse_reply(reply.text, _PAIRWISE)
    assert not isinstance(failure, Verdict) and failure.reason.startswith("refusal")


# --- faults ---------------------------------------------------------------------------------

_FAULTS = {
    "429": ({"rate_429": 1.0, "retry_after_s": 0.25}, "rate_limit"),
    "500": ({"rate_500": 1.0}, "transient"),
    "overloaded": ({"rate_overloaded": 1.0}, "transient"),  # 503 on OpenAI, 529 on Anthropic
    "stall": ({"rate_stall": 1.0, "stall_s": 5.0}, "transient"),
    "truncated": ({"rate_truncated": 1.0}, "transient"),
}


@pytest.mark.parametrize("fault", list(_FAULTS))
@pytest.mark.parametrize("kind", KINDS)
async def test_each_fault_classifies(kind: str, fault: str, simulator: SimulatorHandle) -> None:
    knobs, expected = _FAULTS[fault]
    simulator.update(**knobs)
    async with _provider(_spec(kind, simulator)) as provider:
        exc = await _failure(provider, _call(timeout_s=0.3))
        assert provider.classify_error(exc) == expected, repr(exc)
        # Only 429s carry Retry-After here; the simulator sends retry-after-ms (finer) too.
        assert provider.retry_after(exc) == (0.25 if fault == "429" else None)
        assert SECRET not in str(exc) and SECRET not in repr(exc)


@pytest.mark.parametrize("kind", KINDS)
async def test_a_malformed_request_is_final(kind: str, simulator: SimulatorHandle) -> None:
    async with _provider(_spec(kind, simulator)) as provider:
        exc = await _failure(provider, _call(messages=()))  # no messages: a 400
    assert getattr(exc, "status_code", getattr(exc, "status", None)) == 400
    assert provider.classify_error(exc) is None


@pytest.mark.parametrize("structured", [True, False])
@pytest.mark.parametrize("params", [{}, {"temperature": 0.0, "seed": 7}, {"messages": "odd"}])
def test_openai_http_body_is_its_payload(structured: bool, params: dict[str, Any]) -> None:
    # Everything but the messages is encoded once per schema and spliced into each body.
    spec = JudgeSpec(
        model="openai/m", base_url="http://127.0.0.1:9/v1", transport="http", params=params
    )
    provider = make_provider(spec)
    for rubric in (_PAIRWISE, _PAIRWISE, load_rubric("absolute_1to5")):
        call = _call(rubric, structured=structured)
        assert json.loads(provider.body(call)) == provider.payload(call)  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["openai-http", "anthropic-http"])
async def test_http_transport_reuses_one_session(kind: str, simulator: SimulatorHandle) -> None:
    async with _provider(_spec(kind, simulator)) as provider:
        for _ in range(3):
            await provider.complete(_call())
        session = provider._session  # type: ignore[attr-defined]
        await provider.complete(_call())
        assert provider._session is session  # type: ignore[attr-defined]
    assert session.closed


async def test_connection_refused_is_transient() -> None:
    spec = JudgeSpec(model="openai/m", base_url="http://127.0.0.1:9/v1", transport="http")
    async with _provider(spec) as provider:
        exc = await _failure(provider, _call(timeout_s=2))
    assert provider.classify_error(exc) == "transient"


# --- secrets --------------------------------------------------------------------------------


@asynccontextmanager
async def _local_server(
    answer: Callable[[web.Request], Awaitable[web.Response]],
) -> AsyncIterator[str]:
    """A server on a free loopback port answering every POST with `answer`; yields its URL."""
    app = web.Application()
    app.router.add_post("/{tail:.*}", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


def _key_echoing_server() -> AbstractAsyncContextManager[str]:
    """Answers every request with a 401 quoting the key it was sent, as real APIs partly do."""

    async def reject(request: web.Request) -> web.Response:
        key = request.headers.get("x-api-key") or request.headers.get("Authorization", "")[7:]
        message = f"Incorrect API key provided: {key}."
        body = {"type": "error", "error": {"type": "authentication_error", "message": message}}
        return web.json_response(body, status=401)

    return _local_server(reject)


def _header_recording_server(
    seen: list[tuple[str, dict[str, str]]],
) -> AbstractAsyncContextManager[str]:
    """Records each request's path and headers, and answers 401."""

    async def record(request: web.Request) -> web.Response:
        seen.append((request.path, {k.lower(): v for k, v in request.headers.items()}))
        body = {"error": {"type": "authentication_error", "message": "recorded"}}
        return web.json_response(body, status=401)

    return _local_server(record)


def test_the_default_transport_is_the_lean_client_where_one_speaks_the_wire_format() -> None:
    local = "http://localhost:8000/v1"
    for model in ("openai/m", "anthropic/m", "vllm/m", "ollama/m"):
        assert JudgeSpec(model=model, base_url=local).transport == "http"
        lean = make_provider(JudgeSpec(model=model, base_url=local))
        sdk = make_provider(JudgeSpec(model=model, base_url=local, transport="sdk"))
        assert type(lean).__module__ == "judge.providers.http"
        assert type(sdk).__module__.endswith("_sdk")
    assert JudgeSpec(model="litellm/groq/llama-3.1-8b-instant").transport == "sdk"


# The variables each SDK reads, and the headers they become.
_ENVIRONMENT = {
    "openai": {
        "OPENAI_BASE_URL": "{url}/v1",
        "OPENAI_ORG_ID": "org-judge",
        "OPENAI_PROJECT_ID": "proj-judge",
        "OPENAI_API_KEY": SECRET,
    },
    "anthropic": {"ANTHROPIC_BASE_URL": "{url}", "ANTHROPIC_API_KEY": SECRET},
}
_SENT = {
    "openai": ("authorization", "openai-organization", "openai-project", "content-type"),
    # The Anthropic SDK sends the key as `x-api-key` or (2.x) as a bearer token, and its own
    # API version; ours pins the version whose reply format it parses.
    "anthropic": ("content-type",),
}


def _key_sent(headers: dict[str, str]) -> str | None:
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


@pytest.mark.parametrize("family", ["openai", "anthropic"])
async def test_both_transports_read_the_sdks_variables_and_send_the_same_headers(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, dict[str, str]]] = []
    async with _header_recording_server(seen) as url:
        for variable, value in _ENVIRONMENT[family].items():
            monkeypatch.setenv(variable, value.format(url=url))
        for transport in ("sdk", "http"):
            spec = JudgeSpec(model=_MODELS[family], transport=transport)  # no base_url
            async with _provider(spec) as provider:
                failure = await _failure(provider, _call())
            assert provider.classify_error(failure) is None  # a 401 is not retried
    (sdk_path, sdk), (http_path, http) = seen
    assert (
        sdk_path == http_path == ("/v1/chat/completions" if family == "openai" else "/v1/messages")
    )
    assert {h: sdk.get(h) for h in _SENT[family]} == {h: http.get(h) for h in _SENT[family]}
    assert all(http.get(h) for h in _SENT[family])
    assert _key_sent(sdk) == _key_sent(http) == SECRET


@pytest.mark.parametrize("family", ["openai", "anthropic"])
async def test_both_transports_go_through_the_proxy_the_environment_names(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[str, dict[str, str]]] = []
    async with _header_recording_server(seen) as proxy:
        for variable in ("HTTP_PROXY", "http_proxy"):
            monkeypatch.setenv(variable, proxy)
        for variable in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(variable, raising=False)
        upstream = "http://judge-upstream.invalid" + ("/v1" if family == "openai" else "")
        for transport in ("sdk", "http"):
            spec = JudgeSpec(
                model=_MODELS[family], transport=transport, base_url=upstream, api_key=SECRET
            )
            async with _provider(spec) as provider:
                await _failure(provider, _call())
    # The host does not resolve: only the proxy could have answered, and it saw both.
    assert [headers["host"] for _, headers in seen] == ["judge-upstream.invalid"] * 2


def _all_text(exc: BaseException) -> str:
    texts = [str(exc), repr(exc), str(getattr(exc, "message", "")), str(exc.args)]
    texts.append(str(getattr(exc, "body", "")))
    return "\n".join(texts)


@pytest.mark.parametrize("kind", KINDS)
async def test_the_key_never_appears_in_errors(kind: str, simulator: SimulatorHandle) -> None:
    async with _key_echoing_server() as url:
        base = url + "/v1" if kind.startswith("openai") else url
        async with _provider(_spec(kind, simulator, base_url=base)) as provider:
            unauthorized = await _failure(provider, _call())
    assert provider.classify_error(unauthorized) is None
    assert "Incorrect API key" in str(unauthorized)  # the server's message is kept...
    errors = [unauthorized]
    async with _provider(_spec(kind, simulator)) as provider:
        for knobs in ({"rate_500": 1.0}, {"rate_stall": 1.0, "stall_s": 5.0}):
            simulator.update(**{"rate_500": 0.0, "rate_stall": 0.0, **knobs})
            errors.append(await _failure(provider, _call(timeout_s=0.3)))
    for exc in errors:
        assert SECRET not in _all_text(exc), kind  # ...without the key


def test_the_key_is_not_in_the_specs_repr() -> None:
    spec = JudgeSpec(model="openai/gpt-4.1-mini", api_key=SECRET)
    for text in (repr(spec), str(spec), spec.model_dump_json(), repr(spec.api_key)):
        assert SECRET not in text


# --- litellm --------------------------------------------------------------------------------


@pytest.mark.slow  # importing litellm takes seconds
async def test_litellm_reaches_an_openai_compatible_server(simulator: SimulatorHandle) -> None:
    spec = JudgeSpec(model="litellm/openai/gpt-4.1-mini", base_url=simulator.openai_base_url)
    async with _provider(spec) as provider:
        reply = await provider.complete(_call(structured=True))
        verdict = parse_reply(reply.text, _PAIRWISE)
        assert isinstance(verdict, Verdict) and verdict.label == "A"
        assert reply.usage.input_tokens > 100 and reply.provider_request_id
        # LiteLLM prices from the same table as judge.judging.pricing.
        assert reply.cost_usd == pytest.approx(price(spec.model, reply.usage, spec))
        simulator.update(rate_429=1.0, retry_after_s=0.25)
        exc = await _failure(provider, _call())
        assert provider.classify_error(exc) == "rate_limit"
        assert provider.retry_after(exc) == 0.25
        simulator.update(rate_429=0.0, rate_500=1.0)
        assert provider.classify_error(await _failure(provider, _call())) == "transient"
    assert "litellm" in sys.modules


# --- factory --------------------------------------------------------------------------------


def test_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        make_provider(JudgeSpec(model="gemini/gemini-2.5-pro"))
    message = str(caught.value)
    assert "unknown provider 'gemini'" in message
    for known in ("openai", "anthropic", "litellm", "vllm", "ollama", "recorded"):
        assert known in message


def test_a_missing_key_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JUDGE_TEST_KEY", raising=False)
    spec = JudgeSpec(model="anthropic/claude-judge-sim", api_key_env="JUDGE_TEST_KEY")
    with pytest.raises(ProviderError, match="JUDGE_TEST_KEY"):
        make_provider(spec)
    monkeypatch.setenv("JUDGE_TEST_KEY", SECRET)
    make_provider(spec)  # found now


def test_no_key_anywhere_names_the_sdk_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        make_provider(JudgeSpec(model="openai/gpt-4.1-mini", transport="http"))
    # A local server needs no key: a dummy is sent.
    local = JudgeSpec(model="openai/m", base_url="http://localhost:8000/v1", transport="http")
    make_provider(local)


def test_self_hosted_aliases_need_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="base_url"):
        make_provider(JudgeSpec(model="vllm/Qwen/Qwen2.5-7B-Instruct"))
    # ...and never borrow OPENAI_API_KEY for another server.
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    remote = JudgeSpec(
        model="vllm/Qwen/Qwen2.5-7B-Instruct", base_url="http://gpu-box:8000/v1", transport="http"
    )
    with pytest.raises(ProviderError, match="api_key_env"):
        make_provider(remote)


def test_litellm_has_no_http_transport() -> None:
    with pytest.raises(ConfigError, match="transport"):
        make_provider(JudgeSpec(model="litellm/groq/llama-3.1-8b-instant", transport="http"))


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_importing_the_factory_and_pricing_imports_no_sdk() -> None:
    result = _python(
        """
        import sys
        import judge.providers.factory, judge.providers, judge.judging.pricing
        from judge.config.run_config import JudgeSpec
        from judge.judging.pricing import price
        from judge.types import Usage
        spec = JudgeSpec(model="openai/gpt-4.1-mini")
        assert price(spec.model, Usage(input_tokens=10), spec) > 0  # reads the table file
        print(sorted(m for m in ("openai", "anthropic", "litellm") if m in sys.modules))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_missing_sdk_names_the_install_command() -> None:
    # `sys.modules[name] = None` makes `import name` fail as if it were not installed.
    result = _python(
        """
        import sys
        sys.modules["litellm"] = sys.modules["openai"] = None
        from judge.config.run_config import JudgeSpec
        from judge.errors import ProviderError
        from judge.providers import make_provider
        for model in ("litellm/groq/llama-3.1-8b-instant", "openai/gpt-4.1-mini"):
            try:
                make_provider(JudgeSpec(model=model, api_key="sk-x", transport="sdk"))
            except ProviderError as exc:
                print(exc)
        """
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "litellm is not installed: pip install 'judge-pipeline[litellm]'"
    assert "pip install 'openai" in lines[1]


# --- pricing --------------------------------------------------------------------------------

_MILLION = Usage(input_tokens=1_000_000, output_tokens=1_000_000)


def test_table_prices_known_models() -> None:
    assert price_table_path() is not None
    # LiteLLM's table: gpt-4.1-mini at $0.40 in / $1.60 out per million tokens.
    spec = JudgeSpec(model="openai/gpt-4.1-mini")
    assert price(spec.model, _MILLION, spec) == pytest.approx(2.0)
    for model in ("anthropic/claude-sonnet-4-5", "litellm/anthropic/claude-sonnet-4-5"):
        cost = price(model, _MILLION, JudgeSpec(model=model))
        assert cost is not None and cost > 0


def test_config_prices_override_the_table() -> None:
    spec = JudgeSpec(model="openai/gpt-4.1-mini", input_cost_per_mtok=1.0, output_cost_per_mtok=3.0)
    assert price(spec.model, _MILLION, spec) == pytest.approx(4.0)
    # One side from the config, the other from the table.
    half = JudgeSpec(model="openai/gpt-4.1-mini", output_cost_per_mtok=0.0)
    assert price(half.model, _MILLION, half) == pytest.approx(0.4)


def test_unknown_models_cost_none_not_zero() -> None:
    spec = JudgeSpec(model="vllm/my-finetune-7b", base_url="http://localhost:8000/v1")
    assert price(spec.model, _MILLION, spec) is None
    priced = spec.model_copy(update={"input_cost_per_mtok": 0.0, "output_cost_per_mtok": 0.0})
    assert price(spec.model, _MILLION, priced) == 0.0


# --- Retry-After ----------------------------------------------------------------------------


def test_retry_after_forms() -> None:
    assert retry_after_from({"retry-after-ms": "1500", "retry-after": "2"}) == 1.5
    assert retry_after_from({"retry-after": "3"}) == 3.0
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 28 <= (retry_after_from({"retry-after": later}) or 0) <= 30
    assert retry_after_from({"retry-after": "soon"}) is None
    assert retry_after_from({}) is None
