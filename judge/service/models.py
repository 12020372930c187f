"""Request and response bodies of the HTTP API (they make the OpenAPI schema)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

RunStatus = Literal["queued", "running", "finished", "failed", "cancelled"]


class Progress(BaseModel):
    """Read from the run's store while it runs (the same counts `judge run` shows)."""

    total: int
    """Judge requests planned (pairs x orders x judges)."""
    done: int
    """Requests with a stored outcome: verdict, parse failure or error."""
    pending: int
    cached: int
    """Answered from the response cache: not paid again."""
    failed: int
    """Requests that failed after every attempt."""
    parse_failures: int
    spent_usd: float


class GateStatus(BaseModel):
    """One configured check of an analysed run, as `summary.json` holds it."""

    kind: Literal["compare", "canary"]
    """A `compare.gates` expression, or a canary's check (one per canary and judge)."""
    expression: str
    passed: bool
    value: float | None
    """What the check compared: the gate's left-hand side, a canary's win rate."""
    ci_low: float | None
    ci_high: float | None
    """The interval of the statistic `value` comes from; null for a number."""
    reason: str
    """One line naming the deciding statistics."""


class RunAnswer(BaseModel):
    """The run's answer to its config's `question`, as the report's first screen gives it."""

    outcome: Literal["yes", "no", "ranked", "not settled"]
    """no: a gate failed; not settled: the judge is untrusted, or (without compare.gates) the
    leader is not told apart from the next system; yes otherwise."""
    text: str
    """The answer in one sentence."""
    judge: str
    """The judge's trust verdict: trusted, provisional, untrusted or not calibrated."""
    judge_reason: str
    """Why, in one line."""


class RunInfo(BaseModel):
    id: str
    name: str
    status: RunStatus
    owner: str
    """The name of the token that created the run."""
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    error: str | None = None
    """Why the run failed, or what went wrong after its judging (labels that cannot be joined);
    names the fix. Null otherwise."""
    attempts: int
    """Worker processes started for this run (a restart or a resume adds one)."""
    has_labels: bool
    progress: Progress | None = None
    """Null in listings; and while the run is not prepared."""
    gates: list[GateStatus] | None = None
    """Every configured gate with its outcome (empty: none configured), once the run is
    finished and analysed. Null in listings, and before."""
    answer: RunAnswer | None = None
    """Null in listings, and until the run is finished and analysed."""
    notice: str | None = None
    """Once finished and analysed: the sentence a simulated or replayed run's console and
    report open with ("SIMULATED: ... say nothing about these systems"); null for a run of
    called models, in listings, and before."""


class RunList(BaseModel):
    items: list[RunInfo]
    total: int
    limit: int
    offset: int


class JudgmentsPage(BaseModel):
    items: list[dict[str, Any]]
    """Rows of `judgments.jsonl` (one unblinded judgment per pair and judge): winners, both
    orders' verdicts, request ids (`request_ab`, `request_ba`) and the judge's reasoning
    (`reasoning_ab`, `reasoning_ba`), or why an order has none (`failure_ab`) and the reply it
    could not parse (`reply_ab`)."""
    total: int
    """Rows matching the filters."""
    limit: int
    offset: int
    next_offset: int | None
    """Offset of the next page; null on the last page."""


class LabelsResult(BaseModel):
    run: RunInfo
    rows: int
    """Rows in the uploaded labels table."""
    calibration: dict[str, Any] | None = None
    """The calibration report (as `GET .../calibration`) when the run is finished."""
    refreshed: list[str] = Field(default_factory=list)
    """Files re-written with the labels (summary.json, report.md, report.html), if any."""


class CreateRunFromPaths(BaseModel):
    """JSON submission: a config whose data files are already on the server, in a directory
    the operator allowed with `--allow-server-paths`."""

    model_config = ConfigDict(extra="forbid")

    config: dict[str, Any]
    """The run config, as its YAML would parse (absolute paths)."""
    labels: str | None = None
    """Absolute path of a human labels table on the server (optional)."""


class Health(BaseModel):
    status: Literal["ok"]


class Ready(BaseModel):
    status: Literal["ready"]
    database: str
    """sqlite or postgresql."""
    running: int
    """Runs executing now."""
