"""The simulator's HTTP server: OpenAI and Anthropic routes, control routes, fault injection.

Per request: validate, count, rate-limit, draw the fault for this attempt, judge, reply. Kept
lean (no middleware, no access log, precompiled patterns) so one core serves thousands of
requests per second and a client benchmark measures the client, not the simulator.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import signal
from functools import lru_cache
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from judge.families import family_of
from judge.simulator import DEFAULT_PORT
from judge.simulator.config import SimulatorConfig
from judge.simulator.judging import (
    MALFORMED_TEXT,
    NO_CANDIDATES_TEXT,
    REFUSAL_TEXT,
    decide,
    normal_pair,
    reply_text,
    structured_reply,
    uniforms,
)
from judge.simulator.stats import SimulatorStats, TokenBucket
from judge.simulator.wire import (
    ROUTE_PATHS,
    BadRequest,
    JudgeCall,
    Route,
    anthropic_message,
    error_body,
    error_status,
    new_id,
    openai_completion,
    parse_anthropic,
    parse_openai,
)

_FAULTS = ("429", "500", "overloaded", "stall", "truncated", "malformed", "refusal")
_NO_DRAWS = (1.0, 0.5, 0.5, 0.5)  # when nothing random is configured: no fault, median latency
_JSON = "application/json"


class _Simulator:
    """State shared by the handlers of one app: config, counters, rate bucket."""

    def __init__(self, config: SimulatorConfig) -> None:
        self.config = config
        self.stats = SimulatorStats()
        self.bucket = _bucket(config)
        self.closing = asyncio.Event()

    @property
    def config(self) -> SimulatorConfig:
        return self._config

    @config.setter
    def config(self, config: SimulatorConfig) -> None:
        self._config = config
        # Precomputed once per config: the per-request path only walks the non-zero rates.
        self._faults = tuple(
            (name, getattr(config, f"rate_{name}"))
            for name in _FAULTS
            if getattr(config, f"rate_{name}") > 0
        )
        self._draws_needed = bool(self._faults) or config.latency.kind == "lognormal"

    async def openai(self, request: web.Request) -> web.Response:
        return await self._serve(request, "openai")

    async def anthropic(self, request: web.Request) -> web.Response:
        return await self._serve(request, "anthropic")

    async def _serve(self, request: web.Request, route: Route) -> web.Response:
        # Bound once: a /_reset while this request is in flight swaps in fresh counters.
        stats = self.stats
        stats.enter(ROUTE_PATHS[route])
        try:
            return await self._judge(request, route, stats)
        finally:
            stats.leave()

    async def _judge(
        self, request: web.Request, route: Route, stats: SimulatorStats
    ) -> web.Response:
        request_id = new_id("req_")
        headers = {"x-request-id" if route == "openai" else "request-id": request_id}
        if not _has_key(request, route):
            stats.by_outcome["unauthorized"] += 1
            return _error("unauthorized", route, request_id, headers)
        try:
            payload = json.loads(await request.read())
            call = parse_openai(payload) if route == "openai" else parse_anthropic(payload)
        except ValueError:
            stats.by_outcome["bad_request"] += 1
            return _error("bad_request", route, request_id, headers, "the body is not valid JSON")
        except BadRequest as exc:
            stats.by_outcome["bad_request"] += 1
            return _error("bad_request", route, request_id, headers, exc.message, exc.param)
        stats.by_model[call.model] += 1

        config = self.config
        if self.bucket is not None:
            wait_s = self.bucket.take()
            if wait_s:
                stats.by_outcome["rpm_429"] += 1
                return _error("429", route, request_id, {**headers, **_retry_after(wait_s)})

        # The attempt number makes a retry of the same content draw its fault afresh, while
        # the verdict (seeded by content only) stays the same.
        attempt = stats.attempts[call.content_key]
        stats.attempts[call.content_key] = attempt + 1
        draws = _NO_DRAWS
        if self._draws_needed:
            draws = uniforms(config.seed, b"fault", call.content_digest, attempt.to_bytes(8, "big"))
        outcome = _pick_fault(self._faults, draws[0])
        if outcome == "429":
            stats.by_outcome["429"] += 1
            return _error(
                "429", route, request_id, {**headers, **_retry_after(config.retry_after_s)}
            )
        # The reply is composed before the wait, so the outcome is counted even when the client
        # gives up during the wait.
        body, output_chars = b"", 0
        if outcome not in ("500", "overloaded"):
            body, output_chars, judged = self._reply(config, call, outcome)
            if outcome == "ok" and not judged:
                outcome = "no_candidates"
        stats.by_outcome[outcome] += 1

        if outcome == "stall":
            if not await self._stall(config.stall_s):
                return _error("shutting_down", route, request_id, headers)
        else:
            latency = _latency(config, draws)
            if latency > 0:
                await asyncio.sleep(latency)
        if outcome in ("500", "overloaded"):
            return _error(outcome, route, request_id, headers)
        if outcome == "truncated":
            # A complete HTTP response whose JSON stops mid-way, as from a broken proxy.
            cut = max(1, int(len(body) * (0.3 + 0.5 * draws[3])))
            return web.Response(body=body[:cut], content_type=_JSON, headers=headers)
        stats.answer(call.content_key)
        stats.input_tokens += call.input_chars // 4
        stats.output_tokens += output_chars // 4
        return web.Response(body=body, content_type=_JSON, headers=headers)

    def _reply(
        self, config: SimulatorConfig, call: JudgeCall, outcome: str
    ) -> tuple[bytes, int, bool]:
        """(response body, reply characters, whether a verdict was given)."""
        tool_input: dict[str, Any] | None = None
        judged = False
        if outcome == "malformed":
            text = MALFORMED_TEXT
        elif outcome == "refusal":
            text = REFUSAL_TEXT
        else:
            family = config.family or _family(call.model)
            decision = decide(config, family, call.user_text, call.content_digest, call.system_text)
            if decision is None:
                text = NO_CANDIDATES_TEXT
            else:
                judged = True
                if call.output_mode == "text":
                    text = reply_text(decision, config.reply_style)
                else:
                    structured = structured_reply(decision, call.schema)
                    text = json.dumps(structured)
                    tool_input = structured if call.output_mode == "tool" else None
        if call.route == "openai":
            reply = openai_completion(call, text, refusal=outcome == "refusal")
        else:
            reply = anthropic_message(call, text, tool_input)
        return json.dumps(reply).encode(), len(text), judged

    async def _stall(self, seconds: float) -> bool:
        """Hang for `seconds`; False when the server shuts down meanwhile."""
        try:
            async with asyncio.timeout(seconds):
                await self.closing.wait()
        except TimeoutError:
            return True
        return False

    async def health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def get_stats(self, request: web.Request) -> web.Response:
        with_hashes = request.query.get("hashes", "") not in ("", "0", "false")
        return web.json_response(self.stats.snapshot(with_hashes=with_hashes))

    async def reset(self, request: web.Request) -> web.Response:
        self.stats = SimulatorStats()
        self.bucket = _bucket(self.config)
        return web.json_response({"status": "reset"})

    async def get_config(self, request: web.Request) -> web.Response:
        return web.json_response(self.config.model_dump(mode="json"))

    async def update_config(self, request: web.Request) -> web.Response:
        try:
            changes = await request.json()
            if not isinstance(changes, dict):
                raise ValueError("expected a JSON object of knobs")
            merged = self.config.model_dump()
            if isinstance(changes.get("latency"), dict):
                changes = {**changes, "latency": {**merged["latency"], **changes["latency"]}}
            config = SimulatorConfig.model_validate({**merged, **changes})
        except (ValueError, ValidationError) as exc:
            return web.json_response({"error": str(exc)}, status=400)
        rate_changed = (config.rpm_capacity, config.rpm_burst) != (
            self.config.rpm_capacity,
            self.config.rpm_burst,
        )
        self.config = config
        if rate_changed:
            self.bucket = _bucket(config)
        return web.json_response(config.model_dump(mode="json"))

    async def on_shutdown(self, app: web.Application) -> None:
        self.closing.set()


_SIMULATOR = web.AppKey("simulator", _Simulator)


def build_app(config: SimulatorConfig | None = None) -> web.Application:
    """The aiohttp application serving one simulated judge."""
    simulator = _Simulator(config or SimulatorConfig())
    app = web.Application(client_max_size=64 * 1024**2)
    app[_SIMULATOR] = simulator
    app.router.add_post(ROUTE_PATHS["openai"], simulator.openai)
    app.router.add_post(ROUTE_PATHS["anthropic"], simulator.anthropic)
    app.router.add_get("/health", simulator.health)
    app.router.add_get("/_stats", simulator.get_stats)
    app.router.add_post("/_reset", simulator.reset)
    app.router.add_get("/_config", simulator.get_config)
    app.router.add_post("/_config", simulator.update_config)
    app.on_shutdown.append(simulator.on_shutdown)
    return app


async def serve(
    config: SimulatorConfig | None = None, host: str = "127.0.0.1", port: int = 0
) -> tuple[web.AppRunner, int]:
    """Start serving on the running loop; returns the runner (`await runner.cleanup()` stops
    it) and the bound port (useful with `port=0`)."""
    # handler_cancellation: a client that gives up (timeout) cancels its handler, so stalled
    # requests do not pile up and in-flight counts stay true.
    runner = web.AppRunner(
        build_app(config), access_log=None, handler_cancellation=True, shutdown_timeout=2.0
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=1024)
    await site.start()
    return runner, runner.addresses[0][1]


def run(
    config: SimulatorConfig | None = None, host: str = "127.0.0.1", port: int = DEFAULT_PORT
) -> None:
    """Serve until Ctrl-C or SIGTERM (the `judge simulate` command)."""

    async def main() -> None:
        runner, actual = await serve(config, host, port)
        url = f"http://{host}:{actual}"
        print(f"judge simulator listening on {url}", flush=True)
        print(f"  OpenAI:    base_url={url}/v1  (POST /v1/chat/completions)", flush=True)
        print(f"  Anthropic: base_url={url}  (POST /v1/messages)", flush=True)
        print(f"  stats:     GET {url}/_stats   Ctrl-C stops", flush=True)
        stop = asyncio.Event()
        # SIGTERM (a process manager, a test harness) stops as cleanly as Ctrl-C.
        with contextlib.suppress(NotImplementedError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        try:
            await stop.wait()
        finally:
            await runner.cleanup()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())


def _bucket(config: SimulatorConfig) -> TokenBucket | None:
    return TokenBucket(config.rpm_capacity, config.rpm_burst) if config.rpm_capacity else None


@lru_cache(maxsize=1024)
def _family(model: str) -> str:
    return family_of(model)


def _has_key(request: web.Request, route: Route) -> bool:
    authorization = request.headers.get("Authorization", "")
    if authorization.startswith("Bearer ") and authorization[7:].strip():
        return True
    return route == "anthropic" and bool(request.headers.get("x-api-key", "").strip())


def _pick_fault(faults: tuple[tuple[str, float], ...], draw: float) -> str:
    for name, rate in faults:
        if draw < rate:
            return name
        draw -= rate
    return "ok"


def _latency(config: SimulatorConfig, draws: tuple[float, float, float, float]) -> float:
    latency = config.latency
    if latency.kind == "fixed" or latency.median_s <= 0:
        return latency.median_s
    return latency.median_s * math.exp(latency.sigma * normal_pair(draws[1], draws[2])[0])


def _retry_after(seconds: float) -> dict[str, str]:
    # Retry-After is whole seconds by the HTTP spec; both SDKs prefer the finer retry-after-ms.
    return {
        "retry-after": str(max(0, math.ceil(seconds))),
        "retry-after-ms": str(max(0, round(seconds * 1000))),
    }


def _error(
    kind: str,
    route: Route,
    request_id: str,
    headers: dict[str, str],
    message: str = "",
    param: str | None = None,
) -> web.Response:
    return web.Response(
        body=error_body(kind, route, request_id, message, param),
        status=error_status(kind, route),
        content_type=_JSON,
        headers=headers,
    )
