"""`judge panels`: which panel of judges to use, from their verdicts on labelled units
(registered on the main CLI in `judge/cli/main.py`; the library loads inside the command)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from judge.errors import ConfigError


def panels(
    verdicts: Annotated[
        Path | None, typer.Option(help="Verdicts: unit, judge, label (JSONL, CSV or Parquet).")
    ] = None,
    reference: Annotated[
        Path | None,
        typer.Option(
            help="Reference labels (humans, gold): unit, label; with --run, the human labels "
            "(default: the run's)."
        ),
    ] = None,
    run: Annotated[
        Path | None,
        typer.Option(
            help="A finished run judged by several judges: their verdicts on the pairs humans "
            "labelled, costs as measured."
        ),
    ] = None,
    cost: Annotated[
        list[str] | None,
        typer.Option(
            help="JUDGE=USD: a judge's cost per unit judged (repeatable); unknown if not given."
        ),
    ] = None,
    same_family: Annotated[
        bool,
        typer.Option(help="With --run: let a panel hold a judge of a judged system's family."),
    ] = False,
    aggregate: Annotated[
        str,
        typer.Option(
            help="majority (labels, nominal alpha) or mean (scores: the members' mean, "
            "interval alpha); tables only."
        ),
    ] = "majority",
    max_size: Annotated[int, typer.Option(min=1, help="Largest panel.")] = 3,
    resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples.")] = 2000,
    seed: Annotated[int, typer.Option(min=0, help="Bootstrap seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="The frontier as JSON.")] = False,
) -> None:
    """Every majority panel of up to --max-size judges: its agreement with the reference
    (Krippendorff's alpha, interval), its cost, the cost-agreement frontier, and the
    cheapest panel not told apart from the best (Holm-adjusted paired bootstrap). From
    tables (--verdicts, --reference) or a finished run (--run)."""
    from judge.analysis.panel_tables import panels_from_run, panels_from_tables

    costs: dict[str, float] = {}
    for item in cost or []:
        judge, sep, value = item.rpartition("=")
        try:
            costs[judge] = float(value)
        except ValueError:
            judge = ""
        if not sep or not judge or costs.get(judge, 0.0) < 0:
            raise ConfigError(f"--cost {item!r}: expected JUDGE=USD, e.g. openai/gpt-4o=0.004")
    if aggregate not in ("majority", "mean"):
        raise ConfigError(f"--aggregate {aggregate!r}: expected majority or mean")
    notes: list[str] = []
    ceiling = None
    if run is not None:
        if verdicts is not None or costs or aggregate != "majority":
            raise ConfigError(
                "--run reads the verdicts and costs from the run and takes each pair's "
                "majority: drop --verdicts, --cost and --aggregate"
            )
        frontier, notes, ceiling = panels_from_run(
            run,
            reference,
            max_size=max_size,
            resamples=resamples,
            seed=seed,
            same_family=same_family,
        )
    elif verdicts is None or reference is None:
        raise ConfigError("give --verdicts FILE and --reference FILE, or --run RUN_DIR")
    else:
        frontier = panels_from_tables(
            verdicts,
            reference,
            costs,
            max_size=max_size,
            aggregate=aggregate,  # type: ignore[arg-type]
            resamples=resamples,
            seed=seed,
        )
    if as_json:
        result = {**asdict(frontier), "human_ceiling": ceiling, "notes": notes}
        typer.echo(json.dumps(result, indent=2, default=str))
        return
    for note in notes:
        typer.echo(f"note: {note}")
    if ceiling is not None and ceiling["alpha"] is not None:
        low, high = ceiling["ci_low"], ceiling["ci_high"]
        interval = "" if low is None or high is None else f" [{low:.3f}, {high:.3f}]"
        typer.echo(
            f"human ceiling: annotators' alpha with each other {ceiling['alpha']:.3f}{interval} "
            f"on the {ceiling['pairs']} pairs labelled twice or more"
        )
    chosen = (
        " + ".join(frontier.recommended)
        if frontier.recommended
        else "none (no panel has a known cost)"
    )
    typer.echo(
        f"{frontier.units} units, {len(frontier.panels)} panels of up to {max_size}: best "
        f"{' + '.join(frontier.best)}; recommended {chosen}"
    )
    for p in frontier.panels:
        interval = "" if p.ci_low is None else f"[{p.ci_low:.3f}, {p.ci_high:.3f}]"
        alpha = "n/a" if p.alpha is None else f"{p.alpha:.3f}"
        price = "unknown" if p.cost is None else f"{p.cost:.4g}"
        told = "" if p.p_vs_best is None else f"  p vs best {p.p_vs_best:.3f}"
        mark = "  frontier" if p.on_frontier else ""
        typer.echo(
            f"  {' + '.join(p.judges):<40} alpha {alpha} {interval}  accuracy {p.accuracy:.3f}"
            f"  cost {price}{mark}{told}"
        )
