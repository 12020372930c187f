"""`judge migrate OLD_RUN NEW.yaml --out DIR`: a finished pairwise run's judge replaced by a new
one, measured without judging every item again (issue 32, item 5).

The new judge re-judges the run's labelled items (all, or `labelled` of them) and a seeded
sample of its other items, through the run lifecycle (`run_pipeline`) like any run: the
budget, the dry run, the response cache and resume all apply, and a second migrate with the
same arguments sends nothing. Then `calibration.migrate` maps the two judges onto each other,
puts both before the humans (the trust gate), and estimates every past comparison on all
items with the old judge as a predictor. DIR holds the inputs, the new run, `migrate.json`
and `migrate.md` (`MigrationDir`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

import pandas as pd

from calibration.jsonable import jsonable
from calibration.migrate import (
    CHANGES,
    Design,
    Moved,
    PastComparison,
    against_humans,
    choose_items,
    judge_mapping,
    moved_comparisons,
)
from calibration.resampling import Method
from judge.analysis.verdict_tables import load_labels, run_judgments, run_labels
from judge.config.new_judge import NewJudgeConfig, load_new_judge
from judge.config.run_config import RunConfig, stand_in_notice
from judge.errors import ConfigError, DataError
from judge.run.migrate_inputs import check_families, migrate_config, write_subset
from judge.store.rundir import RunDir
from judge.summary import migration as out
from judge.summary.base_model import Estimate
from judge.summary.gate import Agreement, TrustGate
from judge.summary.run_summary import RunComparison

if TYPE_CHECKING:
    from calibration.calibrate import CalibrationReport
    from judge.judging.cost_estimate import RunEstimate
    from judge.run.lifecycle import RunOutcome

DEFAULT_SAMPLE = 200
"""Items without human labels re-judged when --sample is not given (fewer if fewer exist)."""
_KEY = ["item_id", "system_a", "system_b", "winner"]
_LABEL_COLUMNS = ("item_id", "system_a", "system_b", "winner", "annotator")
_TOLERANCE = 1e-9


class MigrationDir:
    """DIR of `judge migrate`: the one place that names its files."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.run = RunDir(self.path / "run")
        """The new judge's run (store, judgments, its own report)."""

    @property
    def items_file(self) -> Path:
        return self.path / "inputs" / "items.jsonl"

    @property
    def responses_file(self) -> Path:
        return self.path / "inputs" / "responses.jsonl"

    @property
    def result_file(self) -> Path:
        return self.path / "migrate.json"

    @property
    def page_file(self) -> Path:
        return self.path / "migrate.md"

    def write(self, migration: out.Migration) -> None:
        from judge.files import write_text
        from judge.report.migration_page import migration_markdown

        write_text(self.result_file, migration.model_dump_json(indent=2) + "\n")
        write_text(self.page_file, migration_markdown(migration))


@dataclass(frozen=True)
class MigrateOutcome:
    """`done`: measured (`migration`); `planned`: a dry run (`estimate`); `stopped`: the new
    run stopped with `pending` requests (the budget, an interrupt): run it again to go on."""

    dir: MigrationDir
    status: Literal["done", "planned", "stopped"]
    notice: str | None
    migration: out.Migration | None = None
    estimate: RunEstimate | None = None
    pending: int = 0


@dataclass(frozen=True)
class _Old:
    """The finished run being migrated."""

    rundir: RunDir
    config: RunConfig
    comparison: RunComparison
    judge: str
    rows: pd.DataFrame
    past: list[PastComparison]


def migrate_run(
    old_run: Path,
    new_yaml: Path,
    out_dir: Path,
    *,
    labelled: int | None = None,
    sample: int | None = None,
    seed: int = 1,
    human: Path | None = None,
    dry_run: bool = False,
    max_cost_usd: float | None = None,
    log: Callable[[str], None] = lambda _msg: None,
    notify: Callable[[str], None] = lambda _msg: None,
) -> MigrateOutcome:
    """Re-judge the chosen items of `old_run` with the judge of `new_yaml` into `out_dir`, and
    measure what changes (module docstring). `labelled`: labelled items to re-judge (None:
    all); `sample`: other items (None: `DEFAULT_SAMPLE` or as many as there are); `human`:
    labels instead of the run's. Migrate's own inputs are checked before anything is
    written, the new run's by the lifecycle before any request is sent. `notify` hears, once
    the inputs are checked and before any request, that a judge is simulated or replayed (the
    notice the result repeats), when one is."""
    old = _old_run(old_run)
    new = load_new_judge(new_yaml)
    check_families(old.config, new, [(p.a, p.b) for p in old.past], new_yaml)
    labels = human or run_labels(old.rundir, old.config)
    people = None if labels is None else _people(labels)
    design = _design(old, people, labelled, sample, seed)
    mdir = MigrationDir(out_dir)
    config = migrate_config(
        old.config,
        new,
        items_file=mdir.items_file,
        responses_file=mdir.responses_file,
        labels=labels,
        source=new_yaml,
    )
    notice = stand_in_notice([*old.config.judges, new.judge])
    if notice:
        notify(notice)
    cache = old.rundir.cache_file(old.config)
    with mdir.run.locked():
        items, responses = write_subset(
            old.config, design.chosen, mdir.items_file, mdir.responses_file
        )
        log(f"re-judging {items:,} items ({responses:,} responses) with {new.judge.model}")
        if dry_run:
            from judge.run.dry import dry_run as plan

            estimate = plan(config, mdir.run, log=log, cache_path=cache)
            return MigrateOutcome(mdir, "planned", notice, estimate=estimate)
        from judge.run.lifecycle import run_pipeline

        outcome = run_pipeline(
            config, mdir.run, max_cost_usd=max_cost_usd, cache_path=cache, log=log
        )
        if not outcome.complete:
            pending = outcome.summary.counts.pending
            return MigrateOutcome(mdir, "stopped", notice, pending=pending)
        log("mapping the judges and estimating the past comparisons")
        migration = _measure(old, new, design, labels, people, config, mdir, outcome)
        mdir.write(migration)
    return MigrateOutcome(mdir, "done", notice, migration=migration)


