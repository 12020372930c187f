"""Prepare a run: load -> blind -> pair -> render every judge request -> store.

This is the offline half of the pipeline. It spends nothing: after it, the run dir holds every
request the judges will receive, so a user can inspect prompts, counts and the scrub report
before paying. Preparing the same config into the same run dir again is a no-op (ids are
content hashes and the blinding secret is reused from the run's key file).

Crash safety rests on one order: the key file is written (and fsynced) before the store holds
a request naming its ids, and the store's `config_hash` is written last. A prepare killed at
any instant leaves either no key (nothing stored yet: the next prepare starts afresh) or a key
whose secret the next prepare reuses to add the same rows again (inserts are idempotent).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from judge.blinding import blind_responses, make_listed_pairs, make_pairs, new_secret
from judge.canaries import PREFIX as CANARY_PREFIX
from judge.canaries import CanaryPlan, canary_texts, is_canary, plan_canaries, recorded_texts
from judge.config import RunConfig
from judge.data import load_items, load_responses
from judge.errors import ConfigError, DataError
from judge.hashing import content_hash
from judge.injection import report as injection_report
from judge.injection import scan as scan_injections
from judge.limits import check_requests
from judge.provenance import environment
from judge.rubrics import AbsoluteScale, Rubric, load_rubric
from judge.run.requests import orders_for, plan_requests
from judge.rundir import RunDir
from judge.scrubber import Scrubber
from judge.types import (
    BlindedPair,
    BlindingKey,
    InjectionReport,
    JudgeRequest,
    Response,
    ScrubReport,
)


@dataclass
class PrepareSummary:
    run_dir: Path
    items: int
    responses: int
    systems: list[str]
    pairs: int
    skipped_pairs: int
    """System pairs on an item where one system has no response (reported, never judged)."""
    requests: int
    canary_requests: int
    """Of `requests`, those judging a canary (`canaries:`)."""
    same_family_requests: int
    rubric: str
    scrub: ScrubReport
    injection: InjectionReport
    """Responses whose text addresses the judge: flagged, judged as written."""
    judges: list[str] = field(default_factory=list)


def prepare_run(
    config: RunConfig,
    run_dir: RunDir | str | Path,
    *,
    log: Callable[[str], None] = lambda _msg: None,
    max_requests: int | None = None,
) -> PrepareSummary:
    """Load, blind, pair and render every judge request into `run_dir`'s store, under the run
    dir's lock. Crash-safe: the blinding key is durable before any request row exists, so a
    prepare killed at any instant is completed (or redone) by the next one.

    `max_requests`: refuse (`LimitError`) a run that would make more judge requests, counted
    before pairing or rendering anything, and before anything is written."""
    rundir = run_dir if isinstance(run_dir, RunDir) else RunDir(run_dir)
    with rundir.locked():
        return _prepare(config, rundir, log, max_requests)


def _prepare(
    config: RunConfig, rundir: RunDir, log: Callable[[str], None], max_requests: int | None
) -> PrepareSummary:
    rubric = load_rubric(config.rubric)
    texts = _canary_texts(config, rubric)
    record = config.model_dump(mode="json")
    if texts is not None:
        # The canaries' built-in texts are part of what a run sends, like its config.
        record["canary_texts"] = recorded_texts(*texts)
    config_hash = content_hash(record)

    log(f"loading items from {config.data.items}")
    items = load_items(config.data.items)
    log(f"loading responses from {config.data.responses}")
    responses = load_responses(
        config.data.responses, items.keys(), allow_empty_outputs=config.data.allow_empty_outputs
    )
    systems = sorted({r.system for r in responses})
    set_aside = 0
    if config.data.systems is not None:
        unknown = sorted(set(config.data.systems) - set(systems))
        if unknown:
            raise ConfigError(
                f"data.systems names {', '.join(unknown)}, which {config.data.responses} does not "
                f"contain; its systems are: {', '.join(systems)}"
            )
        kept = [r for r in responses if r.system in set(config.data.systems)]
        set_aside = len(responses) - len(kept)
        responses, systems = kept, sorted(set(config.data.systems))
        log(f"evaluating {len(systems)} systems; {set_aside} responses of other systems set aside")
    if len(systems) < 2 and rubric.kind == "pairwise":
        raise ConfigError(
            f"{config.data.responses}: pairwise rubric '{rubric.id}' needs responses from at "
            f"least two systems; found {systems or 'none'}"
        )

    # On the text as written (before scrubbing): flagged here, judged unchanged.
    log(f"checking {len(responses):,} responses for text that addresses the judge")
    flags = scan_injections((r.item_id, r.system, r.output) for r in responses)
    canaries = _plan_canaries(config, responses, systems, texts, rubric.kind, set(flags))
    previous_key = _usable_key(rundir, config_hash, log)
    secret = (previous_key.blinding_secret if previous_key else config.blinding.secret) or (
        new_secret()
    )
    scrubber = None
    if config.blinding.scrub:
        scrubber = Scrubber(
            systems,
            extra_markers=config.blinding.extra_markers,
            scrub_ambiguous=config.blinding.scrub_ambiguous,
        )
    log(f"blinding {len(responses)} responses of {len(systems)} systems")
    blinded, key, scrub = blind_responses(
        responses, secret=secret, seed=config.blinding.seed, scrubber=scrubber
    )
    # Canaries are blinded apart so that the scrub report counts the real systems only.
    canary_blinded, canary_key, _ = blind_responses(
        canaries.responses, secret=secret, seed=config.blinding.seed, scrubber=scrubber
    )
    # Apart from the real ones: `constant_answer` compares a system's answers with its own.
    canary_flags = scan_injections((r.item_id, r.system, r.output) for r in canaries.responses)
    blind_ids = {(b.item_id, key.systems[b.blind_id]): b.blind_id for b in blinded}
    injection = injection_report(flags, blind_ids, systems)
    if max_requests is not None:
        extra = canary_requests(config, rubric.kind, canaries)
        check_requests(config, rubric.kind, blinded, key, max_requests, extra=extra)
    pairs: list[BlindedPair] = []
    skipped: list[tuple[str, str, str]] = []
    if rubric.kind == "pairwise":
        log("pairing")
        pairs, key, skipped = make_pairs(
            blinded,
            key,
            mode=config.pairs.mode,
            baseline=config.pairs.baseline,
            seed=config.blinding.seed,
        )
    if canaries.kinds:
        key = key.model_copy(update={"systems": {**key.systems, **canary_key.systems}})
        # Shuffled in among the real ones, so that neither the blinded table nor the order
        # requests are sent in (a budget stop) sets the canaries apart.
        blinded = [*blinded, *canary_blinded]
        random.Random(config.blinding.seed).shuffle(blinded)
        if rubric.kind == "pairwise":
            canary_pairs, key = make_listed_pairs(
                blinded, key, canaries.pairs, seed=config.blinding.seed
            )
            pairs = sorted([*pairs, *canary_pairs], key=lambda p: (p.item_id, p.pair_id))

    log(f"rendering the judge requests ({rubric.id}@{rubric.version})")
    requests = list(plan_requests(config, rubric, items, blinded, pairs, key, log))
    same_family = sum(r.same_family for r in requests)

    if previous_key is not None:
        # Ids are the secret's: what an earlier prepare stored keeps its names even if the data
        # has since lost some responses.
        key = key.model_copy(
            update={
                "systems": {**previous_key.systems, **key.systems},
                "pairs": {**previous_key.pairs, **key.pairs},
            }
        )
    if key != previous_key:
        rundir.write_key(key)  # durable before any request row names its ids
    log(f"storing {len(requests):,} requests")
    with rundir.open_store() as store:
        store.add_items(items.values())
        store.add_blinded(blinded)
        store.add_pairs(pairs)
        store.add_requests(requests)
        if store.get_meta("config_hash") is None:
            store.set_meta("config", config.model_dump(mode="json"))
            store.set_meta(
                "rubric",
                {"id": rubric.id, "version": rubric.version, "hash": rubric.hash},
            )
            store.set_meta(
                "seeds", {"blinding": config.blinding.seed, "compare": config.compare.seed}
            )
            store.set_meta("environment", environment())
            store.set_meta("scrub_report", scrub.model_dump(mode="json"))
            store.set_meta("injection_report", injection.model_dump(mode="json"))
            if canaries.kinds:
                canary_ids = {
                    (b.item_id, canary_key.systems[b.blind_id]): b.blind_id for b in canary_blinded
                }
                store.set_meta(
                    "canaries",
                    _canary_record(canaries, canary_flags, canary_ids, texts, rubric.kind),
                )
            store.set_meta("skipped_pairs", [list(s) for s in skipped])
            store.set_meta("responses_set_aside", set_aside)
            store.set_meta("system_costs", system_costs(responses))
            # Last: a store with a config hash is a prepared run.
            store.set_meta("config_hash", config_hash)

    rundir.write_blinding_tables(blinded, pairs, scrub)
    return PrepareSummary(
        run_dir=rundir.path,
        items=len(items),
        responses=len(responses),
        systems=systems,
        pairs=len(pairs),
        skipped_pairs=len(skipped),
        requests=len(requests),
        canary_requests=sum(_is_canary_request(r, key, set(canaries.kinds)) for r in requests),
        same_family_requests=same_family,
        rubric=f"{rubric.id}@{rubric.version}",
        scrub=scrub,
        injection=injection,
        judges=[j.model for j in config.judges],
    )


def _canary_texts(config: RunConfig, rubric: Rubric) -> tuple[str | None, str | None] | None:
    """The null-model and master-key texts of the run's canaries; None without canaries."""
    wanted = config.canaries
    if wanted is None:
        return None
    scale = rubric.scale
    top = scale.max if isinstance(scale, AbsoluteScale) else None
    return canary_texts(wanted.null_model, wanted.master_key, top_score=top)


