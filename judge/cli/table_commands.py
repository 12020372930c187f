"""`judge calibrate` and `judge compare`: the analysis commands on tables or finished run dirs
(registered on the main CLI in `judge/cli/main.py`; the library loads inside each command)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from judge.config.limits import MAX_RESAMPLES
from judge.errors import ConfigError


def calibrate(
    judge_labels: Annotated[
        Path | None,
        typer.Option(
            "--judge",
            help="Judge verdicts: a table (JSONL/CSV/Parquet) or a finished run dir.",
        ),
    ] = None,
    human: Annotated[
        Path | None,
        typer.Option(
            "--human",
            help="Human labels (JSONL/CSV/Parquet); on a run dir, default: the run's labels.",
        ),
    ] = None,
    mt_bench: Annotated[
        bool,
        typer.Option(
            "--mt-bench", help="Use the bundled MT-Bench GPT-4 verdicts and expert votes."
        ),
    ] = False,
    judge_name: Annotated[
        str | None, typer.Option(help="Which judge of a run dir (default: panel, or the only one).")
    ] = None,
    kind: Annotated[
        str | None,
        typer.Option(help="pairwise or absolute (default: from both tables' columns)."),
    ] = None,
    by: Annotated[list[str] | None, typer.Option(help="Stratum column (repeatable).")] = None,
    resamples: Annotated[
        int | None,
        typer.Option(min=1, max=MAX_RESAMPLES, help="Default: the run's, or 1,000."),
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Default: the run's calibration.seed, or the analysis seed.")
    ] = None,
    shuffle_judge: Annotated[
        int | None,
        typer.Option(help="Negative control: shuffle the judge's labels with this seed."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Judge versus humans: agreement with intervals, the human ceiling, and the trust gate.

    On a run dir, the run's trust-gate settings apply (calibration.gate), --resamples and
    --seed default to the run's, and --human to the labels the run is calibrated against."""
    import json as _json

    from judge.analysis.table_analysis import calibrate_source

    if seed is not None:
        _check_seed("--seed", seed)
    if shuffle_judge is not None:
        _check_seed("--shuffle-judge", shuffle_judge)
    report = calibrate_source(
        judge_labels,
        human,
        mt_bench=mt_bench,
        judge_name=judge_name,
        kind=kind,
        strata=by,
        resamples=resamples,
        seed=seed,
        shuffle_judge=shuffle_judge,
    )
    if as_json:
        typer.echo(_json.dumps(report.to_dict(), indent=2))
    else:
        typer.echo(report.to_text())


def compare(
    scores: Annotated[
        Path,
        typer.Argument(
            help="A finished run dir, or a table: per-item scores (item_id, system, score) or "
            "pairwise judgments (item_id, system_a, system_b, score_a or winner)."
        ),
    ],
    baseline: Annotated[str | None, typer.Option(help="Compare every system to this one.")] = None,
    by: Annotated[str | None, typer.Option(help="Stratum column for per-stratum results.")] = None,
    judge_name: Annotated[
        str | None, typer.Option(help="Which judge of a run dir (default: panel, or the only one).")
    ] = None,
    resamples: Annotated[
        int | None,
        typer.Option(min=100, max=MAX_RESAMPLES, help="Default: the run's, or 10,000."),
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Default: the run's compare.seed, or the analysis seed.")
    ] = None,
    gate: Annotated[
        list[str] | None,
        typer.Option(
            help='CI gate, e.g. "ci_low(diff(candidate, baseline)) >= -0.02" (repeatable).'
        ),
    ] = None,
    control: Annotated[
        str | None,
        typer.Option(
            help="Also win rates controlled for response style: length, markdown or "
            "length,markdown (pairwise; default: the run's compare.control)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Paired-bootstrap comparison: differences with intervals, wins/losses/ties, Holm-adjusted
    p-values, a Bradley-Terry ranking with tied ranks, and gates (exit 1 when one fails)."""
    import json as _json

    from judge.analysis.table_analysis import compare_source, split_controls
    from judge.cli.console import print_comparison

    if seed is not None:
        _check_seed("--seed", seed)
    report = compare_source(
        scores,
        judge_name=judge_name,
        baseline=baseline,
        by=by,
        resamples=resamples,
        seed=seed,
        gates=gate or (),
        controls=split_controls(control),
    )
    if as_json:
        typer.echo(_json.dumps(report.to_dict(), indent=2, default=str))
    else:
        print_comparison(report.to_dict())
    if not report.gates_passed:
        for failed in report.failed_gates:
            typer.echo(f"gate failed: {failed.reason}", err=True)
        raise typer.Exit(1)


def _check_seed(option: str, seed: int) -> None:
    if seed < 0:
        raise ConfigError(
            f"{option} {seed}: expected a seed from 0 up (numpy refuses negative seeds)"
        )
