"""Prepare's part of the canaries (`judge.blinding.canaries`): their texts, which items get them,
how
many requests they add, and the record the analysis reads back."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

from judge.blinding.canaries import PREFIX as CANARY_PREFIX
from judge.blinding.canaries import (
    CanaryPlan,
    canary_kinds,
    canary_pairs,
    canary_texts,
    finish_plan,
    is_canary,
    recorded_texts,
    sample_items,
)
from judge.blinding.injection import fold_constant
from judge.config.run_config import RunConfig
from judge.errors import ConfigError
from judge.rubric.rubrics import AbsoluteScale, Rubric
from judge.run.requests import orders_for
from judge.run.staging import Staging


def configured_texts(config: RunConfig, rubric: Rubric) -> tuple[str | None, str | None] | None:
    """The null-model and master-key texts of the run's canaries; None without canaries."""
    wanted = config.canaries
    if wanted is None:
        return None
    scale = rubric.scale
    top = scale.max if isinstance(scale, AbsoluteScale) else None
    return canary_texts(wanted.null_model, wanted.master_key, top_score=top)


def plan_canaries(
    config: RunConfig,
    systems: Sequence[str],
    texts: tuple[str | None, str | None],
    stage: Staging,
    flags: Collection[tuple[str, str]],
) -> CanaryPlan:
    """Which items get canaries, and every canary pair: known before anything is stored
    (`max_requests` counts them). `flags`: the flagged real answers (no opponents)."""
    wanted = config.canaries
    assert wanted is not None
    taken = [s for s in systems if is_canary(s)]
    if taken:
        raise ConfigError(
            f"{config.data.responses}: system {taken[0]!r} starts with {CANARY_PREFIX!r}, "
            "which names the run's canaries; rename it, or remove `canaries`"
        )
    against = wanted.against if wanted.against is not None else systems
    unknown = sorted(set(against) - set(systems))
    if unknown or not against:
        raise ConfigError(
            f"canaries.against names {', '.join(unknown) or 'no system'}; the systems "
            f"evaluated are: {', '.join(systems)}"
        )
    kinds, sources = canary_kinds(*texts, wanted.length_padded, against)
    opponents = stage.answered(against, flags)
    plan = CanaryPlan(
        items=sample_items(opponents, wanted.items, config.blinding.seed),
        against=sorted(against),
        kinds=kinds,
        sources=sources,
    )
    for item_id in plan.items:
        plan.pairs += canary_pairs(item_id, opponents[item_id], kinds)
    return finish_plan(plan, {name for _, name, _ in plan.pairs})


def canary_requests(config: RunConfig, kind: str, canaries: CanaryPlan) -> int:
    """Judge requests the canaries add: per pair (or response), one per order and judge
    allowed to grade it."""
    from judge.families import eligible_judges

    def judges(pair: tuple[str, str]) -> int:
        if config.allow_same_family:
            return len(config.judges)
        return len(eligible_judges(pair, config.judges, config.families))

    if kind == "absolute":
        return sum(judges((r.system, r.system)) for r in canaries.responses)
    orders = len(orders_for(config))
    return sum(orders * judges((first, second)) for _, first, second in canaries.pairs)


def canary_record(
    canaries: CanaryPlan,
    flags: dict[tuple[str, str], str],
    blind_ids: dict[tuple[str, str], str],
    texts: tuple[str | None, str | None] | None,
    kind: str,
) -> dict:
    """What the outputs and the analysis need to know of the canaries (store meta
    `canaries`): `flags` by opaque id, as `injection_report` holds the real systems'
    (`blind_ids`: (item_id, canary) -> opaque id of every canary response)."""
    responses = Counter(system for (_, system) in blind_ids)
    flagged = Counter(system for (_, system) in flags if system in canaries.kinds)
    return {
        "kinds": canaries.kinds,
        "sources": canaries.sources,
        "against": canaries.against,
        "items": len(canaries.items),
        "pairs": len(canaries.pairs) if kind == "pairwise" else 0,
        # Absolute rubrics judge no pairs: the scores a canary's are compared with (empty and
        # flagged answers are no opponents; see `judge.blinding.canaries.is_opponent`).
        "compared": canaries.pairs if kind == "absolute" else [],
        "texts": recorded_texts(*texts) if texts else None,
        "responses": {s: responses[s] for s in canaries.kinds},
        "flagged": {s: flagged[s] for s in canaries.kinds},
        "flags": {
            blind_ids[unit]: rule for unit, rule in sorted(flags.items()) if unit in blind_ids
        },
    }


def canary_flags(
    scans: list[tuple[str, str, str | None, bytes | None]],
) -> dict[tuple[str, str], str]:
    """The canaries' own flags, apart from the real ones: `constant_answer` compares a
    system's answers with its own."""
    flags = {(item_id, system): rule for item_id, system, rule, _ in scans if rule is not None}
    for unit in sorted(fold_constant((i, s, k) for i, s, _, k in scans)):
        flags.setdefault(unit, "constant_answer")
    return flags
