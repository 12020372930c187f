"""What the providers' batch APIs (OpenAI, Anthropic, Gemini) share: a batch's timeline, its
items judged as the same requests sent synchronously would be, and the book of every batch,
which also counts double submissions.

A batch is judged whole when it is created (`Stager` judges each item without touching shared
state, `BatchBook.open` then commits it: submissions, prompt cache, counters), and kept
compactly: per item its custom id, an outcome code and a small `Reply`. What a look at it shows
(status, counts, which items were done) is a function of the time since its creation, so a
batch needs no background task.

Timeline, as fractions of `batch_delay_s`: validating for the first 5 %, items done one after
another in input order until 95 %, then finalizing, ended at 100 %. A cancel ends the batch at
once: the items done by then keep their results, the rest are canceled. An expired batch ends
on time with only a seeded fraction of its items done.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from judge.config.simulator import SimulatorConfig
from judge.simulator.judging import uniforms
from judge.simulator.prefix_cache import NO_PROBE, CacheProbe, PromptCache, probe
from judge.simulator.replies import Faults, Reply, batch_outcome, compose
from judge.simulator.wire import JudgeCall, Route

OK, FAILED, INVALID = 0, 1, 2
"""Item outcome codes: answered (a verdict, or a malformed reply or a refusal), a retryable
server error, a final invalid-request error."""
_VALIDATING, _FINALIZING = 0.05, 0.95
ROUTES: dict[Route, str] = {
    "openai": "/v1/batches",
    "anthropic": "/v1/messages/batches",
    "gemini": "/v1beta/batches",
}
Phase = Literal["validating", "in_progress", "finalizing", "canceling", "ended"]
ItemState = Literal["pending", "succeeded", "failed", "invalid", "expired", "canceled"]
_CODE_STATES: dict[int, ItemState] = {OK: "succeeded", FAILED: "failed", INVALID: "invalid"}


@dataclass(frozen=True, slots=True)
class View:
    """A batch as one look at it sees it."""

    phase: Phase
    done: int
    """Items done (answered or errored) so far; at the end, those done before it ended."""


class Batch:
    """One batch of either provider; provider details live in `extra`."""

    __slots__ = (
        "batch_id",
        "canceled_at",
        "codes",
        "created",
        "custom_ids",
        "delay",
        "done_limit",
        "errors",
        "expired",
        "extra",
        "replies",
        "route",
    )

    def __init__(
        self,
        batch_id: str,
        route: Route,
        created: float,
        delay: float,
        custom_ids: list[str],
        codes: bytearray,
        replies: list[Reply | None] | None,
        done_limit: int,
        *,
        expired: bool = False,
        errors: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.batch_id = batch_id
        self.route: Route = route
        self.created = created
        self.delay = delay
        self.custom_ids = custom_ids
        self.codes = codes
        self.replies = replies
        """Per item, its reply when it was answered and done in time; None once rendered into
        files (OpenAI)."""
        self.done_limit = done_limit
        self.expired = expired
        self.errors = errors
        """OpenAI: why the input file failed validation (the batch then holds no items)."""
        self.extra = extra or {}
        self.canceled_at: float | None = None

    @property
    def size(self) -> int:
        return len(self.custom_ids)

    @property
    def ends_at(self) -> float:
        end = self.created + self.delay
        return end if self.canceled_at is None else min(end, self.canceled_at)

    @property
    def phase_times(self) -> tuple[float, float]:
        """When it starts processing and when it starts finalizing (unless it ended before)."""
        return (
            self.created + _VALIDATING * self.delay,
            self.created + _FINALIZING * self.delay,
        )

    def progress(self, now: float) -> int:
        """Items done by `now`."""
        t = min(now, self.ends_at)
        if self.delay <= 0:
            fraction = 1.0
        else:
            span = (_FINALIZING - _VALIDATING) * self.delay
            fraction = (t - self.created - _VALIDATING * self.delay) / span
        return min(self.done_limit, int(self.size * max(0.0, min(1.0, fraction))))

    def view(self, now: float, *, fresh: bool = False) -> View:
        """`fresh`: as the answer to the create or cancel call that just happened shows it
        (validating, or canceling), even when the batch already ended by the clock."""
        if fresh:
            if self.canceled_at is not None:
                return View("canceling", self.progress(self.canceled_at))
            return View("validating", 0)
        if now >= self.ends_at:
            return View("ended", self.progress(self.ends_at))
        elapsed = now - self.created
        if elapsed < _VALIDATING * self.delay:
            return View("validating", 0)
        return View(
            "in_progress" if elapsed < _FINALIZING * self.delay else "finalizing",
            self.progress(now),
        )

    def status(self, now: float, *, fresh: bool = False) -> str:
        """The provider's word for the batch's state (OpenAI `status`, Anthropic
        `processing_status`, Gemini `state`)."""
        phase = self.view(now, fresh=fresh).phase
        if self.route == "anthropic":
            return phase if phase in ("ended", "canceling") else "in_progress"
        if self.route == "gemini":
            return _gemini_state(phase, self)
        if phase == "canceling":
            return "cancelling"
        if phase != "ended":
            return phase
        if self.errors:
            return "failed"
        if self.canceled_at is not None:
            return "cancelled"
        return "expired" if self.expired else "completed"

    def cancel(self, now: float) -> None:
        if now >= self.ends_at:
            raise ValueError(f"batch {self.batch_id} has already ended")
        if self.canceled_at is None:
            self.canceled_at = now

    def item_state(self, index: int, now: float) -> ItemState:
        if now < self.ends_at:
            return "pending"
        if index >= self.progress(self.ends_at):
            return "canceled" if self.canceled_at is not None else "expired"
        return _CODE_STATES[self.codes[index]]

    def counts(self, now: float) -> Counter[ItemState]:
        """Items by state, pending ones included."""
        view = self.view(now)
        done = view.done
        answered = self.codes[:done].count(OK)
        counts: Counter[ItemState] = Counter(succeeded=answered)
        counts["failed"] = self.codes[:done].count(FAILED)
        counts["invalid"] = done - answered - counts["failed"]
        rest = self.size - done
        if view.phase != "ended":
            counts["pending"] = rest
        else:
            counts["canceled" if self.canceled_at is not None else "expired"] = rest
        return counts


def _gemini_state(phase: Phase, batch: Batch) -> str:
    # Gemini has no cancelling state: a cancelled batch is CANCELLED at once.
    if phase == "validating":
        return "BATCH_STATE_PENDING"
    if phase in ("in_progress", "finalizing"):
        return "BATCH_STATE_RUNNING"
    if batch.canceled_at is not None:
        return "BATCH_STATE_CANCELLED"
    return "BATCH_STATE_EXPIRED" if batch.expired else "BATCH_STATE_SUCCEEDED"


@dataclass(slots=True)
class _Staged:
    custom_id: str
    key: str
    code: int
    reply: Reply | None
    probe: CacheProbe


class Stager:
    """Judges the items of a batch being created, one at a time as they are read, without
    touching anything shared: an invalid item later in the input must leave no trace."""

    def __init__(self, config: SimulatorConfig, faults: Faults, book: BatchBook) -> None:
        self.config = config
        self._faults = faults
        self._book = book
        self._here: Counter[str] = Counter()
        self.items: list[_Staged] = []
        self.digest = hashlib.sha256()
        """Of the items' content keys, in order: what seeds the batch's own draws."""

    def add(self, custom_id: str, call: JudgeCall) -> None:
        config = self.config
        key = call.content_key
        # Which batch submission of this content this is: a resubmission draws afresh.
        attempt = self._book.submitted(key) + self._here[key]
        self._here[key] += 1
        code = _item_code(config, call, attempt)
        reply: Reply | None = None
        found = NO_PROBE
        if code == OK:
            reply = compose(config, call, batch_outcome(config, self._faults, call))
            found = probe(config, call)
        self.items.append(_Staged(custom_id, key, code, reply, found))
        self.digest.update(key.encode())


def _item_code(config: SimulatorConfig, call: JudgeCall, attempt: int) -> int:
    # Invalid is drawn on content only (an invalid request stays invalid); a server error also
    # on the submission, so a resubmitted request may succeed.
    if config.batch_rate_invalid:
        draw = uniforms(config.seed, b"batch-invalid", call.content_digest)[0]
        if draw < config.batch_rate_invalid:
            return INVALID
    if config.batch_rate_failed:
        salt = attempt.to_bytes(8, "big")
        draw = uniforms(config.seed, b"batch-failed", call.content_digest, salt)[0]
        if draw < config.batch_rate_failed:
            return FAILED
    return OK


class _History:
    """One content key's batch submissions."""

    __slots__ = ("refs", "submitted", "succeeded")

    def __init__(self) -> None:
        self.submitted = 0
        self.succeeded = False
        self.refs: list[tuple[Batch, int]] = []
        """Submissions whose outcome was not yet known at the last look."""