def _old_run(path: Path) -> _Old:
    """The run to migrate, refused unless finished, analysed and pairwise."""
    rundir = RunDir(path)
    config = rundir.stored_config()
    summary = rundir.read_summary()
    if not summary.complete or summary.analysis is None:
        raise DataError(
            f"the run is not finished ({summary.counts.pending} requests pending, or not "
            "analysed): finish it with `judge run` first",
            path=str(path),
        )
    comparison = summary.analysis.comparison
    if comparison.kind != "pairwise":
        raise DataError(
            "judge migrate needs a pairwise run: this one scored responses (absolute rubric)",
            path=str(path),
        )
    judge = comparison.judge or summary.run.judges[0].model
    rows, _ = run_judgments(rundir, judge)
    past = [
        PastComparison(c.a, c.b, c.mean_diff, c.ci_low, c.ci_high, c.told_apart)
        for c in comparison.comparisons
    ]
    if not past:
        raise DataError("the run compared no pair of systems: nothing to migrate", path=str(path))
    return _Old(rundir, config, comparison, judge, rows[_KEY].copy(), past)


def _people(labels: Path) -> pd.DataFrame:
    table = load_labels(labels)
    missing = [c for c in _LABEL_COLUMNS[:4] if c not in table.columns]
    if missing:
        raise DataError(
            f"pairwise human labels need {', '.join(missing)}", path=str(labels), field=missing[0]
        )
    table = table[[c for c in _LABEL_COLUMNS if c in table.columns]].copy()
    table["item_id"] = table["item_id"].astype(str)
    return table


def _design(
    old: _Old, people: pd.DataFrame | None, labelled: int | None, sample: int | None, seed: int
) -> Design:
    """The items to re-judge, every count checked against what the run has, naming the option
    that asks for too many."""
    items = set(old.rows["item_id"].astype(str))
    with_labels = items & set(people["item_id"]) if people is not None else set()
    others = items - with_labels
    if labelled is not None and labelled > len(with_labels):
        raise ConfigError(
            f"--calibration {labelled}: the run has {len(with_labels)} items with human labels"
            + ("" if people is not None else " (none: give --human FILE)")
        )
    if sample is not None and sample > len(others):
        raise ConfigError(
            f"--sample {sample}: the run has {len(others)} items without human labels "
            f"({len(items)} items, {len(with_labels)} labelled)"
        )
    n_other = min(DEFAULT_SAMPLE, len(others)) if sample is None else sample
    if others and n_other == 0:
        raise ConfigError(
            f"--sample 0 leaves the run's {len(others)} items without human labels out: the "
            "estimate on all items needs a sample of them (e.g. --sample 30)"
        )
    if (len(with_labels) if labelled is None else labelled) + n_other == 0:
        raise ConfigError("--calibration 0 and --sample 0: no item to re-judge")
    return choose_items(with_labels, others, labelled_n=labelled, sample_n=n_other, seed=seed)


