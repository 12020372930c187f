"""`judge cascade`: a finished run's judges as a cascade with a guarantee (registered on the main
CLI in `judge/cli/main.py`; the library loads inside the command)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def cascade(
    run: Annotated[Path, typer.Argument(help="A finished run judged by several judges.")],
    reference: Annotated[
        Path | None, typer.Option(help="Human labels (default: the run's).")
    ] = None,
    target: Annotated[
        float, typer.Option(help="Agreement with humans the decided pairs must reach.")
    ] = 0.8,
    delta: Annotated[float, typer.Option(help="Allowed chance of missing the target.")] = 0.1,
    holdout: Annotated[
        float, typer.Option(help="Share of the labelled pairs kept to check the cascade.")
    ] = 0.5,
    order: Annotated[
        str | None,
        typer.Option(
            help="Levels, cheapest first, comma-separated; a+b is a panel deciding where its "
            "members agree (default: each judge, by measured cost)."
        ),
    ] = None,
    same_family: Annotated[
        bool, typer.Option(help="Let a judge of a judged system's family decide.")
    ] = False,
    queue: Annotated[
        Path | None, typer.Option(help="Write the pairs left to humans here (JSONL).")
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the calibration/holdout split.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="The cascade as JSON.")] = False,
) -> None:
    """Each judge decides the pairs its two orders agree on when that is shown, on labelled
    pairs, to keep agreement with humans at --target with probability 1 - --delta (fixed-
    sequence exact binomial tests); the rest go to the next judge, then to humans. Prints the
    coverage of each judge, the agreement on held-out labelled pairs, and the cost against the
    strongest judge alone."""
    from judge.analysis.cascade_run import cascade_from_run, write_queue

    result = cascade_from_run(
        run,
        reference,
        target=target,
        delta=delta,
        holdout=holdout,
        order=None if order is None else [j.strip() for j in order.split(",") if j.strip()],
        same_family=same_family,
        seed=seed,
    )
    if queue is not None:
        write_queue(result, queue)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
        return
    for note in result.notes:
        typer.echo(f"note: {note}")
    typer.echo(
        f"{result.pairs} pairs; target {result.target:.0%} agreement with humans, with "
        f"probability {1 - result.delta:.0%}"
    )
    for level in result.levels:
        at = "decides nothing" if level.threshold is None else f"confidence >= {level.threshold:g}"
        price = "unknown" if level.cost is None else f"${level.cost:.4g}"
        typer.echo(
            f"  {level.judge:<32} {at:<18} {level.coverage:6.1%} of pairs   cost/pair {price}"
        )
        if level.reason:
            typer.echo(f"    {level.reason}")
    left = f"({len(result.queue)} not labelled yet)"
    typer.echo(f"  {'humans':<32} {'':<18} {result.humans:6.1%} of pairs   {left}")
    if result.agreement is None:
        typer.echo(f"held out: {result.holdout} labelled pairs, none decided by a judge")
    else:
        typer.echo(
            f"held out: agreement {result.agreement:.1%} [{result.ci_low:.1%}, "
            f"{result.ci_high:.1%}] on the {result.holdout_decided} of {result.holdout} "
            "labelled pairs the judges decided"
        )
    if result.cost is not None and result.strongest_cost:
        typer.echo(
            f"cost per pair ${result.cost:.4g} against ${result.strongest_cost:.4g} for "
            f"{result.levels[-1].judge} alone (x{result.cost / result.strongest_cost:.2f})"
        )
    if queue is not None:
        typer.echo(f"queue: {queue} ({len(result.queue)} pairs)")
