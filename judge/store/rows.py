"""Row <-> record conversion for the run store: how each pydantic record is laid out in the
columns of its table (`judge/store/migrations.py` holds the schema), and how it is read back.

JSON-valued fields are stored as canonical JSON text, booleans as 0/1, and `Usage` as its two
token columns.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter

from judge.hashing import canonical_json, content_hash
from judge.types import (
    BlindedPair,
    BlindedResponse,
    ChatMessage,
    Item,
    JudgeRequest,
    JudgeResponse,
    ParseFailure,
    Usage,
    Verdict,
)

__all__ = [
    "BLINDED_FIELDS",
    "CACHE_FIELDS",
    "ITEM_FIELDS",
    "PAIR_FIELDS",
    "REQUEST_FIELDS",
    "RESPONSE_FIELDS",
    "RESULTS_SELECT",
    "VERDICT_FIELDS",
    "blinded_from_row",
    "blinded_row",
    "cache_fields_from_row",
    "cache_row",
    "check_verdict",
    "column_list",
    "item_from_row",
    "item_row",
    "pair_from_row",
    "pair_row",
    "request_from_row",
    "request_row",
    "response_from_row",
    "response_row",
    "result_from_row",
    "verdict_from_row",
    "verdict_row",
]

# Column order of SELECTs and INSERTs; names equal the record fields ("order" is quoted in SQL).
# fmt: off
ITEM_FIELDS = ("item_id", "prompt", "reference", "strata")
"""Columns of `items` that hold an `Item`, primary key first."""
BLINDED_FIELDS = ("blind_id", "item_id", "output", "context")
"""Columns of `blinded_responses` that hold a `BlindedResponse`, primary key first."""
PAIR_FIELDS = ("pair_id", "item_id", "slot_a", "slot_b")
"""Columns of `pairs` that hold a `BlindedPair`, primary key first."""
REQUEST_FIELDS = (
    "request_id", "judge", "rubric_id", "rubric_version", "rubric_hash", "kind", "item_id",
    "pair_id", "order", "blind_id", "messages", "params", "cache_key", "same_family",
)
"""Columns of `judge_requests` that hold a `JudgeRequest`, primary key first."""
RESPONSE_FIELDS = (
    "text", "input_tokens", "output_tokens", "cost_usd", "latency_s", "attempts",
    "provider_request_id", "error", "cached", "cache_read_tokens", "cache_write_tokens",
    "batch_id",
)
"""Columns of `judge_responses` that hold a `JudgeResponse`, after its `request_id`."""
VERDICT_FIELDS = (
    "label", "score", "scores", "reasoning", "parsed_from", "parse_failure_reason",
    "parse_failure_excerpt",
)
"""Columns of `verdicts` that hold a `Verdict` or `ParseFailure`, after its `request_id`."""
CACHE_FIELDS = (
    "cache_key", "text", "input_tokens", "output_tokens", "cost_usd", "provider_request_id",
    "created_at",
)
"""Columns of `response_cache`, primary key first."""
# fmt: on


def column_list(fields: Sequence[str], alias: str | None = None) -> str:
    """`fields` as an SQL column list, each prefixed by `alias.` if given, "order" quoted."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(prefix + ('"order"' if f == "order" else f) for f in fields)


RESULTS_SELECT = (
    f"SELECT q.rowid, {column_list(REQUEST_FIELDS, 'q')}, r.request_id,"
    f" {column_list(RESPONSE_FIELDS, 'r')}, v.request_id, {column_list(VERDICT_FIELDS, 'v')}"
    " FROM judge_requests q"
    " LEFT JOIN judge_responses r ON r.request_id = q.request_id"
    " LEFT JOIN verdicts v ON v.request_id = q.request_id"
)
"""Every request with its response and verdict if any (LEFT JOINs), for `result_from_row`."""


def item_row(item: Item) -> tuple[Any, ...]:
    """Values for `ITEM_FIELDS`, then the row hash (`content_hash(item)`)."""
    prompt = canonical_json(item.model_dump(mode="json")["prompt"])
    return (item.item_id, prompt, item.reference, canonical_json(item.strata), content_hash(item))


