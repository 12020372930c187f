"""How a judge in batch mode groups, submits and waits for provider batches (`JudgeSpec.batch`).

The providers' own limits are the ceilings (OpenAI Batch: 50,000 requests and 200 MB of JSONL
per batch; Anthropic Message Batches: 100,000 requests and 256 MB); the defaults stay well under
them so a batch body is never a large share of memory and one failed batch re-queues little.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

PROVIDER_LIMITS: dict[str, tuple[int, int]] = {
    "openai": (50_000, 200 * 1024**2),
    "anthropic": (100_000, 256 * 1024**2),
}
"""API -> (requests, bytes) one provider batch may hold."""


class BatchSettings(BaseModel):
    """Batch-mode knobs of one judge (`mode: batch`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    max_requests: int = Field(default=10_000, ge=1, le=100_000)
    """Requests per batch (capped at the provider's limit: OpenAI 50,000, Anthropic
    100,000)."""
    max_mb: float = Field(default=64.0, gt=0, le=256)
    """Megabytes of request bodies per batch (capped at the provider's limit: OpenAI 200,
    Anthropic 256); a batch body is built in memory once, so this bounds the client's memory."""
    poll_s: float = Field(default=60.0, gt=0)
    """Seconds between two looks at a batch that has not ended (doubled up to 10 minutes
    while nothing changes)."""
    deadline_h: float | None = Field(default=None, gt=0)
    """Hours after the judge's first batch was submitted (in this run dir, across restarts)
    after which nothing more is batched: open batches are cancelled, and their unanswered
    requests, like every failed or expired one, are sent as synchronous calls. null: failed
    and expired requests go to new batches (at most `max_tries` per request), however long
    that takes."""
    max_tries: int = Field(default=3, ge=1)
    """Batches one request may be sent in (failed or expired ones re-queued) before it is sent
    as a synchronous call, whose own retries decide its end."""
    submit_timeout_s: float = Field(default=300.0, gt=0)
    """Seconds a batch creation may take. A run killed during one waits, on restart, until
    this much time has passed since it began, then looks the batch up at the provider before
    submitting anything again: a batch is never submitted twice."""
