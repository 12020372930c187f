"""The batch engine: a batch-mode judge's pending requests grouped into provider batches,
submitted once each, polled, and their results stored through the same parse, repair, cache
and store path as synchronous replies.

Per judge, one loop: recover what the ledger says is open (a batch left `submitting` by a
killed run is looked up at the provider before anything is submitted again), plan new batches
from the queue (requests with no response and no open batch; one already answered by the
response cache is stored, not sent), submit them (the estimate is committed against the
budget from then on), poll the open ones, collect those that ended. Failed, expired and
cancelled requests go back to the queue: into a new batch, or, once they have been in
`max_tries` batches or the judge's deadline has passed, to synchronous calls (the runner's own
retries then decide their end). So every request ends with a verdict, a recorded parse
failure or a recorded error.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from judge.batch.api import BatchAPI, Remote, Result, Unsubmitted
from judge.batch.ledger import (
    Batch,
    Ledger,
    Outcome,
    Queued,
    custom_id,
    new_batch_id,
    request_id_of,
    seconds_since,
)
from judge.config.run_config import JudgeSpec
from judge.judging.cost_estimate import worst_case_cost
from judge.judging.pricing import price
from judge.judging.runner import Outcome as Stored
from judge.judging.runner import Runner, cached_outcome
from judge.judging.tally import BatchProgress, Counts
from judge.providers.base import ProviderCall
from judge.store.rundir import RunDir
from judge.types import JudgeRequest, JudgeResponse

_PAGE = 1000
_CHUNK = 256
"""Results settled and stored at a time."""
_MAX_POLL_S = 600.0
_RETRY_S = 5.0
"""First wait after a control call failed (doubled up to `_MAX_POLL_S`)."""


def make_api(spec: JudgeSpec) -> BatchAPI:
    if spec.provider == "anthropic":
        from judge.batch.anthropic_api import AnthropicBatchAPI

        return AnthropicBatchAPI(spec)
    if spec.provider == "google":
        from judge.batch.gemini_api import GeminiBatchAPI

        return GeminiBatchAPI(spec)
    from judge.batch.openai_api import OpenAIBatchAPI

    return OpenAIBatchAPI(spec)


class BatchEngine:
    """Judges the batch-mode judges of a run. `runner` (judges: the batch judges) makes the
    synchronous calls: repairs of unparseable batch replies and requests past the deadline."""

    def __init__(
        self,
        runner: Runner,
        specs: Sequence[JudgeSpec],
        *,
        apis: dict[str, BatchAPI] | None = None,
        preparing: threading.Event | None = None,
        recorded: Counts | None = None,
        progress: BatchProgress | None = None,
    ) -> None:
        self.runner = runner
        self.store = runner.store
        self.ledger = Ledger(self.store)
        self.specs = list(specs)
        self._apis = apis or {}
        self._preparing = preparing
        self.recorded = runner.recorded if recorded is None else recorded
        self.progress = BatchProgress() if progress is None else progress
        self._sync_lock = asyncio.Lock()
        self._next_poll: dict[str, float] = {}
        self._poll_wait: dict[str, float] = {}
        self._cancelled: set[str] = set()
        self._requeued = {spec.model for spec in self.specs}
        """Judges whose queue may hold requests no batch has: read it at the next turn."""
        self._body_dir = RunDir(self.store.run_dir).batches_dir

    async def run(self) -> None:
        try:
            await asyncio.gather(*(self._judge(spec) for spec in self.specs))
        finally:
            for api in self._apis.values():
                await api.aclose()
            await self.runner.aclose()

    def api(self, spec: JudgeSpec) -> BatchAPI:
        if spec.model not in self._apis:
            self._apis[spec.model] = make_api(spec)
        return self._apis[spec.model]

    # -- one judge ------------------------------------------------------------------------------

    async def _judge(self, spec: JudgeSpec) -> None:
        api = self.api(spec)
        budget = self.runner.budget
        for batch in self._open(spec):
            if batch.state in ("submitting", "submitted"):
                budget.committed_usd += batch.estimate_usd or 0.0
        self._refresh_progress()
        while True:
            past_deadline = self._past_deadline(spec)
            now = time.monotonic()
            for batch in self._open(spec):
                if self._next_poll.get(batch.batch_id, 0.0) > now:
                    continue  # backing off, or waiting out an interrupted create
                if batch.state == "planned":
                    await self._submit(spec, api, batch)
                elif batch.state == "submitting":
                    await self._recover(spec, api, batch)
            await self._poll(spec, api, past_deadline)
            planned_any = False
            # The queue changes only as the prepare stores requests and as batches end (their
            # failed requests come back): read it then, not at every poll.
            if not self.runner.budget_stopped and (
                spec.model in self._requeued or self._waiting_for_prepare()
            ):
                self._requeued.discard(spec.model)
                planned_any = await self._plan(spec, api, past_deadline)
            self._refresh_progress()
            idle = not planned_any and not self._open(spec) and not self._waiting_for_prepare()
            if idle and (self.runner.budget_stopped or not self.ledger.queued(spec.model, 0, 1)):
                return
            await asyncio.sleep(self._sleep_s(spec))

    def _open(self, spec: JudgeSpec) -> list[Batch]:
        return [b for b in self.ledger.batches() if b.judge == spec.model]

    def _past_deadline(self, spec: JudgeSpec) -> bool:
        if spec.batch.deadline_h is None:
            return False
        first = self.ledger.first_submitted(spec.model)
        return first is not None and seconds_since(first) > spec.batch.deadline_h * 3600

    def _waiting_for_prepare(self) -> bool:
        return self._preparing is not None and self._preparing.is_set()

    def _sleep_s(self, spec: JudgeSpec) -> float:
        now = time.monotonic()
        due = [t - now for t in self._next_poll.values()]
        return max(0.01, min([spec.batch.poll_s, *due]))

    # -- planning -------------------------------------------------------------------------------

    async def _plan(self, spec: JudgeSpec, api: BatchAPI, past_deadline: bool) -> bool:
        """Batches from the queue: as many as it fills (a partial one only once the prepare
        has stored every request). Requests past their tries or the deadline go synchronous.
        A body is written to its file line by line: memory holds a page of requests."""
        max_requests = min(spec.batch.max_requests, api.limits[0])
        max_bytes = min(int(spec.batch.max_mb * 1024**2), api.limits[1])
        planned = False
        after = 0
        body: _Body | None = None
        sync: list[JudgeRequest] = []
        try:
            while page := self.ledger.queued(spec.model, after, _PAGE):
                after = page[-1].rowid
                for queued in await self._uncached(page):
                    request = queued.request
                    if past_deadline or queued.tries >= spec.batch.max_tries:
                        sync.append(request)
                        if len(sync) >= _PAGE:
                            await self._sync(sync)
                            sync = []
                        continue
                    line = api.line(custom_id(request.request_id), self._call(spec, request))
                    if body is not None and (
                        len(body.ids) >= max_requests or body.size + len(line) + 1 > max_bytes
                    ):
                        if not await self._new_batch(spec, api, body):
                            return planned
                        planned, body = True, None
                    if body is None:
                        body = _Body(self._body(new_batch_id()))
                    body.add(request.request_id, line, self._estimate(spec, request))
            if sync:
                await self._sync(sync)
            if body is not None and not self._waiting_for_prepare():
                planned = await self._new_batch(spec, api, body) or planned
                body = None
            elif body is not None:
                # A partial batch waits for the prepare's last requests. Plan again next turn
                # even if nothing is requeued: the prepare may end before it, and nothing
                # else would read the queue again.
                self._requeued.add(spec.model)
        finally:
            if body is not None:
                body.discard()
        return planned

    async def _uncached(self, page: list[Queued]) -> list[Queued]:
        """The page without the requests the response cache answers (stored at once)."""
        hits: list[Stored] = []
        rest: list[Queued] = []
        for queued in page:
            hit = cached_outcome(self.store, queued.request, self.runner.rubric)
            if hit is None:
                rest.append(queued)
            else:
                hits.append(hit)
        if hits:
            self.runner.stats.cached += len(hits)
            self._record(hits)
        return rest

    def _call(self, spec: JudgeSpec, request: JudgeRequest) -> ProviderCall:
        return ProviderCall(
            request=request,
            messages=request.messages,
            schema=self.runner.schema if spec.structured_output else None,
            timeout_s=spec.timeout_s,
        )

    def _estimate(self, spec: JudgeSpec, request: JudgeRequest) -> float:
        return worst_case_cost(request, spec, batch=True)

    async def _new_batch(self, spec: JudgeSpec, api: BatchAPI, body: _Body) -> bool:
        """Finish the body file, plan the batch (ledger), submit it. False when the budget
        cannot take it: nothing more is batched."""
        if not self.runner.budget.allows(body.estimate):
            body.discard()
            self.runner.stop_for_budget(len(body.ids))
            return False
        body.finish()
        self.ledger.plan(body.batch_id, spec.model, api.api, body.ids, body.size, body.estimate)
        await self._submit(spec, api, self.ledger.batch(body.batch_id))
        return True

    def _body(self, batch_id: str) -> Path:
        return self._body_dir / f"{batch_id}.jsonl"

    # -- submitting -----------------------------------------------------------------------------

    async def _submit(self, spec: JudgeSpec, api: BatchAPI, batch: Batch) -> None:
        """planned -> submitting -> submitted. `submitting` is committed before the create
        call: if this process dies during it, the next one looks the batch up first."""
        body = self._body(batch.batch_id)
        if batch.input_file_id is None:
            try:
                file_id = await api.upload(batch, body)
            except Exception as exc:
                self._backoff(batch, exc)
                return
            if file_id is not None:
                self.ledger.set_file(batch.batch_id, file_id)
                batch = self.ledger.batch(batch.batch_id)
        self.ledger.submitting(batch.batch_id)
        self.runner.budget.committed_usd += batch.estimate_usd or 0.0
        try:
            provider_id = await api.create(batch, body)
        except Unsubmitted as refused:
            self.runner.budget.committed_usd -= batch.estimate_usd or 0.0
            if refused.final:
                # Every request goes back to the queue (and, past its tries, to a sync call).
                outcomes = [(r, "failed") for r in self.ledger.open_items(batch.batch_id)]
                self.ledger.close(batch.batch_id, "abandoned", outcomes, str(refused)[:500])
                self._requeued.add(spec.model)
            else:
                self.ledger.unsubmitted(batch.batch_id, str(refused)[:500])
                self._backoff(batch, refused)
            return
        except Exception as exc:
            # Unknown whether the provider created it: left `submitting`, looked up later.
            self._backoff(batch, exc)
            return
        self.ledger.submitted(batch.batch_id, provider_id)
        self._next_poll[batch.batch_id] = time.monotonic() + spec.batch.poll_s
        self._poll_wait[batch.batch_id] = spec.batch.poll_s

    async def _recover(self, spec: JudgeSpec, api: BatchAPI, batch: Batch) -> None:
        """A batch whose create may or may not have happened: wait out the create's timeout,
        then look it up; submit it only if the provider has no such batch."""
        assert batch.submit_started_at is not None
        waited = seconds_since(batch.submit_started_at)
        if waited < spec.batch.submit_timeout_s:
            self._next_poll[batch.batch_id] = (
                time.monotonic() + spec.batch.submit_timeout_s - waited
            )
            return
        try:
            found = await api.find(batch, self.ledger.known_provider_ids())
        except Exception as exc:
            self._backoff(batch, exc)
            return
        self._next_poll.pop(batch.batch_id, None)
        if found is not None:
            self.ledger.submitted(batch.batch_id, found, adopted=True)
            self._next_poll[batch.batch_id] = time.monotonic()
            self._poll_wait[batch.batch_id] = spec.batch.poll_s
            return
        self.runner.budget.committed_usd -= batch.estimate_usd or 0.0
        self.ledger.unsubmitted(
            batch.batch_id, "not found at the provider after an interrupted create"
        )
        await self._submit(spec, api, self.ledger.batch(batch.batch_id))

    def _backoff(self, batch: Batch, exc: BaseException) -> None:
        wait = min(_MAX_POLL_S, 2 * self._poll_wait.get(batch.batch_id, _RETRY_S / 2))
        self._poll_wait[batch.batch_id] = wait
        self._next_poll[batch.batch_id] = time.monotonic() + wait
        self.runner.stats.errors[type(exc).__name__] = (
            self.runner.stats.errors.get(type(exc).__name__, 0) + 1
        )

    # -- polling and collecting -----------------------------------------------------------------

    async def _poll(self, spec: JudgeSpec, api: BatchAPI, past_deadline: bool) -> None:
        now = time.monotonic()
        for batch in self._open(spec):
            if batch.state != "submitted" or batch.provider_id is None:
                continue
            if self._next_poll.get(batch.batch_id, 0.0) > time.monotonic():
                continue
            try:
                remote = await api.status(batch.provider_id)
            except Exception as exc:
                self._backoff(batch, exc)
                continue
            changed = remote.counts != batch.counts or remote.status != batch.provider_status
            self.ledger.seen(batch.batch_id, remote.status, remote.counts)
            if remote.ended:
                await self._collect(spec, api, batch, remote)
                continue
            if past_deadline and batch.batch_id not in self._cancelled:
                with contextlib.suppress(Exception):
                    await api.cancel(batch.provider_id)
                self._cancelled.add(batch.batch_id)
            wait = (
                spec.batch.poll_s
                if changed
                else 2 * self._poll_wait.get(batch.batch_id, spec.batch.poll_s)
            )
            self._poll_wait[batch.batch_id] = min(_MAX_POLL_S, wait)
            self._next_poll[batch.batch_id] = now + self._poll_wait[batch.batch_id]

    async def _collect(self, spec: JudgeSpec, api: BatchAPI, batch: Batch, remote: Remote) -> None:
        """Store an ended batch's results; then close it (each request's outcome) and release
        its committed estimate. Collecting again after a crash stores nothing twice: a request
        already answered is skipped (and its repair not paid again)."""
        ours = set(self.ledger.open_items(batch.batch_id))
        outcomes: list[tuple[str, Outcome]] = []
        chunk: list[Result] = []
        try:
            async for result in api.results(remote):
                request_id = request_id_of(result.custom_id)
                if request_id not in ours:
                    if batch.adopted:
                        # Not the batch an interrupted create made: someone else's.
                        self.ledger.reject(batch.batch_id, remote.provider_id)
                        self.runner.budget.committed_usd -= batch.estimate_usd or 0.0
                        return
                    continue
                chunk.append(result)
                if len(chunk) >= _CHUNK:
                    outcomes += await self._settle(spec, batch, chunk)
                    chunk = []
            if chunk:
                outcomes += await self._settle(spec, batch, chunk)
        except Exception as exc:
            self._backoff(batch, exc)
            return
        self.ledger.close(batch.batch_id, "collected", outcomes, remote.errors or "")
        self._requeued.add(spec.model)
        self.runner.budget.committed_usd -= batch.estimate_usd or 0.0
        self._next_poll.pop(batch.batch_id, None)
        self._poll_wait.pop(batch.batch_id, None)

    async def _settle(
        self, spec: JudgeSpec, batch: Batch, chunk: list[Result]
    ) -> list[tuple[str, Outcome]]:
        ids = [request_id_of(r.custom_id) for r in chunk]
        requests = self.ledger.requests(ids)
        done = self.ledger.answered(ids)
        outcomes: list[tuple[str, Outcome]] = []
        work = []
        for result, request_id in zip(chunk, ids, strict=True):
            if request_id in done:
                continue
            if result.outcome in ("answered", "error"):
                work.append(self._stored(spec, batch, requests[request_id], result))
            else:
                outcomes.append((request_id, result.outcome))
        stored = await asyncio.gather(*work)
        self._record(list(stored))
        outcomes += [(response.request_id, "error") for response, _ in stored if response.error]
        return outcomes

    async def _stored(
        self, spec: JudgeSpec, batch: Batch, request: JudgeRequest, result: Result
    ) -> Stored:
        if result.reply is None:
            self.runner.stats.failed += 1
            kind = "BatchRequestError"
            self.runner.stats.errors[kind] = self.runner.stats.errors.get(kind, 0) + 1
            response = JudgeResponse(
                request_id=request.request_id,
                text=None,
                attempts=1,
                error=result.error or "the batch reported an error",
                batch_id=batch.batch_id,
            )
            return response, None
        reply = result.reply
        cost = price(spec.model, reply.usage, spec, batch=True)
        self.runner.stats.sent += 1
        return await self.runner.settle(
            request,
            reply.text,
            usage=reply.usage,
            cost_usd=cost,
            attempts=1,
            started=None,
            provider_request_id=reply.provider_request_id,
            batch_id=batch.batch_id,
        )

    def _record(self, outcomes: list[Stored]) -> None:
        if not outcomes:
            return
        self.store.record_responses(outcomes)
        self.recorded.add(outcomes)

    async def _sync(self, requests: list[JudgeRequest]) -> None:
        """Requests past their batch tries or the deadline: synchronous calls, the runner's
        retries and error recording as for any judge."""
        async with self._sync_lock:
            await self.runner.run(requests, close=False)

    def _refresh_progress(self) -> None:
        counts = {"planned": 0, "submitting": 0, "submitted": 0}
        in_flight = 0
        for batch in self.ledger.batches():
            counts[batch.state] += 1
            in_flight += batch.requests
        outcomes = self.ledger.outcomes()
        (done,) = self.store.connection.execute(
            "SELECT COUNT(*) FROM batches WHERE state = 'collected'"
        ).fetchone()
        p = self.progress
        p.submitted = counts["submitted"] + counts["submitting"]
        p.planned = counts["planned"]
        p.done = int(done)
        p.in_flight = in_flight
        p.answered = outcomes.get("answered", 0)


class _Body:
    """A batch body being written: lines to `<batch id>.jsonl.part`, renamed when complete
    (before the batch is planned, so a planned batch always has its body)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.batch_id = path.stem
        path.parent.mkdir(parents=True, exist_ok=True)
        self._partial = path.with_suffix(".part")
        self._handle = self._partial.open("wb")
        self.ids: list[str] = []
        self.size = 0
        self.estimate = 0.0

    def add(self, request_id: str, line: bytes, estimate: float) -> None:
        self._handle.write(line + b"\n")
        self.ids.append(request_id)
        self.size += len(line) + 1
        self.estimate += estimate

    def finish(self) -> None:
        self._handle.close()
        self._partial.replace(self.path)

    def discard(self) -> None:
        self._handle.close()
        self._partial.unlink(missing_ok=True)