def _plan_canaries(
    config: RunConfig,
    responses: list[Response],
    systems: list[str],
    texts: tuple[str | None, str | None] | None,
    kind: str,
    flagged: set[tuple[str, str]],
) -> CanaryPlan:
    """The canaries' responses and pairs (none without `canaries:`), after checking that no
    real system wears a canary's name and that `canaries.against` names real systems."""
    wanted = config.canaries
    if wanted is None or texts is None:
        return CanaryPlan()
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
    null_model, master_key = texts
    return plan_canaries(
        responses,
        against,
        null_model=null_model,
        master_key=master_key,
        length_padded=wanted.length_padded,
        items=wanted.items,
        seed=config.blinding.seed,
        flagged=flagged,
    )


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


def _canary_record(
    canaries: CanaryPlan,
    flags: dict[tuple[str, str], str],
    blind_ids: dict[tuple[str, str], str],
    texts: tuple[str | None, str | None] | None,
    kind: str,
) -> dict:
    """What the outputs and the analysis need to know of the canaries (store meta
    `canaries`): `flags` by opaque id, as `injection_report` holds the real systems'."""
    responses = Counter(r.system for r in canaries.responses)
    flagged = Counter(system for (_, system) in flags if system in canaries.kinds)
    return {
        "kinds": canaries.kinds,
        "sources": canaries.sources,
        "against": canaries.against,
        "items": len(canaries.items),
        "pairs": len(canaries.pairs) if kind == "pairwise" else 0,
        # Absolute rubrics judge no pairs: the scores a canary's are compared with (empty and
        # flagged answers are no opponents; see `plan_canaries`).
        "compared": canaries.pairs if kind == "absolute" else [],
        "texts": recorded_texts(*texts) if texts else None,
        "responses": {s: responses[s] for s in canaries.kinds},
        "flagged": {s: flagged[s] for s in canaries.kinds},
        "flags": {
            blind_ids[unit]: rule for unit, rule in sorted(flags.items()) if unit in blind_ids
        },
    }