def item_from_row(row: Sequence[Any]) -> Item:
    """The item stored in `row` (values in `ITEM_FIELDS` order)."""
    item_id, prompt, reference, strata = row
    return Item(
        item_id=item_id, prompt=json.loads(prompt), reference=reference, strata=json.loads(strata)
    )


def blinded_row(r: BlindedResponse) -> tuple[Any, ...]:
    """Values for `BLINDED_FIELDS`, then the row hash (`content_hash(r)`)."""
    context = canonical_json([m.model_dump(mode="json") for m in r.context])
    return (r.blind_id, r.item_id, r.output, context, content_hash(r))


def blinded_from_row(row: Sequence[Any]) -> BlindedResponse:
    """The blinded response stored in `row` (values in `BLINDED_FIELDS` order)."""
    blind_id, item_id, output, context = row
    return BlindedResponse(
        blind_id=blind_id, item_id=item_id, output=output, context=json.loads(context)
    )


def pair_row(p: BlindedPair) -> tuple[Any, ...]:
    """Values for `PAIR_FIELDS`, then the row hash (`content_hash(p)`)."""
    return (p.pair_id, p.item_id, p.slot_a, p.slot_b, content_hash(p))


def pair_from_row(row: Sequence[Any]) -> BlindedPair:
    """The pair stored in `row` (values in `PAIR_FIELDS` order)."""
    pair_id, item_id, slot_a, slot_b = row
    return BlindedPair(pair_id=pair_id, item_id=item_id, slot_a=slot_a, slot_b=slot_b)


def request_row(q: JudgeRequest, created_at: str) -> tuple[Any, ...]:
    """Values for `REQUEST_FIELDS`, then `created_at`, then the row hash (`content_hash(q)`)."""
    data = q.model_dump(mode="json")
    # Hash the dump before encoding its fields: same value as content_hash(q), one dump less.
    row_hash = content_hash(data)
    data["messages"] = canonical_json(data["messages"])
    data["params"] = canonical_json(data["params"])
    data["same_family"] = int(q.same_family)
    return (*(data[f] for f in REQUEST_FIELDS), created_at, row_hash)


_MESSAGES = TypeAdapter(tuple[ChatMessage, ...])
"""A request's messages read from their JSON text in one step (pydantic's own parser): what a
runner does for every request it sends."""


def request_from_row(row: Sequence[Any]) -> JudgeRequest:
    """The request stored in `row` (values in `REQUEST_FIELDS` order)."""
    data = dict(zip(REQUEST_FIELDS, row, strict=True))
    data["messages"] = _MESSAGES.validate_json(data["messages"])
    params = data["params"]
    data["params"] = {} if params == "{}" else json.loads(params)
    data["same_family"] = bool(data["same_family"])
    return JudgeRequest.model_validate(data)


def response_row(resp: JudgeResponse) -> tuple[Any, ...]:
    """Values for `RESPONSE_FIELDS` (without the `request_id`)."""
    # Read field by field, in RESPONSE_FIELDS' order: a dump per reply costs more than the
    # insert it feeds.
    r, u = resp, resp.usage
    return (r.text, u.input_tokens, u.output_tokens, r.cost_usd, r.latency_s, r.attempts,
            r.provider_request_id, r.error, int(r.cached), u.cache_read_tokens,
            u.cache_write_tokens, r.batch_id)  # fmt: skip


def response_from_row(request_id: str, row: Sequence[Any]) -> JudgeResponse:
    """The response to `request_id` stored in `row` (values in `RESPONSE_FIELDS` order)."""
    data = dict(zip(RESPONSE_FIELDS, row, strict=True))
    data["usage"] = _usage(data)
    data["cached"] = bool(data["cached"])
    return JudgeResponse(request_id=request_id, **data)


