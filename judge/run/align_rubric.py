"""`judge align RUN_DIR --rejudge`: a better rubric for the run's judge, fitted to its human
labels on the training items and scored only on the held-out ones (issue 32).

From the training items (the same split by item as the reading rule's, `calibration.align`):
the judge's measured patterns of disagreement with people become notes (`clarifications`)
and the comparisons it got wrong become examples (`calibration.disagreements`). Each
candidate rubric (notes; notes and examples) judges the training items again, those the
examples came from left out; the best whose gain over the run's own verdicts has a lower
bound above zero is chosen, written as the rubric's next version with its provenance, and
judges the held-out items. Only that last comparison, the run's verdicts against the chosen
rubric's on items nothing was fitted on, is evidence for it.

Every judging goes through the run lifecycle (`run_pipeline`): a run dir per candidate and
split under the run's `alignment/`, the run's response cache, the budget; a killed alignment
resumes, and an alignment run twice pays once. `dry_run` prices every run it could need and
sends nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from calibration.align import (
    HeldOut,
    canonical_patterns,
    human_majority,
    score_heldout,
    split_items,
)
from calibration.disagreements import Finding, findings, pick_examples, runner_reading
from judge.analysis.align_run import order_patterns, run_rows
from judge.analysis.verdict_tables import load_labels, required_labels
from judge.config.run_config import (
    CalibrationConfig,
    DataConfig,
    JudgeSpec,
    PairsConfig,
    RunConfig,
)
from judge.errors import ConfigError, DataError, JudgeError
from judge.judging.cost_estimate import RunEstimate
from judge.rubric.cached_prefix import write_rubric
from judge.rubric.rubrics import Example, Provenance, Rubric, load_rubric
from judge.store.rundir import RunDir
from judge.summary.alignment import (
    AgreementScore,
    AlignmentCandidate,
    AlignmentControl,
    AlignmentFinding,
    Gain,
    PlannedRun,
    RubricAlignment,
)

KEY = ["item_id", "system_a", "system_b"]
LEVEL = 0.95
_SEP = "~"
"""Between an item id and a key's number in the alignment runs' item ids: each key is an
item of its own there, holding only its two responses, so no other pair is paid for."""


@dataclass
class _Spend:
    """What the alignment's runs held and cost so far, against the budget."""

    budget: float | None
    requests: int = 0
    cost_usd: float | None = 0.0
    estimates: list[tuple[str, RunEstimate]] = field(default_factory=list)

    def left(self) -> float | None:
        if self.budget is None:
            return None
        return max(self.budget - (self.cost_usd or 0.0), 1e-9)


@dataclass
class _Context:
    """One alignment's fixed inputs: the parent run, its judge, the keys and the texts."""

    rundir: RunDir
    config: RunConfig
    spec: JudgeSpec
    rubric: Rubric
    people: pd.DataFrame
    labels_id: str
    items: dict[str, dict[str, Any]]
    responses: dict[tuple[str, str], dict[str, Any]]
    cache: Path
    spend: _Spend
    dry: bool
    log: Callable[[str], None]
    examples: int
    seed: int
    share: float
    base: Path
    """Where the alignment's runs and their inputs go: the run's `alignment/`, or a scratch
    directory on a dry run (which writes nothing into the run dir)."""