def _is_canary_request(request: JudgeRequest, key: BlindingKey, canaries: set[str]) -> bool:
    if not canaries:
        return False
    if request.pair_id is not None:
        return not canaries.isdisjoint(key.pairs[request.pair_id])
    return request.blind_id is not None and key.systems[request.blind_id] in canaries


def _usable_key(rundir: RunDir, config_hash: str, log: Callable[[str], None]) -> BlindingKey | None:
    """The key an earlier prepare of this run left, after checking the store agrees with it.

    A store holding requests without a key cannot be unblinded: with nothing judged yet it is
    discarded and the run prepared afresh; with replies stored, the user decides."""
    if not rundir.has_store():
        return rundir.read_key() if rundir.has_key() else None
    with rundir.open_store() as store:
        previous = store.get_meta("config_hash")
        counts = store.counts()
    if previous is not None and previous != config_hash:
        raise ConfigError(
            f"run dir {rundir.path} holds a run prepared from a different config; "
            "choose another --run-dir or remove that one"
        )
    if rundir.has_key():
        return rundir.read_key()
    if counts["requests"] == 0:
        return None
    if counts["responses"] == 0:
        log(
            f"{rundir.key_file.name} is missing and nothing was judged yet: "
            "preparing the run afresh"
        )
        rundir.discard_store()
        return None
    raise DataError(
        f"the blinding key is missing, but the store holds {counts['responses']} replies "
        "judged under it: restore the key file, or remove the run dir to start again "
        "(identical requests are then served from the response cache)",
        path=str(rundir.key_file),
    )


def system_costs(responses: list[Response]) -> dict[str, dict[str, float | int | None]]:
    """Per system, what the responses table says each answer cost and took (when it says):
    the report shows it beside quality. Systems with neither column are left out."""
    import statistics

    out: dict[str, dict[str, float | int | None]] = {}
    for system in sorted({r.system for r in responses}):
        mine = [r for r in responses if r.system == system]
        latencies = [r.latency_s for r in mine if r.latency_s is not None]
        costs = [r.cost_usd for r in mine if r.cost_usd is not None]
        if not latencies and not costs:
            continue
        out[system] = {
            "responses": len(mine),
            "latency_median_s": statistics.median(latencies) if latencies else None,
            "latency_known": len(latencies),
            "cost_usd_total": sum(costs) if costs else None,
            "cost_usd_mean": sum(costs) / len(costs) if costs else None,
            "cost_known": len(costs),
        }
    return out
