"""`--dry-run`: what a run will send and cost, leaving the run dir as it was.

A run dir already prepared from the same inputs is read in place (read-only: not a byte of it
changes). Otherwise the run is prepared into a scratch directory that is removed afterwards,
with the run dir's blinding secret when it has one, so the requests and cache keys are the
ones the real run will send. Either way the response cache is only read, the estimate takes
each judge's reply length from its replies already stored for this run when there are some
(`RunStore.reply_tokens`), and what a real run would meet first (a missing API key, a run dir
holding another config, an input the analysis would refuse) is checked and said.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from judge.config.run_config import RunConfig
from judge.errors import DataError, StoreError
from judge.inputs.importers.importing import with_imported_data
from judge.judging.cost_estimate import RunEstimate, estimate_run, estimate_tokens
from judge.providers.factory import key_problem
from judge.rubric.cached_prefix import anchors_in_system
from judge.rubric.rubrics import Rubric, load_rubric
from judge.store.run_store import RunStore
from judge.store.rundir import RunDir
from judge.types import ChatMessage


def dry_run(
    config: RunConfig,
    run_dir: RunDir | str | Path,
    log: Callable[[str], None] = lambda _msg: None,
    cache_path: Path | None = None,
) -> RunEstimate:
    """The pending requests per judge and their estimated cost (synchronous, batch,
    prompt-cached); sends nothing and writes nothing to `run_dir` or the response cache."""
    if config.data.source is None or config.data.items is not None:
        plan = _estimate(config, run_dir, log, cache_path)
    else:
        # Another tool's files: read into scratch tables, as the run reads them into its run dir.
        with tempfile.TemporaryDirectory(prefix="judge-dry-run-import-") as scratch:
            imported = with_imported_data(config, Path(scratch), log)
            plan = _estimate(imported, run_dir, log, cache_path)
    advice = anchor_notes(plan, load_rubric(config.rubric), str(config.rubric))
    return plan.model_copy(update={"notes": [*plan.notes, *advice]}) if advice else plan


def anchor_notes(plan: RunEstimate, rubric: Rubric, ref: str) -> list[str]:
    """When the rubric renders its scale or criteria in the user message: what moving them
    into the cached system message (`judge rubric move-anchors`) does to each judge's static
    prefix against that judge's cache minimum."""
    move = anchors_in_system(rubric)
    if move is None or not plan.judges:
        return []
    before = estimate_tokens([ChatMessage(role="system", content=rubric.system_text())])
    after = estimate_tokens([ChatMessage(role="system", content=move.rubric.system_text())])
    per_judge = []
    for judge, row in plan.judges.items():
        minimum = row.min_cacheable_tokens
        if not row.prompt_cache:
            verdict = "prompt_cache is off, so it would not be cached"
        elif after >= minimum > before:
            verdict = f"past {judge}'s {minimum:,}-token cache minimum: cached from then on"
        elif after >= minimum:
            verdict = f"cached by {judge} (minimum {minimum:,}) with the rest of the prefix"
        else:
            verdict = f"still below {judge}'s {minimum:,}-token cache minimum"
        per_judge.append(verdict)
    return [
        f"rubric '{rubric.id}' renders its anchors ({', '.join(move.lines)}) in the user "
        f"message, sent uncached in every request; in the system message the static prefix "
        f"grows from ~{before:,} to ~{after:,} tokens: {'; '.join(per_judge)}. "
        f"`judge rubric move-anchors {ref} --out rubric.yaml` writes that rubric "
        f"(version {move.rubric.version}; a new hash, so no earlier reply is reused)"
    ]


def _estimate(
    config: RunConfig,
    run_dir: RunDir | str | Path,
    log: Callable[[str], None],
    cache_path: Path | None,
) -> RunEstimate:
    from judge.run.prepare import prepare_run, prepared_hashes
    from judge.run.prepared import already_prepared, fingerprint

    rundir = run_dir if isinstance(run_dir, RunDir) else RunDir(run_dir)
    cache = rundir.cache_file(config, cache_path)
    rubric = load_rubric(config.rubric)
    notes = [problem for spec in config.judges if (problem := key_problem(spec)) is not None]
    config_hash, earlier_hash = prepared_hashes(config, rubric)
    done = already_prepared(rundir, fingerprint(config, config_hash, rubric.hash), read_only=True)
    if done is not None:
        from judge.run.input_checks import check_run_inputs

        log(f"{rundir.path} is prepared from these inputs: reading it, changing nothing")
        with RunStore.open_read_only(rundir.path, cache) as store:
            check_run_inputs(config, rubric.kind, done.systems, store.strata_columns())
            return estimate_run(store, config, rubric, measured=store.reply_tokens(), notes=notes)
    with tempfile.TemporaryDirectory(prefix="judge-dry-run-") as scratch, ExitStack() as stack:
        # The run's own store, when it holds this config: its replies are not sent again.
        own, note = _own_store(rundir, (config_hash, earlier_hash))
        notes += [note] if note else []
        if own is not None:
            stack.enter_context(own)
        copy = RunDir(Path(scratch) / rundir.path.name)
        log(f"preparing into a scratch directory ({scratch}); {rundir.path} is left as it is")
        prepare_run(_with_secret(config, rundir), copy, log=log)
        store = stack.enter_context(RunStore.open_read_only(copy.path, cache))
        measured = {} if own is None else own.reply_tokens()
        return estimate_run(store, config, rubric, measured=measured, notes=notes, answered=own)


def _own_store(rundir: RunDir, hashes: tuple[str, str]) -> tuple[RunStore | None, str | None]:
    """`rundir`'s store opened read-only when it holds a run of this config; else None, and
    a note when it holds a run of another config (which `judge run` refuses) or a store this
    version cannot read without bringing it up to date."""
    if not rundir.has_store():
        return None, None
    try:
        store = RunStore.open_read_only(rundir.path)
    except StoreError as exc:
        return None, f"{rundir.path}: {exc}; `judge run` will bring it up to date first"
    stored = store.get_meta("config_hash")
    if stored is not None and stored not in hashes:
        store.close()
        return None, (
            f"{rundir.path} holds a run prepared from a different config: `judge run` will "
            "refuse it; choose another run dir (--run-dir, run_dir=) or remove that one"
        )
    return store, None


def _with_secret(config: RunConfig, rundir: RunDir) -> RunConfig:
    """`config` with the run dir's blinding secret, so the scratch prepare blinds and orders
    the pairs as the run will (the same requests, the same cache keys). A run dir without a
    key draws a new secret at its first prepare: the cache hits are then those of one draw."""
    if not rundir.has_key():
        return config
    try:
        secret = rundir.read_key().blinding_secret
    except DataError:
        return config  # an unreadable key: the real prepare will say so
    blinding = config.blinding.model_copy(update={"secret": secret})
    return config.model_copy(update={"blinding": blinding})