def align_rubric(
    run_dir: Path,
    *,
    judge: str | None = None,
    human: Path | None = None,
    share: float = 0.5,
    seed: int = 1,
    examples: int = 4,
    control: bool = False,
    dry_run: bool = False,
    max_cost_usd: float | None = None,
    resamples: int = 2000,
    log: Callable[[str], None] = lambda _msg: None,
) -> RubricAlignment:
    """Distil, choose on the training items, score on the held-out ones (module docstring).
    `examples`: at most this many examples in a candidate; `control`: also run the whole
    choice on shuffled training labels (it judges the training items again)."""
    if not 0 < share < 1:
        raise ConfigError(f"--share must lie between 0 and 1, got {share}")
    rundir = RunDir(run_dir)
    config = rundir.stored_config()
    rows = run_rows(rundir, judge)
    spec = _live_judge(config, str(rows["judge"].iloc[0]), rundir)
    labels = required_labels(rundir, config, human, "--human")
    people = _people(labels)
    keys = _keys(rundir, rows, people)
    rng = np.random.default_rng(seed)
    in_train = keys["item_id"].isin(split_items(keys["item_id"], share, rng)).to_numpy()
    train, held = (keys[in_train].reset_index(drop=True), keys[~in_train].reset_index(drop=True))
    if held.empty or train.empty:
        raise DataError(
            "the split left no held-out (or no training) item: give more labelled items or "
            "another --share",
            path=str(labels),
        )
    items, responses = _inputs(config, keys)
    with contextlib.ExitStack() as stack:
        context = _Context(
            rundir=rundir,
            config=config,
            spec=spec,
            rubric=load_rubric(config.rubric),
            people=people,
            labels_id=f"{labels.name} sha256:{_sha256(labels)}",
            items=items,
            responses=responses,
            cache=rundir.cache_file(config),
            spend=_Spend(max_cost_usd if max_cost_usd is not None else config.budget.max_cost_usd),
            dry=dry_run,
            log=log,
            examples=examples,
            seed=seed,
            share=share,
            base=(
                Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="judge-align-")))
                if dry_run
                else rundir.alignment_dir
            ),
        )
        return _align(context, train, held, control=control, resamples=resamples, rng=rng)


def _align(
    context: _Context,
    train: pd.DataFrame,
    held: pd.DataFrame,
    *,
    control: bool,
    resamples: int,
    rng: np.random.Generator,
) -> RubricAlignment:
    """The alignment proper, and its record (`alignment.json`, the run's report)."""
    seed, dry_run, rundir, spec = context.seed, context.dry, context.rundir, context.spec
    found, cands, chosen, heldout = _choose_and_score(context, train, held, seed, resamples, "")
    shuffled = None
    if control:
        fake = train.assign(human=rng.permutation(train["human"].to_numpy()))
        c_found, _, c_chosen, c_held = _choose_and_score(
            context, fake, held, seed, resamples, "control-"
        )
        shuffled = AlignmentControl(
            findings=[_finding(f) for f in c_found], chosen=c_chosen, heldout=_gain(c_held)
        )
    rubric_file = None
    if chosen is not None and not dry_run:
        rubric_file = str(rundir.alignment_dir / "rubric.yaml")
        _write_rubric(cands[chosen][0], Path(rubric_file))
    summary = RubricAlignment(
        judge=spec.model,
        simulated=spec.stand_in == "simulated",
        rubric_from=f"{context.rubric.id}@{context.rubric.version}",
        labels=context.labels_id,
        seed=seed,
        share=context.share,
        train_items=int(train["item_id"].nunique()),
        heldout_items=int(held["item_id"].nunique()),
        train_keys=len(train),
        heldout_keys=len(held),
        level=LEVEL,
        resamples=resamples,
        findings=[_finding(f) for f in found],
        examples=max((len(r.examples) for r, _ in cands.values()), default=0),
        candidates=[c for _, c in cands.values()],
        chosen=chosen,
        rubric_file=rubric_file,
        heldout=_gain(heldout),
        control=shuffled,
        requests=context.spend.requests,
        cost_usd=None if dry_run else context.spend.cost_usd,
        planned=[_planned(name, estimate) for name, estimate in context.spend.estimates],
    )
    if not dry_run:
        _keep(rundir, summary, context.log)
    return summary


