"""Every judge request of a run, rendered: per pair (or response), order and judge allowed to
grade it, with its content-hashed ids. Prepare stores them; nothing is sent here."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

from judge.config import JudgeSpec, RunConfig
from judge.families import check_pairs_judgeable, is_same_family
from judge.hashing import content_hash
from judge.rubrics import Rubric, render_absolute, render_pairwise
from judge.types import (
    BlindedPair,
    BlindedResponse,
    BlindingKey,
    ChatMessage,
    Item,
    JudgeRequest,
    Order,
)

T = TypeVar("T")


def orders_for(config: RunConfig) -> tuple[Order, ...]:
    return ("AB", "BA") if config.orders == "both" else ("AB",)


def plan_requests(
    config: RunConfig,
    rubric: Rubric,
    items: dict[str, Item],
    blinded: Sequence[BlindedResponse],
    pairs: Sequence[BlindedPair],
    key: BlindingKey,
    log: Callable[[str], None],
) -> Iterable[JudgeRequest]:
    if not config.judges:
        return
    by_id = {b.blind_id: b for b in blinded}
    counted = _Counted(log, "pairs" if rubric.kind == "pairwise" else "responses")
    if rubric.kind == "absolute":
        # Absolute grading sees one response: a judge is excluded from that system's responses
        # only, i.e. the "pair" is the system with itself.
        plan = check_pairs_judgeable(
            [(s, s) for s in set(key.systems.values())],
            config.judges,
            allow_same_family=config.allow_same_family,
            overrides=config.families,
        )
        for b in counted(blinded):
            system = key.systems[b.blind_id]
            for judge in plan[(system, system)]:
                messages = render_absolute(rubric, items[b.item_id], b)
                yield _request(
                    judge,
                    rubric,
                    messages,
                    item_id=b.item_id,
                    blind_id=b.blind_id,
                    same_family=is_same_family(judge, (system, system), config.families),
                )
        return
    plan = check_pairs_judgeable(
        key.pairs.values(),
        config.judges,
        allow_same_family=config.allow_same_family,
        overrides=config.families,
    )
    for pair in counted(pairs):
        systems = key.pairs[pair.pair_id]
        judges = plan[tuple(sorted(systems))]
        item = items[pair.item_id]
        a, b = by_id[pair.slot_a], by_id[pair.slot_b]
        for order in orders_for(config):
            first, second = (a, b) if order == "AB" else (b, a)
            messages = render_pairwise(rubric, item, first, second)
            for judge in judges:
                yield _request(
                    judge,
                    rubric,
                    messages,
                    item_id=pair.item_id,
                    pair_id=pair.pair_id,
                    order=order,
                    same_family=is_same_family(judge, systems, config.families),
                )


class _Counted:
    """Rendering takes seconds (~2 ms a request): how far it got, in a log line at most every
    `every_s`, so a display (or a log) shows it moving."""

    def __init__(self, log: Callable[[str], None], what: str, every_s: float = 2.0) -> None:
        self._log, self._what, self._every_s = log, what, every_s

    def __call__(self, rows: Sequence[T]) -> Iterator[T]:
        last = time.monotonic()
        for done, row in enumerate(rows):
            if time.monotonic() - last >= self._every_s:
                self._log(f"rendering: {done:,} of {len(rows):,} {self._what}")
                last = time.monotonic()
            yield row


def _request(
    judge: JudgeSpec,
    rubric: Rubric,
    messages: tuple[ChatMessage, ...],
    *,
    item_id: str,
    pair_id: str | None = None,
    order: Order | None = None,
    blind_id: str | None = None,
    same_family: bool = False,
) -> JudgeRequest:
    wire = [m.model_dump(mode="json") for m in messages]
    content: dict[str, object] = {
        "provider": judge.provider,
        "model": judge.model_name,
        "base_url": judge.base_url,
        "params": judge.params,
        "messages": wire,
    }
    if judge.provider == "recorded":
        # A replayed verdict depends on which systems are judged, not only on the prompt: two
        # pairs with identical texts (e.g. two empty answers) must not share a cache entry.
        content.update(
            {
                "recording": str(judge.recorded),
                "pair_id": pair_id,
                "order": order,
                "blind_id": blind_id,
            }
        )
    cache_key = content_hash(content)
    request_id = content_hash(
        {
            "judge": judge.model,
            "rubric": rubric.hash,
            "pair_id": pair_id,
            "blind_id": blind_id,
            "order": order,
            "cache_key": cache_key,
        }
    )
    return JudgeRequest(
        request_id=request_id,
        judge=judge.model,
        rubric_id=rubric.id,
        rubric_version=rubric.version,
        rubric_hash=rubric.hash,
        kind=rubric.kind,
        item_id=item_id,
        pair_id=pair_id,
        order=order,
        blind_id=blind_id,
        messages=messages,
        params=judge.params,
        cache_key=cache_key,
        same_family=same_family,
    )