def result_from_row(
    row: Sequence[Any],
) -> tuple[JudgeRequest, JudgeResponse | None, Verdict | None, ParseFailure | None]:
    """Request, response, verdict and parse failure from a `RESULTS_SELECT` row without its
    leading rowid; None for what the LEFT JOINs did not find (at most one of the last two)."""
    n_q, n_r = len(REQUEST_FIELDS), len(RESPONSE_FIELDS)
    request = request_from_row(row[:n_q])
    response: JudgeResponse | None = None
    verdict: Verdict | None = None
    failure: ParseFailure | None = None
    if row[n_q] is not None:
        response = response_from_row(request.request_id, row[n_q + 1 : n_q + 1 + n_r])
    if row[n_q + 1 + n_r] is not None:
        parsed = verdict_from_row(row[n_q + 2 + n_r :])
        if isinstance(parsed, Verdict):
            verdict = parsed
        else:
            failure = parsed
    return request, response, verdict, failure


def cache_row(resp: JudgeResponse, cache_key: str, created_at: str) -> tuple[Any, ...]:
    """Values for `CACHE_FIELDS`: the successful `resp` cached under `cache_key`."""
    r = resp
    return (cache_key, r.text, r.usage.input_tokens, r.usage.output_tokens, r.cost_usd,
            r.provider_request_id, created_at)  # fmt: skip


def cache_fields_from_row(row: Sequence[Any]) -> dict[str, Any]:
    """The fields of the `CacheEntry` stored in `row` (values in `CACHE_FIELDS` order)."""
    data = dict(zip(CACHE_FIELDS, row, strict=True))
    data["usage"] = _usage(data)
    return data


def check_verdict(resp: JudgeResponse, verdict: Verdict | ParseFailure | None) -> None:
    """Raise ValueError unless `resp` and `verdict` can be stored together: an error response
    has no verdict row, a successful one needs text and exactly one (verdict or parse failure)."""
    # A reply with no parse result would be a judgment that silently vanished from every
    # summary; an error with a verdict would be a verdict nobody received.
    if resp.error is not None:
        if verdict is not None:
            raise ValueError(
                f"request {resp.request_id!r}: an error response cannot carry a verdict"
            )
    elif resp.text is None:
        raise ValueError(f"request {resp.request_id!r}: a response needs text or an error")
    elif verdict is None:
        raise ValueError(
            f"request {resp.request_id!r}: a successful response needs its Verdict or "
            "ParseFailure, recorded in the same call"
        )


def _usage(data: dict[str, Any]) -> Usage:
    """The `Usage` of a row read into `data`; pops its token columns from `data` (a cache
    row has no prompt-cache columns: a cached reply cost nothing this time)."""
    return Usage(
        input_tokens=data.pop("input_tokens"),
        output_tokens=data.pop("output_tokens"),
        cache_read_tokens=data.pop("cache_read_tokens", 0),
        cache_write_tokens=data.pop("cache_write_tokens", 0),
    )


def verdict_row(verdict: Verdict | ParseFailure) -> tuple[Any, ...]:
    """Values for `VERDICT_FIELDS` (without the `request_id`)."""
    if isinstance(verdict, ParseFailure):
        return (None, None, None, None, None, verdict.reason, verdict.excerpt)
    scores = canonical_json(verdict.scores) if verdict.scores else "{}"  # pairwise: always {}
    v = verdict
    return (v.label, v.score, scores, v.reasoning, v.parsed_from, None, None)


def verdict_from_row(row: Sequence[Any]) -> Verdict | ParseFailure:
    """The verdict or parse failure stored in `row` (values in `VERDICT_FIELDS` order)."""
    data = dict(zip(VERDICT_FIELDS, row, strict=True))
    if data["parse_failure_reason"] is not None:
        return ParseFailure(
            reason=data["parse_failure_reason"], excerpt=data["parse_failure_excerpt"] or ""
        )
    return Verdict(
        label=data["label"],
        score=data["score"],
        scores=json.loads(data["scores"]),
        reasoning=data["reasoning"],
        parsed_from=data["parsed_from"],
    )