def _choose_and_score(
    context: _Context,
    train: pd.DataFrame,
    held: pd.DataFrame,
    seed: int,
    resamples: int,
    prefix: str,
) -> tuple[list[Finding], dict[str, tuple[Rubric, AlignmentCandidate]], str | None, HeldOut | None]:
    """Distil from `train` (its `human` column is what is fitted to), judge each candidate on
    the training keys the examples did not come from, choose, and judge the held-out keys."""
    found = findings(train)
    picked = pick_examples(train, context.examples, seed)
    candidates = _candidates(context, found, _examples(context, picked), train, seed)
    scoring = train[~train["item_id"].isin(set(picked["item_id"]))].reset_index(drop=True)
    before_train = list(runner_reading(scoring))
    out: dict[str, tuple[Rubric, AlignmentCandidate]] = {}
    best: tuple[float, str] | None = None
    for name, rubric in candidates.items():
        after = _judge_keys(context, f"{prefix}train-{name}", rubric, scoring)
        gain = None
        if after is not None:
            gain = score_heldout(
                scoring,
                before_train,
                after,
                context.people,
                seed=seed,
                resamples=resamples,
                gate=False,
            )
            if gain.gain_low > 0 and (best is None or gain.gain > best[0]):
                best = (gain.gain, name)
        out[name] = (
            rubric,
            AlignmentCandidate(
                name=name,
                rubric=f"{rubric.id}@{rubric.version} ({rubric.hash})",
                notes=len(rubric.clarifications),
                examples=len(rubric.examples),
                train=_gain(gain),
                requests=2 * len(scoring),
            ),
        )
    chosen = best[1] if best is not None else None
    if context.dry:
        # What the held-out run would cost with the largest candidate.
        if candidates:
            largest = max(candidates, key=lambda n: len(candidates[n].examples))
            _judge_keys(context, f"{prefix}heldout-{largest}", candidates[largest], held)
        return found, out, None, None
    if chosen is None:
        return found, out, None, None
    rubric = _chosen(out[chosen][0], chosen, out[chosen][1])
    out[chosen] = (rubric, out[chosen][1])
    after = _judge_keys(context, f"{prefix}heldout-{chosen}", rubric, held)
    assert after is not None
    scored = score_heldout(
        held, list(runner_reading(held)), after, context.people, seed=seed, resamples=resamples
    )
    return found, out, chosen, scored


# ------------------------------------------------------------------------ the inputs


def _live_judge(config: RunConfig, model: str, rundir: RunDir) -> JudgeSpec:
    spec = next((j for j in config.judges if j.model == model), None)
    if spec is None:
        raise ConfigError(f"{rundir.path}: the run's config has no judge {model!r}")
    if spec.provider == "recorded":
        raise ConfigError(
            f"{model} replays recorded verdicts and cannot judge with another rubric: fit its "
            "reading of the two orders instead (judge align without --rejudge), or align a "
            "live judge"
        )
    return spec


def _people(labels: Path) -> pd.DataFrame:
    from calibration.labels import LabelError, normalise

    try:
        return normalise(load_labels(labels), "pairwise", "human")
    except (LabelError, ValueError) as exc:
        raise DataError(str(exc), path=str(labels)) from None


def _keys(rundir: RunDir, rows: pd.DataFrame, people: pd.DataFrame) -> pd.DataFrame:
    """The run's keys that have a human majority label: canonical patterns (`calibration.
    align`), pair_id, the people's label, each response's length and whether it continues an
    earlier conversation, in canonical orientation."""
    patterns = order_patterns(rows)
    try:
        keys = canonical_patterns(patterns).merge(human_majority(people), on=KEY)
    except ValueError as exc:
        raise DataError(str(exc), path=str(rundir.judgments_jsonl)) from None
    if keys.empty:
        raise DataError(
            "no comparison of the run has both the judge's verdicts and a human majority label",
            path=str(rundir.path),
        )
    keys = keys.drop_duplicates(KEY).reset_index(drop=True)
    slot_a = dict(zip(patterns["pair_id"], patterns["system_a"], strict=True))
    sizes = _pair_sizes(rundir, set(keys["pair_id"]))
    same = (keys["system_a"] == keys["pair_id"].map(slot_a)).to_numpy()
    first = np.array([sizes[p][0] for p in keys["pair_id"]])
    second = np.array([sizes[p][1] for p in keys["pair_id"]])
    return keys.assign(
        length_a=np.where(same, first, second),
        length_b=np.where(same, second, first),
        context=[sizes[p][2] for p in keys["pair_id"]],
        slot_a_is_a=same,
    )