class BatchBook:
    """Every batch since the last `/_reset`, the submission history of every content key, and
    the counters behind the `batches` section of `/_stats`."""

    def __init__(self, seed: int) -> None:
        self.batches: dict[Route, dict[str, Batch]] = {"openai": {}, "anthropic": {}, "gemini": {}}
        self._history: dict[str, _History] = {}
        self._batch_attempts: Counter[bytes] = Counter()
        self._control = random.Random(seed)
        self.created: Counter[str] = Counter()
        self.requests: Counter[str] = Counter()
        self.double_submissions = 0
        self.doubles_by_key: Counter[str] = Counter()
        self.api_calls: Counter[str] = Counter()
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_read_tokens = 0
        self.cache_written_tokens = 0

    def control_draw(self) -> float:
        return self._control.random()

    def submitted(self, key: str) -> int:
        history = self._history.get(key)
        return history.submitted if history is not None else 0

    def open(
        self,
        route: Route,
        batch_id: str,
        stager: Stager,
        cache: PromptCache,
        now: float,
        extra: dict[str, Any] | None = None,
    ) -> Batch:
        """Commit a validated batch: draw whether it expires, record its submissions, let its
        answered items read and write the prompt cache, count it."""
        config = stager.config
        staged = stager.items
        digest = stager.digest.digest()
        attempt = self._batch_attempts[digest]
        self._batch_attempts[digest] += 1
        draws = uniforms(config.seed, b"batch-expired", digest, attempt.to_bytes(8, "big"))
        expired = draws[0] < config.batch_rate_expired
        done_limit = int(len(staged) * draws[1]) if expired else len(staged)
        batch = Batch(
            batch_id,
            route,
            now,
            config.batch_delay_s,
            [item.custom_id for item in staged],
            bytearray(item.code for item in staged),
            None,
            done_limit,
            expired=expired,
            extra=extra,
        )
        replies: list[Reply | None] = []
        for index, item in enumerate(staged):
            self._submit(item.key, batch, index, now)
            reply = item.reply if index < done_limit else None
            if reply is not None:
                reply.cache_read, reply.cache_written = cache.apply(config, item.probe)
                self.input_tokens += reply.prompt_tokens
                self.output_tokens += reply.output_tokens
                self.cache_read_tokens += reply.cache_read
                self.cache_written_tokens += reply.cache_written
            replies.append(reply)
        batch.replies = replies
        self._add(batch)
        self.requests[ROUTES[route]] += len(staged)
        return batch

    def failed(
        self, batch_id: str, now: float, errors: list[dict[str, Any]], extra: dict[str, Any]
    ) -> Batch:
        """An OpenAI batch whose input failed validation: it holds nothing and fails at the
        first look."""
        batch = Batch(
            batch_id, "openai", now, 0.0, [], bytearray(), [], 0, errors=errors, extra=extra
        )
        self._add(batch)
        return batch

    def _add(self, batch: Batch) -> None:
        self.batches[batch.route][batch.batch_id] = batch
        self.created[ROUTES[batch.route]] += 1

    def get(self, route: Route, batch_id: str) -> Batch | None:
        return self.batches[route].get(batch_id)

    def newest_first(self, route: Route) -> list[str]:
        return list(reversed(self.batches[route]))

    def _submit(self, key: str, batch: Batch, index: int, now: float) -> None:
        history = self._history.get(key)
        if history is None:
            history = self._history[key] = _History()
        elif self._live(history, now, batch):
            self._double(key)
        history.submitted += 1
        history.refs.append((batch, index))

    def note_sync(self, key: str) -> None:
        """A synchronous request of content `key` arrived."""
        history = self._history.get(key)
        if history is not None and self._live(history, time.time()):
            self._double(key)

    def _double(self, key: str) -> None:
        self.double_submissions += 1
        self.doubles_by_key[key] += 1

    @staticmethod
    def _live(history: _History, now: float, current: Batch | None = None) -> bool:
        """Whether an earlier batch submission is still pending or has succeeded (after a
        failed, invalid, expired or canceled one, submitting again is what a client should
        do). Submissions whose outcome is known are dropped from the history."""
        if history.succeeded:
            return True
        pending = []
        for batch, index in history.refs:
            # The batch being committed is pending, however soon it ends.
            state = "pending" if batch is current else batch.item_state(index, now)
            if state == "pending":
                pending.append((batch, index))
            elif state == "succeeded":
                history.succeeded = True
        history.refs = pending
        return history.succeeded or bool(pending)

    def snapshot(self, *, with_hashes: bool = False) -> dict[str, Any]:
        now = time.time()
        by_state: dict[str, Counter[str]] = {}
        for route, batches in self.batches.items():
            states = Counter(batch.status(now) for batch in batches.values())
            if states:
                by_state[ROUTES[route]] = states
        snapshot: dict[str, Any] = {
            "created": sum(self.created.values()),
            "created_by_route": dict(self.created),
            "by_state": {route: dict(states) for route, states in by_state.items()},
            "requests": sum(self.requests.values()),
            "requests_by_route": dict(self.requests),
            "double_submissions": self.double_submissions,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_written_tokens,
            "api_calls": dict(self.api_calls),
        }
        if with_hashes:
            snapshot["double_submissions_by_hash"] = dict(self.doubles_by_key)
        return snapshot


def derived_id(prefix: str, batch_id: str, index: int) -> str:
    """A stable id for something of item `index` (its message, its request): the same on every
    download of the results."""
    digest = hashlib.blake2b(f"{prefix}{batch_id}/{index}".encode(), digest_size=12).hexdigest()
    return prefix + digest