def _measure(
    old: _Old,
    new: NewJudgeConfig,
    design: Design,
    labels: Path | None,
    people: pd.DataFrame | None,
    config: RunConfig,
    mdir: MigrationDir,
    outcome: RunOutcome,
) -> out.Migration:
    """The statistics on the two runs' verdicts, as `migrate.json` holds them."""
    new_rows, _ = run_judgments(mdir.run)
    new_rows = new_rows[_KEY]
    c, cal = old.comparison, config.calibration
    if c.method not in get_args(Method):
        raise DataError(f"interval method {c.method!r} unknown", path=str(old.rundir.summary_file))
    moved = moved_comparisons(
        old.rows,
        new_rows,
        design,
        old.past,
        seed=c.seed,
        resamples=c.resamples,
        ci=c.ci,
        method=c.method,  # type: ignore[arg-type]
    )
    _check_old(moved, old)
    rejudged_old = old.rows[old.rows["item_id"].astype(str).isin(design.chosen)]
    mapping = judge_mapping(
        rejudged_old, new_rows, old.past, seed=cal.seed, resamples=cal.resamples
    )
    humans, notes = _humans(old, new, design, people, new_rows, config)
    summary = outcome.summary
    labelled, other = (design.size(h) for h in ("labelled", "other"))
    return out.Migration(
        old_run=str(old.rundir.path),
        new_run=str(mdir.run.path),
        old_judge=old.judge,
        new_judge=new.judge.model,
        old_stand_in=_stand_in(old.config),
        new_stand_in=new.judge.stand_in,
        notice=stand_in_notice([*old.config.judges, new.judge]),
        design=out.Design(
            labelled=out.Stratum(items=labelled[0], rejudged=labelled[1]),
            other=out.Stratum(items=other[0], rejudged=other[1]),
            seed=design.seed,
            human_labels=None if labels is None else str(labels),
        ),
        requests=summary.counts.requests,
        sent=outcome.stats.sent,
        cost_usd=None if summary.costs is None else summary.costs.total.cost_usd,
        mapping=out.JudgeMapping.model_validate(jsonable(mapping)),
        humans=humans,
        comparisons=[_moved(m) for m in moved],
        changes={change: sum(m.change == change for m in moved) for change in CHANGES},
        resamples=c.resamples,
        seed=c.seed,
        ci=c.ci,
        method=c.method,
        notes=notes,
    )


def _check_old(moved: tuple[Moved, ...], old: _Old) -> None:
    """The old judge's differences recomputed from judgments.jsonl are summary.json's: else
    the two files are from different analyses, and the old side of every change is wrong."""
    for m in moved:
        if abs(m.old_mean - m.past.mean_diff) > _TOLERANCE:
            raise DataError(
                f"{m.past.a} vs {m.past.b}: summary.json says {m.past.mean_diff:+.4f}, the "
                f"judgments {m.old_mean:+.4f}; rewrite the summary with `judge report "
                f"{old.rundir.path}`",
                path=str(old.rundir.summary_file),
            )


def _humans(
    old: _Old,
    new: NewJudgeConfig,
    design: Design,
    people: pd.DataFrame | None,
    new_rows: pd.DataFrame,
    config: RunConfig,
) -> tuple[list[out.AgainstHumans], list[str]]:
    """Both judges against the humans on the re-judged labelled items, or why not."""
    from calibration.trust_gate import GateThresholds

    chosen = [i for i in design.strata.index[design.strata == "labelled"] if i in design.chosen]
    if people is None:
        return [], [
            "no human labels: the new judge is measured against the old one on a sample of "
            "the items only, and no trust gate is possible (give --human FILE)"
        ]
    if not chosen:
        return [], ["no labelled item was re-judged (--calibration 0): no trust gate"]
    cal = config.calibration
    reports = against_humans(
        old.rows,
        new_rows,
        people,
        chosen,
        gate=GateThresholds(**cal.gate.model_dump()),
        seed=cal.seed,
        resamples=cal.resamples,
    )
    return [
        _against(judge, report)
        for judge, report in zip((old.judge, new.judge.model), reports, strict=True)
    ], []


def _against(judge: str, report: CalibrationReport) -> out.AgainstHumans:
    data = report.to_dict()
    metrics = data["overall"]["metrics"]
    return out.AgainstHumans(
        judge=judge,
        keys=report.join.matched_keys,
        labels=report.join.matched_labels,
        alpha=Estimate.model_validate(metrics["alpha"]),
        agreement=Agreement.model_validate(metrics["agreement_s1"]),
        gate=TrustGate.model_validate(data["gate"]),
    )


def _moved(m: Moved) -> out.MovedPair:
    new = None
    if m.new is not None:
        r = m.new.result
        new = out.NewDiff(
            mean_diff=r.mean_diff,
            ci_low=_finite(r.ci_low),
            ci_high=_finite(r.ci_high),
            p_value=_finite(r.p_value),
            p_method=r.p_method,
            p_holm=m.new.p_holm,
            told_apart=m.new.told_apart,
        )
    shift = None
    if m.shift is not None:
        s = m.shift
        shift = out.Shift(
            mean_diff=s.mean_diff, ci_low=_finite(s.ci_low), ci_high=_finite(s.ci_high)
        )
    p = m.past
    return out.MovedPair(
        a=p.a,
        b=p.b,
        old=out.OldDiff(
            mean_diff=p.mean_diff, ci_low=p.ci_low, ci_high=p.ci_high, told_apart=p.told_apart
        ),
        new=new,
        shift=shift,
        items=m.items,
        rejudged=m.rejudged,
        new_missing=m.new_missing,
        change=m.change,
        reason=m.reason,
    )


def _finite(x: float | None) -> float | None:
    return None if x is None or x != x or x in (float("inf"), float("-inf")) else float(x)


def _stand_in(config: RunConfig) -> Literal["simulated", "replayed"] | None:
    kinds = {j.stand_in for j in config.judges} - {None}
    return "simulated" if "simulated" in kinds else ("replayed" if kinds else None)
