"""Prepare a run: load -> blind -> pair -> render every judge request -> store.

This is the offline half of the pipeline. It spends nothing: after it, the run dir holds every
request the judges will receive, so a user can inspect prompts, counts and the scrub report
before paying. Preparing the same config into the same run dir again is a no-op (ids are
content hashes and the blinding secret is reused from the run's key file).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from judge.blinding import Scrubber, blind_responses, make_pairs, new_secret
from judge.config import JudgeSpec, RunConfig
from judge.data import load_items, load_responses
from judge.errors import ConfigError
from judge.families import check_pairs_judgeable, is_same_family
from judge.files import write_json, write_jsonl
from judge.hashing import content_hash
from judge.limits import check_requests
from judge.provenance import environment
from judge.rubrics import Rubric, load_rubric, render_absolute, render_pairwise
from judge.store import RunStore
from judge.types import (
    BlindedPair,
    BlindedResponse,
    BlindingKey,
    ChatMessage,
    Item,
    JudgeRequest,
    Order,
    Response,
    ScrubReport,
)

KEY_FILENAME = "blinding_key.json"
BLINDED_FILENAME = "blinded.jsonl"
PAIRS_FILENAME = "pairs.jsonl"
SCRUB_REPORT_FILENAME = "scrub_report.json"


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
    same_family_requests: int
    rubric: str
    scrub: ScrubReport
    judges: list[str] = field(default_factory=list)


def prepare_run(
    config: RunConfig,
    run_dir: str | Path,
    *,
    log: Callable[[str], None] = lambda _msg: None,
    max_requests: int | None = None,
) -> PrepareSummary:
    """`max_requests`: refuse (`LimitError`) a run that would make more judge requests,
    counted before pairing or rendering anything, and before the store is opened."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    config_hash = content_hash(config.model_dump(mode="json"))
    rubric = load_rubric(config.rubric)

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

    secret = run_secret(run_dir, config.blinding.secret)
    scrubber = None
    if config.blinding.scrub:
        scrubber = Scrubber(
            systems,
            extra_markers=config.blinding.extra_markers,
            scrub_ambiguous=config.blinding.scrub_ambiguous,
            family_overrides=config.families,
        )
    log(f"blinding {len(responses)} responses of {len(systems)} systems")
    blinded, key, scrub = blind_responses(
        responses, secret=secret, seed=config.blinding.seed, scrubber=scrubber
    )
    if max_requests is not None:
        check_requests(config, rubric.kind, blinded, key, max_requests)
    pairs: list[BlindedPair] = []
    skipped: list[tuple[str, str, str]] = []
    if rubric.kind == "pairwise":
        pairs, key, skipped = make_pairs(
            blinded,
            key,
            mode=config.pairs.mode,
            baseline=config.pairs.baseline,
            seed=config.blinding.seed,
        )

    requests = list(_plan_requests(config, rubric, items, blinded, pairs, key))
    same_family = sum(r.same_family for r in requests)

    with RunStore.open(run_dir) as store:
        previous = store.get_meta("config_hash")
        if previous is not None and previous != config_hash:
            raise ConfigError(
                f"run dir {run_dir} holds a run prepared from a different config; "
                "choose another --run-dir or remove that one"
            )
        store.add_items(items.values())
        store.add_blinded(blinded)
        store.add_pairs(pairs)
        store.add_requests(requests)
        if previous is None:
            store.set_meta("config_hash", config_hash)
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
            store.set_meta("skipped_pairs", [list(s) for s in skipped])
            store.set_meta("responses_set_aside", set_aside)
            store.set_meta("system_costs", system_costs(responses))

    write_blinding_outputs(run_dir, key, blinded, pairs, scrub)
    return PrepareSummary(
        run_dir=run_dir,
        items=len(items),
        responses=len(responses),
        systems=systems,
        pairs=len(pairs),
        skipped_pairs=len(skipped),
        requests=len(requests),
        same_family_requests=same_family,
        rubric=f"{rubric.id}@{rubric.version}",
        scrub=scrub,
        judges=[j.model for j in config.judges],
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


def write_blinding_outputs(
    out_dir: Path,
    key: BlindingKey,
    blinded: Sequence[BlindedResponse],
    pairs: Sequence[BlindedPair],
    scrub: ScrubReport,
) -> None:
    """The key (owner-only) apart from the judge-visible tables and the scrub report."""
    write_json(out_dir / KEY_FILENAME, key.model_dump(mode="json"), private=True)
    write_jsonl(out_dir / BLINDED_FILENAME, (b.model_dump(mode="json") for b in blinded))
    write_jsonl(out_dir / PAIRS_FILENAME, (p.model_dump(mode="json") for p in pairs))
    write_json(out_dir / SCRUB_REPORT_FILENAME, scrub.model_dump(mode="json"))


def orders_for(config: RunConfig) -> tuple[Order, ...]:
    return ("AB", "BA") if config.orders == "both" else ("AB",)


def _plan_requests(
    config: RunConfig,
    rubric: Rubric,
    items: dict[str, Item],
    blinded: Sequence[BlindedResponse],
    pairs: Sequence[BlindedPair],
    key: BlindingKey,
) -> Iterable[JudgeRequest]:
    if not config.judges:
        return
    by_id = {b.blind_id: b for b in blinded}
    if rubric.kind == "absolute":
        # Absolute grading sees one response: a judge is excluded from that system's responses
        # only, i.e. the "pair" is the system with itself.
        plan = check_pairs_judgeable(
            [(s, s) for s in set(key.systems.values())],
            config.judges,
            allow_same_family=config.allow_same_family,
            overrides=config.families,
        )
        for b in blinded:
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
    for pair in pairs:
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


def run_secret(run_dir: Path, configured: str | None = None) -> str:
    """The run's HMAC secret: from its existing key file (so a rerun keeps its opaque ids),
    else the configured one, else a fresh one."""
    path = run_dir / KEY_FILENAME
    if path.exists():
        return BlindingKey.model_validate_json(path.read_text(encoding="utf-8")).blinding_secret
    return configured or new_secret()
