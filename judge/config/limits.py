"""Bounds on the work one run may ask for, checked before the work is done.

* judge requests per run (`check_planned`): counted from the blinded responses before any
  pair is made or prompt rendered, so a config that would make 38,000 requests out of a small
  upload is refused before that work is done, and before the run store is opened;
* a rubric template's output and render time per prompt (`RenderLimits`, enforced by
  `judge.rubric.templates`);
* bootstrap resamples (`MAX_RESAMPLES`, a sanity cap of the config and the CLI).

The library's defaults are loose (a user's own machine); the service passes tighter ones from
its settings. Exceeding one raises `LimitError`, which names the limit. Only the standard
library is imported here: the CLI reads `MAX_RESAMPLES` without loading pydantic.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from judge.errors import LimitError

if TYPE_CHECKING:
    from judge.config.run_config import JudgeSpec, RunConfig

MAX_RESAMPLES = 1_000_000
"""Most bootstrap resamples a config (`compare.resamples`, `calibration.resamples`) or
`judge compare` / `judge calibrate --resamples` may ask for: 100 times the default, far past
where intervals stop changing; a typo such as 10^9 would otherwise allocate gigabytes."""


@dataclass(frozen=True)
class RenderLimits:
    """What rendering one prompt from a rubric's templates may cost."""

    max_template_output_kb: float = 1024.0
    """Text a template may produce per prompt beyond the texts it is given: 1024 KB plus four
    times the length of the prompt, responses, reference and other values it renders. All its
    output counts (also inside macros and blocks), and so does every string or list its
    filters, operators and calls build."""
    max_render_s: float = 5.0
    """Seconds rendering one prompt (system and user templates) may take."""
    max_render_total_s: float | None = None
    """Seconds all prompts rendered under one `judge.rubric.templates.render_limits(...)` block may
    take together (the service: one submission). None: no total."""


def check_planned(
    config: RunConfig,
    kind: str,
    systems: Sequence[str],
    item_systems: Iterable[tuple[str, Sequence[str]]],
    max_requests: int,
    *,
    extra: int = 0,
) -> int:
    """The number of judge requests the run will make (`item_systems`: each item's systems;
    `extra`: the canaries'); `LimitError` when over `max_requests`."""
    planned = count_planned(config, kind, systems, (s for _, s in item_systems)) + extra
    if planned > max_requests:
        raise LimitError(
            f"this run would send {planned:,} judge requests, over the limit of "
            f"{max_requests:,} per run (max_requests); judge fewer systems (data.systems), "
            "compare each with one baseline (pairs: {mode: baseline, baseline: NAME}), judge "
            "one order (orders: AB), use fewer judges, or split the items into several runs"
            + (
                f"; {extra:,} of them are canaries' (fewer canaries.items, or no canaries)"
                if extra
                else ""
            ),
            limit="max_requests",
            maximum=max_requests,
            actual=planned,
        )
    return planned


def count_planned(
    config: RunConfig, kind: str, systems: Sequence[str], by_item: Iterable[Sequence[str]]
) -> int:
    """Judge requests `prepare_run` will render for items answered by these systems
    (`by_item`: each item's): per pair (or, for an absolute rubric, per response), one per
    order and per judge allowed to grade it.

    Counted per item and judge from the systems present, without making the pairs: a judge
    grades a pair when it may grade both of its systems (`eligible_judges` of a system with
    itself), or every pair with `allow_same_family`. Pairs no judge may grade count 0 here;
    `prepare_run` refuses them with its own message.
    """
    from judge.families import eligible_judges

    judges = list(config.judges)
    if not judges:
        return 0
    allowed: dict[str, frozenset[int]] = {}
    for system in set(systems):
        chosen = (
            judges
            if config.allow_same_family
            else eligible_judges((system, system), judges, config.families)
        )
        allowed[system] = frozenset(i for i, j in enumerate(judges) if _among(j, chosen))
    orders = 2 if config.orders == "both" else 1
    baseline = config.pairs.baseline if config.pairs.mode == "baseline" else None
    total = 0
    for present in by_item:
        if kind == "absolute":
            total += sum(len(allowed[s]) for s in present)
            continue
        for j in range(len(judges)):
            graded = sum(1 for s in present if j in allowed[s])
            if baseline is None:
                total += graded * (graded - 1) // 2
            elif baseline in present and j in allowed[baseline]:
                total += graded - 1
    return total if kind == "absolute" else total * orders


def _among(judge: JudgeSpec, chosen: Sequence[JudgeSpec]) -> bool:
    # By identity: two judges of a config may be equal specs and are still two judges.
    return any(judge is c for c in chosen)


ANALYSIS_SEED = 1
"""The one default seed of a run's analyses (calibration and comparison bootstraps) and of
`judge calibrate` / `judge compare`, so a rerun from the CLI reproduces the report's intervals."""