def _chunks(values: Iterable[str], size: int = 500) -> Iterator[list[str]]:
    chunk: list[str] = []
    for value in values:
        chunk.append(value)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _pair_sizes(rundir: RunDir, pair_ids: set[str]) -> dict[str, tuple[int, int, bool]]:
    """Per pair: its slot-A and slot-B responses' lengths (characters of the blinded text),
    and whether they continue an earlier conversation."""
    out: dict[str, tuple[int, int, bool]] = {}
    with rundir.open_store() as store:
        for chunk in _chunks(sorted(pair_ids)):
            marks = ",".join("?" * len(chunk))
            for pair_id, len_a, ctx_a, len_b, ctx_b in store.connection.execute(
                "SELECT p.pair_id, length(a.output), a.context, length(b.output), b.context"
                " FROM pairs p JOIN blinded_responses a ON a.blind_id = p.slot_a"
                f" JOIN blinded_responses b ON b.blind_id = p.slot_b WHERE p.pair_id IN ({marks})",
                chunk,
            ):
                context = json.loads(ctx_a) or json.loads(ctx_b)
                out[pair_id] = (int(len_a), int(len_b), bool(context))
    return out


def _pair_texts(rundir: RunDir, pair_ids: list[str]) -> dict[str, tuple[str, str, str]]:
    """Per pair: the item's prompt as text, and its slot-A and slot-B blinded responses (the
    scrubbed texts the judge saw: an example must not unblind anyone)."""
    out: dict[str, tuple[str, str, str]] = {}
    with rundir.open_store() as store:
        for chunk in _chunks(pair_ids):
            marks = ",".join("?" * len(chunk))
            for pair_id, prompt, text_a, text_b in store.connection.execute(
                "SELECT p.pair_id, i.prompt, a.output, b.output FROM pairs p"
                " JOIN items i ON i.item_id = p.item_id"
                " JOIN blinded_responses a ON a.blind_id = p.slot_a"
                f" JOIN blinded_responses b ON b.blind_id = p.slot_b WHERE p.pair_id IN ({marks})",
                chunk,
            ):
                out[pair_id] = (_prompt_text(json.loads(prompt)), text_a, text_b)
    return out


def _prompt_text(prompt: str | list[dict[str, str]]) -> str:
    if isinstance(prompt, str):
        return prompt
    return "\n\n".join(f"{m['role']}: {m['content']}" for m in prompt)


class _AnyItem:
    """Every item id is known: the responses are filtered to the keys' own afterwards."""

    def among(self, ids: set[str]) -> set[str]:
        return ids


def _inputs(
    config: RunConfig, keys: pd.DataFrame
) -> tuple[dict[str, dict[str, Any]], dict[tuple[str, str], dict[str, Any]]]:
    """The keys' items and responses as the run's input tables hold them (one pass over
    each, keeping only those: a labelled subset, however large the tables)."""
    from judge.inputs.tables import iter_items, iter_responses

    wanted_items = set(keys["item_id"])
    wanted = {(i, s) for i, a, b in keys[KEY].itertuples(index=False) for s in (a, b)}
    columns = config.data.columns or None
    items: dict[str, dict[str, Any]] = {}
    for item in iter_items(config.data.items, columns=columns):
        if item.item_id in wanted_items:
            record = item.model_dump(mode="json", exclude={"strata"}, exclude_none=True)
            items[item.item_id] = {**item.strata, **record}
    responses: dict[tuple[str, str], dict[str, Any]] = {}
    for response in iter_responses(
        config.data.responses,
        _AnyItem(),
        allow_empty_outputs=config.data.allow_empty_outputs,
        columns=columns,
    ):
        if (response.item_id, response.system) in wanted:
            record = response.model_dump(mode="json", exclude_none=True)
            if not record.get("context"):
                record.pop("context", None)
            responses[(response.item_id, response.system)] = record
    return items, responses


# ------------------------------------------------------------------------ the candidates


