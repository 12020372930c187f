"""The simulator's HTTP server: OpenAI, Anthropic and Gemini routes, control routes, fault
injection.

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

from aiohttp import web
from pydantic import ValidationError

from judge.config.simulator import SimulatorConfig
from judge.simulator import DEFAULT_PORT
from judge.simulator.anthropic_batches import add_message_batch_routes
from judge.simulator.batches import BatchBook
from judge.simulator.control import error_response, rate_limited
from judge.simulator.gemini_batches import add_gemini_batch_routes
from judge.simulator.judging import normal_pair
from judge.simulator.openai_batches import add_batch_routes
from judge.simulator.openai_files import FileStore, add_file_routes
from judge.simulator.prefix_cache import PromptCache, probe
from judge.simulator.replies import (
    Faults,
    Reply,
    anthropic_message,
    compose,
    fault_draws,
    fault_table,
    gemini_response,
    openai_completion,
    pick_fault,
)
from judge.simulator.stats import SimulatorStats, TokenBucket
from judge.simulator.wire import (
    ROUTE_PATHS,
    BadRequest,
    JudgeCall,
    Route,
    has_key,
    new_id,
    parse_anthropic,
    parse_gemini,
    parse_openai,
)

_NO_DRAWS = (1.0, 0.5, 0.5, 0.5)  # when nothing random is configured: no fault, median latency
_JSON = "application/json"


class _Simulator:
    """State shared by the handlers of one app: config, counters, rate bucket, prompt cache,
    and the batch and file stores of the batch routes."""

    def __init__(self, config: SimulatorConfig) -> None:
        self.config = config
        self._fresh_state()
        self.closing = asyncio.Event()

    def _fresh_state(self) -> None:
        self.stats = SimulatorStats()
        self.bucket = _bucket(self.config)
        self.cache = PromptCache()
        self.book = BatchBook(self.config.seed)
        self.files = FileStore()

    @property
    def config(self) -> SimulatorConfig:
        return self._config

    @config.setter
    def config(self, config: SimulatorConfig) -> None:
        self._config = config
        # Precomputed once per config: the per-request path only walks the non-zero rates.
        self._faults = fault_table(config)
        self._draws_needed = bool(self._faults) or config.latency.kind == "lognormal"

    @property
    def faults(self) -> Faults:
        return self._faults

    async def openai(self, request: web.Request) -> web.Response:
        return await self._serve(request, "openai")

    async def anthropic(self, request: web.Request) -> web.Response:
        return await self._serve(request, "anthropic")

    async def gemini(self, request: web.Request) -> web.Response:
        return await self._serve(request, "gemini")

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
        if not has_key(request.headers, route):
            stats.by_outcome["unauthorized"] += 1
            return error_response("unauthorized", route, request_id, headers)
        try:
            payload = json.loads(await request.read())
            call = _parse(route, payload, request)
        except ValueError:
            stats.by_outcome["bad_request"] += 1
            return error_response(
                "bad_request", route, request_id, headers, "the body is not valid JSON"
            )
        except BadRequest as exc:
            stats.by_outcome["bad_request"] += 1
            return error_response("bad_request", route, request_id, headers, exc.message, exc.param)
        stats.by_model[call.model] += 1
        self.book.note_sync(call.content_key)

        config = self.config
        if self.bucket is not None:
            wait_s = self.bucket.take()
            if wait_s:
                stats.by_outcome["rpm_429"] += 1
                return rate_limited(route, request_id, headers, wait_s)

        attempt = stats.attempts[call.content_key]
        stats.attempts[call.content_key] = attempt + 1
        draws = fault_draws(config, call, attempt) if self._draws_needed else _NO_DRAWS
        outcome = pick_fault(self._faults, draws[0])
        if outcome == "429":
            stats.by_outcome["429"] += 1
            return rate_limited(route, request_id, headers, config.retry_after_s)
        # The reply is composed before the wait, so the outcome is counted even when the client
        # gives up during the wait.
        body, output_tokens, cached = b"", 0, (0, 0)
        if outcome not in ("500", "overloaded"):
            body, reply = self._reply(config, call, outcome)
            output_tokens, cached = reply.output_tokens, (reply.cache_read, reply.cache_written)
            if outcome == "ok" and not reply.judged:
                outcome = "no_candidates"
        stats.by_outcome[outcome] += 1

        if outcome == "stall":
            if not await self._stall(config.stall_s):
                return error_response("shutting_down", route, request_id, headers)
        else:
            latency = _latency(config, draws)
            if latency > 0:
                await asyncio.sleep(latency)
        if outcome in ("500", "overloaded"):
            return error_response(outcome, route, request_id, headers)
        if outcome == "truncated":
            # A complete HTTP response whose JSON stops mid-way, as from a broken proxy.
            cut = max(1, int(len(body) * (0.3 + 0.5 * draws[3])))
            return web.Response(body=body[:cut], content_type=_JSON, headers=headers)
        stats.answer(call.content_key)
        stats.input_tokens += call.input_chars // 4
        stats.output_tokens += output_tokens
        stats.cache_read_tokens += cached[0]
        stats.cache_write_tokens += cached[1]
        return web.Response(body=body, content_type=_JSON, headers=headers)

    def _reply(self, config: SimulatorConfig, call: JudgeCall, outcome: str) -> tuple[bytes, Reply]:
        """The response body and the reply it carries, the prompt cache read and written."""
        reply = compose(config, call, outcome)
        reply.cache_read, reply.cache_written = self.cache.apply(config, probe(config, call))
        if call.route == "openai":
            body = openai_completion(reply, new_id("chatcmpl-"))
        elif call.route == "gemini":
            body = gemini_response(reply, new_id(""))
        else:
            body = anthropic_message(reply, new_id("msg_"), new_id("toolu_"))
        return json.dumps(body).encode(), reply

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
        snapshot = self.stats.snapshot(with_hashes=with_hashes)
        snapshot["prompt_cache"] = self.cache.snapshot()
        snapshot["batches"] = {
            **self.book.snapshot(with_hashes=with_hashes),
            "files": len(self.files.files),
        }
        return web.json_response(snapshot)

    async def reset(self, request: web.Request) -> web.Response:
        self._fresh_state()
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
    # The limit of bodies read whole (judge requests, control calls). The two large bodies are
    # streamed instead, under the providers' own limits: an Anthropic batch create (256 MB) and
    # an OpenAI file upload (512 MB).
    app = web.Application(client_max_size=64 * 1024**2)
    app[_SIMULATOR] = simulator
    app.router.add_post(ROUTE_PATHS["openai"], simulator.openai)
    app.router.add_post(ROUTE_PATHS["anthropic"], simulator.anthropic)
    app.router.add_post(ROUTE_PATHS["gemini"], simulator.gemini)
    add_file_routes(app, simulator)
    add_batch_routes(app, simulator)
    add_message_batch_routes(app, simulator)
    add_gemini_batch_routes(app, simulator)
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
        print(
            f"  Gemini:    base_url={url}  (POST /v1beta/models/MODEL:generateContent)", flush=True
        )
        print(
            f"  batches:   {url}/v1/batches, {url}/v1/messages/batches, {url}/v1beta/batches",
            flush=True,
        )
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


def _parse(route: Route, payload: object, request: web.Request) -> JudgeCall:
    if route == "openai":
        return parse_openai(payload)
    if route == "gemini":
        return parse_gemini(payload, request.match_info["model"])
    return parse_anthropic(payload)


def _bucket(config: SimulatorConfig) -> TokenBucket | None:
    return TokenBucket(config.rpm_capacity, config.rpm_burst) if config.rpm_capacity else None


def _latency(config: SimulatorConfig, draws: tuple[float, float, float, float]) -> float:
    latency = config.latency
    if latency.kind == "fixed" or latency.median_s <= 0:
        return latency.median_s
    return latency.median_s * math.exp(latency.sigma * normal_pair(draws[1], draws[2])[0])