def _examples(context: _Context, picked: pd.DataFrame) -> tuple[Example, ...]:
    if picked.empty:
        return ()
    texts = _pair_texts(context.rundir, list(picked["pair_id"]))
    out = []
    for row in picked.itertuples(index=False):
        prompt, slot_a, slot_b = texts[row.pair_id]
        text_a, text_b = (slot_a, slot_b) if row.slot_a_is_a else (slot_b, slot_a)
        verdict = {"a": "A", "b": "B", "tie": "tie"}[row.human]
        if row.flip:
            text_a, text_b = text_b, text_a
            verdict = {"A": "B", "B": "A", "tie": "tie"}[verdict]
        out.append(Example(prompt=prompt, response_a=text_a, response_b=text_b, verdict=verdict))
    return tuple(out)


def _candidates(
    context: _Context,
    found: list[Finding],
    examples: tuple[Example, ...],
    train: pd.DataFrame,
    seed: int,
) -> dict[str, Rubric]:
    """The rubrics worth judging again: the notes alone, and the notes with the examples
    (the examples alone when no note was found)."""
    base = context.rubric
    notes = tuple(f.note for f in found)
    provenance = Provenance(
        method="judge align --rejudge",
        derived_from=f"{base.id}@{base.version}",
        derived_hash=base.hash,
        judge=context.spec.model,
        labels=context.labels_id,
        split_seed=seed,
        train_items=tuple(sorted(set(train["item_id"]))),
        evidence=tuple(f.evidence for f in found),
    )
    shapes: dict[str, tuple[tuple[str, ...], tuple[Example, ...]]] = {}
    if notes:
        shapes["notes"] = (notes, ())
    if examples:
        shapes["notes-examples" if notes else "examples"] = (notes, examples)
    return {
        name: base.model_copy(
            update={
                "version": base.version + 1,
                "clarifications": (*base.clarifications, *extra),
                "examples": (*base.examples, *shown),
                "provenance": provenance,
            }
        )
        for name, (extra, shown) in shapes.items()
    }


def _chosen(rubric: Rubric, name: str, candidate: AlignmentCandidate) -> Rubric:
    train = candidate.train
    assert train is not None and rubric.provenance is not None
    why = (
        f"candidate {name}: agreement with people on the training items it was not shown "
        f"{train.before.agreement:.1%} -> {train.after.agreement:.1%}, gain {train.gain:+.1%} "
        f"[{train.gain_low:+.1%}, {train.gain_high:+.1%}], the best whose lower bound is above 0"
    )
    provenance = rubric.provenance.model_copy(update={"chosen_by": why})
    return rubric.model_copy(update={"provenance": provenance})


def _write_rubric(rubric: Rubric, path: Path) -> None:
    origin = rubric.provenance.derived_from if rubric.provenance else rubric.id
    write_rubric(
        rubric, path, f"# Written by `judge align --rejudge` from {origin}: see `provenance`.\n"
    )


# ------------------------------------------------------------------------ judging again


def _judge_keys(
    context: _Context, name: str, rubric: Rubric, keys: pd.DataFrame
) -> list[str | None] | None:
    """`keys` judged with `rubric` in a run of their own (`alignment/runs/<name>`): each
    key's verdict as the runner reads its two orders, in canonical terms. None on a dry run,
    which prices the run instead."""
    from judge.files import write_jsonl
    from judge.run.dry import dry_run
    from judge.run.lifecycle import run_pipeline

    inputs = context.base / "inputs" / name
    inputs.mkdir(parents=True, exist_ok=True)
    rubric_path, items_path, responses_path = (
        inputs / "rubric.yaml",
        inputs / "items.jsonl",
        inputs / "responses.jsonl",
    )
    _write_rubric(rubric, rubric_path)
    triples = list(keys[KEY].itertuples(index=False))
    write_jsonl(
        items_path,
        ({**context.items[i], "item_id": f"{i}{_SEP}{k}"} for k, (i, _, _) in enumerate(triples)),
    )
    write_jsonl(
        responses_path,
        (
            {**context.responses[(i, s)], "item_id": f"{i}{_SEP}{k}"}
            for k, (i, a, b) in enumerate(triples)
            for s in (a, b)
        ),
    )
    config = _child_config(context, name, rubric_path, items_path, responses_path)
    rundir = RunDir(context.base / "runs" / name)
    context.spend.requests += 2 * len(keys)
    if context.dry:
        estimate = dry_run(config, rundir, cache_path=context.cache)
        context.spend.estimates.append((name, estimate))
        return None
    context.log(f"align: judging {len(keys):,} comparisons with candidate {name} ({rundir.path})")
    outcome = run_pipeline(
        config,
        rundir,
        cache_path=context.cache,
        max_cost_usd=context.spend.left(),
        log=context.log,
    )
    if outcome.status == "stopped":
        raise JudgeError(
            f"the alignment run {rundir.path} stopped with requests pending (the budget, or an "
            "interrupt): run `judge align --rejudge` again to resume it, nothing is paid twice"
        )
    _spent(context.spend, outcome.summary)
    return _verdicts(rundir, context.spec.model, len(keys))


def _child_config(
    context: _Context, name: str, rubric: Path, items: Path, responses: Path
) -> RunConfig:
    """The run's config with one judge, the keys' own tables and the candidate rubric; no
    labels, gates, strata or canaries (what is scored is the verdicts, here)."""
    from judge.config.run_config import BudgetConfig

    parent = context.config
    return parent.model_copy(
        update={
            "name": f"{parent.name}-align-{name}"[:128],
            "question": f"judge align: {parent.name}'s comparisons judged with candidate {name}",
            "data": DataConfig(
                items=items,
                responses=responses,
                allow_empty_outputs=parent.data.allow_empty_outputs,
            ),
            "rubric": str(rubric),
            "judges": [context.spec],
            "pairs": PairsConfig(mode="all"),
            "calibration": CalibrationConfig(),
            "compare": parent.compare.model_copy(update={"gates": [], "strata": [], "control": []}),
            "canaries": None,
            "budget": BudgetConfig(),
            "cache": None,
        }
    )


def _verdicts(rundir: RunDir, judge: str, count: int) -> list[str | None]:
    rows = run_rows(rundir, judge)
    canon = canonical_patterns(order_patterns(rows))
    out: list[str | None] = [None] * count
    for item_id, label in zip(canon["item_id"], runner_reading(canon), strict=True):
        out[int(item_id.rpartition(_SEP)[2])] = label
    return out


def _spent(spend: _Spend, summary: Any) -> None:
    costs = summary.costs
    total = costs.total.cost_usd if costs is not None else None
    if total is None or spend.cost_usd is None:
        spend.cost_usd = None
    else:
        spend.cost_usd += total


# ------------------------------------------------------------------------ the record


def _keep(rundir: RunDir, summary: RubricAlignment, log: Callable[[str], None]) -> None:
    """Write `alignment.json` and render the run's report again, which now shows it."""
    from judge.files import write_text
    from judge.run.lifecycle import finish_run

    rundir.alignment_dir.mkdir(parents=True, exist_ok=True)
    write_text(rundir.alignment_file, summary.model_dump_json(indent=2) + "\n")
    finish_run(rundir.stored_config(), rundir, log=log)


def _planned(name: str, estimate: RunEstimate) -> PlannedRun:
    judges = list(estimate.judges.values())
    prices = [j.cost_cached_usd for j in judges]
    return PlannedRun(
        name=name,
        requests=sum(j.requests for j in judges),
        to_send=sum(j.to_send for j in judges),
        cost_usd=None if None in prices else sum(p or 0.0 for p in prices),
    )


def _finding(f: Finding) -> AlignmentFinding:
    return AlignmentFinding(topic=f.topic, note=f.note, evidence=f.evidence)


def _gain(g: HeldOut | None) -> Gain | None:
    if g is None:
        return None

    def score(s: Any) -> AgreementScore:
        return AgreementScore(
            keys=s.keys, agreement=s.agreement, ci_low=s.ci_low, ci_high=s.ci_high
        )

    return Gain(
        before=score(g.before),
        after=score(g.after),
        gain=g.gain,
        gain_low=g.gain_low,
        gain_high=g.gain_high,
        gate_before=g.gate_before,
        gate_after=g.gate_after,
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
