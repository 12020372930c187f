"""Prepare a run: load -> blind -> pair -> render every judge request -> store.

This is the offline half of the pipeline. It spends nothing: after it, the run dir holds every
request the judges will receive, so a user can inspect prompts, counts and the scrub report
before paying. Preparing the same config into the same run dir again is a no-op (ids are
content hashes and the blinding secret is reused from the run's key).

It streams: the input is indexed by item in a scratch SQLite file (`judge.run.staging`), then
blinded, paired, rendered and stored a chunk of items at a time, so memory holds one chunk,
not the data (a million responses prepare in well under a gigabyte). `on_stored` hears of each
chunk's requests once they are stored: `judge run` starts judging them while the rest are
still being prepared.

Crash safety rests on one order: each chunk's opaque ids reach the key (fsynced, see
`judge.blinding.key`) before any of its rows are stored, and the store's `config_hash` is
written last. A prepare killed at any instant leaves either no key (nothing stored yet: the
next prepare starts afresh) or a key whose secret the next prepare reuses to add the same rows
again (inserts are idempotent).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from judge.blinding.blind import (
    ScrubTally,
    blind_one,
    new_secret,
    opaque_id,
    pair_up,
    presentation_key,
    wanted_pairs,
)
from judge.blinding.canaries import (
    CanaryPlan,
    is_opponent,
    item_canaries,
    recorded_texts,
)
from judge.blinding.injection import (
    CONSTANT_MIN_ITEMS,
    CONSTANT_MIN_SHARE,
    constant_key,
    scan_one,
)
from judge.blinding.injection import report as injection_report
from judge.blinding.key import KeyWriter
from judge.blinding.scrubber import Scrubber
from judge.config.limits import check_planned
from judge.config.run_config import RunConfig
from judge.errors import ConfigError, DataError
from judge.inputs.importers.importing import with_imported_data
from judge.rubric.rubrics import Rubric, load_rubric
from judge.run.canary_plan import (
    canary_flags,
    canary_record,
    canary_requests,
    configured_texts,
    plan_canaries,
)
from judge.run.input_checks import check_run_inputs
from judge.run.prepared import (
    PrepareSummary,
    StoredCallback,
    already_prepared,
    config_hashes,
    fingerprint,
    record_prepared,
)
from judge.run.provenance import environment
from judge.run.requests import RequestPlanner
from judge.run.staging import ItemGroup, Staging
from judge.store.run_store import RunStore
from judge.store.rundir import RunDir
from judge.types import (
    BlindedPair,
    BlindedResponse,
    BlindingKey,
    InjectionReport,
    JudgeRequest,
    Response,
    ScrubReport,
)

_LOG_EVERY_S = 5.0
"""Progress lines while preparing: a long prepare is seen moving, a short one stays quiet."""
_FIRST_CHUNK_ITEMS = 8
CHUNK_ITEMS = 500
"""Items blinded, paired, rendered and stored at a time: a chunk's requests are what memory
holds (and the first ones `judge run` can send)."""


def prepare_run(
    config: RunConfig,
    run_dir: RunDir | str | Path,
    *,
    log: Callable[[str], None] = lambda _msg: None,
    max_requests: int | None = None,
    on_stored: StoredCallback | None = None,
    chunk_items: int | None = None,
) -> PrepareSummary:
    """Load, blind, pair and render every judge request into `run_dir`'s store, under the run
    dir's lock. Crash-safe: the blinding key holds each id before any row naming it exists, so
    a prepare killed at any instant is completed (or redone) by the next one.

    `max_requests`: refuse (`LimitError`) a run that would make more judge requests, counted
    before pairing or rendering anything, and before anything is written. `on_stored`: called
    with each chunk's requests once they are stored (from this thread). `chunk_items`: items
    per chunk (default `CHUNK_ITEMS`; the output is the same for any chunk size)."""
    rundir = run_dir if isinstance(run_dir, RunDir) else RunDir(run_dir)
    with rundir.locked():
        return prepare_locked(
            config,
            rundir,
            log=log,
            max_requests=max_requests,
            on_stored=on_stored,
            chunk_items=chunk_items,
        )


def prepare_locked(
    config: RunConfig,
    rundir: RunDir,
    *,
    log: Callable[[str], None] = lambda _msg: None,
    max_requests: int | None = None,
    on_stored: StoredCallback | None = None,
    chunk_items: int | None = None,
    stop: threading.Event | None = None,
) -> PrepareSummary:
    """`prepare_run` for a caller that holds the run dir's lock (in any of its threads).
    `stop`: when set (from another thread), raise `KeyboardInterrupt` at the next batch of
    input or chunk of items; what was stored stays stored (a later prepare completes it)."""
    chunk_items = CHUNK_ITEMS if chunk_items is None else chunk_items
    if chunk_items < 1:
        raise ValueError(f"chunk_items must be at least 1, got {chunk_items}")
    rundir.path.mkdir(parents=True, exist_ok=True)
    config = with_imported_data(config, rundir.imported_dir, log)

    def check() -> None:
        if stop is not None and stop.is_set():
            raise KeyboardInterrupt

    with Staging(rundir.staging_file, check=check) as stage:
        return _Prepare(config, rundir, stage, log).run(max_requests, on_stored, chunk_items)


def prepared_hashes(config: RunConfig, rubric: Rubric) -> tuple[str, str]:
    """The config's hash as a prepared run records it, and the hash earlier versions gave it
    (`config_hashes`)."""
    record = config.model_dump(mode="json")
    texts = configured_texts(config, rubric)
    if texts is not None:
        # The canaries' built-in texts are part of what a run sends, like its config.
        record["canary_texts"] = recorded_texts(*texts)
    return config_hashes(config, record)


class _Prepare:
    """One prepare: the steps share the config, the scratch index and the running counts."""

    def __init__(
        self, config: RunConfig, rundir: RunDir, stage: Staging, log: Callable[[str], None]
    ) -> None:
        self.config, self.rundir, self.stage, self.log = config, rundir, stage, log
        self.rubric = load_rubric(config.rubric)
        self.texts = configured_texts(config, self.rubric)
        self.config_hash, self.earlier_hash = prepared_hashes(config, self.rubric)
        self.systems: list[str] = []
        self.canaries = CanaryPlan()
        self.canary_items: set[str] = set()
        self.flags: dict[tuple[str, str], str] = {}
        self.skipped: list[tuple[str, str, str]] = []
        self.pairs = self.requests = self.same_family = self.canary_requests = 0
        self.stored = 0
        """Requests the store holds (an earlier prepare's and this one's)."""
        self.canary_ids: dict[tuple[str, str], str] = {}
        """(item_id, canary) -> opaque id of each canary response."""
        self.canary_scans: list[tuple[str, str, str | None, bytes | None]] = []

    # -- the steps -------------------------------------------------------------------------

    def run(
        self, max_requests: int | None, on_stored: StoredCallback | None, chunk_items: int
    ) -> PrepareSummary:
        config, rubric, stage = self.config, self.rubric, self.stage
        inputs = fingerprint(config, self.config_hash, self.rubric.hash)
        done = already_prepared(self.rundir, inputs)
        if done is not None and (max_requests is None or done.requests <= max_requests):
            self.log("prepared already, from the same config and input files")
            with self.rundir.open_store() as store:
                columns = store.strata_columns()
            # The labels may have changed since (they are not among the inputs prepared).
            check_run_inputs(config, rubric.kind, done.systems, columns)
            if on_stored is not None:
                on_stored([], done.requests)
            return done
        set_aside = self._load()
        # Before any request is stored: `judge run` starts judging the first stored chunk.
        check_run_inputs(config, rubric.kind, self.systems, stage.strata_columns)
        if config.canaries is not None:
            self._plan_canaries()
        previous_key = _usable_key(self)
        secret = (previous_key.blinding_secret if previous_key else config.blinding.secret) or (
            new_secret()
        )
        if max_requests is not None:
            extra = canary_requests(config, rubric.kind, self.canaries)
            check_planned(
                config, rubric.kind, self.systems, stage.item_systems(), max_requests, extra=extra
            )
        scrubber = None
        if config.blinding.scrub:
            scrubber = Scrubber(
                self.systems,
                extra_markers=config.blinding.extra_markers,
                scrub_ambiguous=config.blinding.scrub_ambiguous,
            )
        wanted = (
            wanted_pairs(self.systems, config.pairs.mode, config.pairs.baseline)
            if rubric.kind == "pairwise"
            else []
        )
        _check_planted(config, self.systems)
        planner = RequestPlanner(config, rubric, self._system_pairs(wanted))
        keys = self.rundir.key_writer(secret, previous_key)
        tally = ScrubTally(self.systems)
        self.log(
            f"blinding, pairing and rendering {stage.responses:,} responses of "
            f"{len(self.systems)} systems ({rubric.id}@{rubric.version})"
        )
        try:
            with self.rundir.open_store() as store:
                self.stored = store.request_count()
                self._store_chunks(
                    store, keys, tally, scrubber, secret, wanted, planner, on_stored, chunk_items
                )
                store.add_items(stage.unanswered_items())
                if not stage.scanned:
                    self.flags = self._flags()
                scrub = tally.report()
                injection = self._injection_report(secret)
                keys.finish()  # the whole key, before the store says the run is prepared
                if store.get_meta("config_hash") is None:
                    self._write_meta(store, scrub, injection, set_aside)
        finally:
            keys.close()
        self.rundir.write_blinding_tables(stage.shown(), stage.pairs(), scrub)
        summary = PrepareSummary(
            run_dir=self.rundir.path,
            items=stage.items,
            responses=stage.responses,
            systems=self.systems,
            pairs=self.pairs,
            skipped_pairs=len(self.skipped),
            requests=self.requests,
            canary_requests=self.canary_requests,
            same_family_requests=self.same_family,
            rubric=f"{rubric.id}@{rubric.version}",
            scrub=scrub,
            injection=injection,
            judges=[j.model for j in config.judges],
        )
        record_prepared(self.rundir, inputs, summary)
        return summary

    def _plan_canaries(self) -> None:
        """The canaries' opponents must not be flagged answers: scan before pairing."""
        stage = self.stage
        self.log(f"checking {stage.responses:,} responses for text that addresses the judge")
        stage.scan(_scan_text)
        self.flags = self._flags()
        assert self.texts is not None
        self.canaries = plan_canaries(self.config, self.systems, self.texts, stage, self.flags)
        self.canary_items = set(self.canaries.items)

    def _store_chunks(
        self,
        store: RunStore,
        keys: KeyWriter,
        tally: ScrubTally,
        scrubber: Scrubber | None,
        secret: str,
        wanted: list[tuple[str, str]],
        planner: RequestPlanner,
        on_stored: StoredCallback | None,
        chunk_items: int,
    ) -> None:
        """Blind, pair, render and store the staged input, a chunk of items at a time."""
        stage = self.stage
        chunk: list[ItemGroup] = []
        done = 0
        last_log = time.monotonic()
        # The first chunks are small, so the first requests are stored (and sent) at once;
        # they double up to `chunk_items`.
        size = min(_FIRST_CHUNK_ITEMS, chunk_items)
        for group in stage.groups():
            chunk.append(group)
            if len(chunk) >= size:
                size = min(2 * size, chunk_items)
                stage.check()
                done += self._store_chunk(
                    chunk, store, keys, tally, scrubber, secret, wanted, planner, on_stored
                )
                chunk = []
                if time.monotonic() - last_log >= _LOG_EVERY_S:
                    self.log(f"prepared {done:,} of {stage.items:,} items")
                    last_log = time.monotonic()
        if chunk:
            self._store_chunk(
                chunk, store, keys, tally, scrubber, secret, wanted, planner, on_stored
            )

    def _load(self) -> int:
        """Index the input; returns the responses set aside (systems not in `data.systems`)."""
        config, stage = self.config, self.stage
        self.log(f"loading items from {config.data.items}")
        ids = stage.load_items(config.data.items, config.data.columns)
        self.log(f"loading responses from {config.data.responses}")
        keep = set(config.data.systems) if config.data.systems is not None else None
        stage.load_responses(
            config.data.responses,
            ids,
            allow_empty_outputs=config.data.allow_empty_outputs,
            keep=keep,
            columns=config.data.columns,
        )
        systems = sorted(stage.systems)
        if config.data.systems is not None:
            unknown = sorted(set(config.data.systems) - set(systems))
            if unknown:
                everything = sorted({*stage.systems, *stage.other_systems})
                raise ConfigError(
                    f"data.systems names {', '.join(unknown)}, which {config.data.responses} "
                    f"does not contain; its systems are: {', '.join(everything)}"
                )
            self.log(
                f"evaluating {len(systems)} systems; {stage.set_aside} responses of other "
                "systems set aside"
            )
        if len(systems) < 2 and self.rubric.kind == "pairwise":
            raise ConfigError(
                f"{config.data.responses}: pairwise rubric '{self.rubric.id}' needs responses "
                f"from at least two systems; found {systems or 'none'}"
            )
        self.systems = systems
        return stage.set_aside

    def _flags(self) -> dict[tuple[str, str], str]:
        """(item_id, system) -> rule of every flagged response (on the text as written:
        flagged here, judged unchanged)."""
        flags = self.stage.flagged()
        constant = self.stage.constant_answers(CONSTANT_MIN_ITEMS, CONSTANT_MIN_SHARE)
        for unit in sorted(constant):
            flags.setdefault(unit, "constant_answer")
        return flags

    def _system_pairs(self, wanted: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Every system pair the run may judge (absolute: each system with itself)."""
        canaries = sorted({(name, system) for _, name, system in self.canaries.pairs})
        if self.rubric.kind == "absolute":
            return [(s, s) for s in [*self.systems, *self.canaries.kinds]]
        return [*wanted, *canaries]

    def _store_chunk(
        self,
        chunk: list[ItemGroup],
        store: RunStore,
        keys: KeyWriter,
        tally: ScrubTally,
        scrubber: Scrubber | None,
        secret: str,
        wanted: list[tuple[str, str]],
        planner: RequestPlanner,
        on_stored: StoredCallback | None,
    ) -> int:
        """Blind, pair and render one chunk of items; its ids reach the key before its rows
        reach the store."""
        seed = self.config.blinding.seed
        pairwise = self.rubric.kind == "pairwise"
        kinds = self.canaries.kinds
        blinded_rows: list[BlindedResponse] = []
        pair_rows: list[BlindedPair] = []
        requests: list[JudgeRequest] = []
        scans: list[tuple[str | None, bytes | None, str, str]] = []
        for group in chunk:
            item = group.item
            responses = group.responses
            if not self.stage.scanned:
                for r in responses:
                    scans.append((*_scan_text(r.output), r.item_id, r.system))
            canaries: list[Response] = []
            listed = [(item.item_id, a, b) for a, b in wanted]
            if item.item_id in self.canary_items:
                canaries, pairs_of_canaries = self._item_canaries(responses)
                listed += pairs_of_canaries
            present: dict[str, str] = {}
            system_of: dict[str, str] = {}
            blinded: list[BlindedResponse] = []
            for r in [*responses, *canaries]:
                b, marks = blind_one(r, secret, scrubber)
                if r.system in kinds:
                    self.canary_ids[(r.item_id, r.system)] = b.blind_id
                    self.canary_scans.append((r.item_id, r.system, *_scan_text(r.output)))
                else:
                    tally.add(r.system, marks)
                keys.add_response(b.blind_id, r.system)
                present[r.system] = b.blind_id
                system_of[b.blind_id] = r.system
                blinded.append(b)
            blinded_rows += blinded
            if pairwise:
                pairs, slots, skipped = pair_up(secret, seed, {item.item_id: present}, listed)
                for unit in skipped:
                    if unit[1] in kinds:
                        raise ConfigError(f"no response to pair for {unit}")
                    self.skipped.append(unit)
                for pid, (a, b) in slots.items():
                    keys.add_pair(pid, a, b)
                pair_rows += pairs
                by_id = {b.blind_id: b for b in blinded}
                new = list(planner.for_pairs(item, pairs, by_id, slots))
                self.canary_requests += sum(
                    1
                    for q in new
                    if any(s in kinds for s in slots[q.pair_id])  # type: ignore[index]
                )
            else:
                new = list(planner.for_responses(item, blinded, system_of))
                self.canary_requests += sum(1 for q in new if system_of[q.blind_id] in kinds)  # type: ignore[index]
            self.same_family += sum(q.same_family for q in new)
            requests += new
        if scans:
            self.stage.record_scans(scans)
        keys.flush()  # durable before any row naming these ids
        store.add_items(g.item for g in chunk)
        store.add_blinded(blinded_rows)
        store.add_pairs(pair_rows)
        new = store.add_requests(requests)
        self.stage.add_shown((presentation_key(seed, b.blind_id), b) for b in blinded_rows)
        self.stage.add_pairs(pair_rows)
        self.pairs += len(pair_rows)
        self.requests += len(requests)
        self.stored += new
        if on_stored is not None:
            on_stored(requests, self.stored)
        return len(chunk)

    def _item_canaries(
        self, responses: list[Response]
    ) -> tuple[list[Response], list[tuple[str, str, str]]]:
        present = {
            r.system: r for r in responses if is_opponent(r, self.canaries.against, self.flags)
        }
        assert self.texts is not None
        return item_canaries(present, self.canaries.kinds, *self.texts)

    def _injection_report(self, secret: str) -> InjectionReport:
        flagged = {unit: opaque_id(secret, *unit) for unit in self.flags}
        return injection_report(self.flags, flagged, self.systems, responses=self.stage.responses)

    def _write_meta(
        self, store: RunStore, scrub: ScrubReport, injection: InjectionReport, set_aside: int
    ) -> None:
        config, rubric = self.config, self.rubric
        store.set_meta("config", config.model_dump(mode="json"))
        store.set_meta("rubric", {"id": rubric.id, "version": rubric.version, "hash": rubric.hash})
        store.set_meta("seeds", {"blinding": config.blinding.seed, "compare": config.compare.seed})
        store.set_meta("environment", environment())
        store.set_meta("scrub_report", scrub.model_dump(mode="json"))
        store.set_meta("injection_report", injection.model_dump(mode="json"))
        if self.canaries.kinds:
            store.set_meta(
                "canaries",
                canary_record(
                    self.canaries,
                    canary_flags(self.canary_scans),
                    self.canary_ids,
                    self.texts,
                    rubric.kind,
                ),
            )
        store.set_meta("skipped_pairs", [list(s) for s in self.skipped])
        store.set_meta("responses_set_aside", set_aside)
        store.set_meta("system_costs", self.stage.system_costs())
        # Last: a store with a config hash is a prepared run.
        store.set_meta("config_hash", self.config_hash)


def _scan_text(text: str) -> tuple[str | None, bytes | None]:
    """One response's injection rule and constant-answer key."""
    rule, reduced = scan_one(text)
    return rule, constant_key(reduced)


def _usable_key(run: _Prepare) -> BlindingKey | None:
    """The key an earlier prepare of this run left, after checking the store agrees with it.

    A store holding requests without a key cannot be unblinded: with nothing judged yet it is
    discarded and the run prepared afresh; with replies stored, the user decides."""
    rundir = run.rundir
    if not rundir.has_store():
        return rundir.read_key() if rundir.has_key() else None
    with rundir.open_store() as store:
        previous = store.get_meta("config_hash")
        rubric = (store.get_meta("rubric") or {}).get("hash")
        counts = store.counts()
    if previous is not None and previous not in (run.config_hash, run.earlier_hash):
        raise ConfigError(
            f"run dir {rundir.path} holds a run prepared from a different config; "
            "choose another run dir (--run-dir, run_dir=) or remove that one"
        )
    if rubric is not None and rubric != run.rubric.hash:
        # Its requests would be planned again beside the old ones: both would be judged.
        raise ConfigError(
            f"run dir {rundir.path} was prepared with another version of rubric "
            f"'{run.rubric.id}' (its text changed since); restore it, choose another run dir "
            "(--run-dir, run_dir=) or remove that one"
        )
    if rundir.has_key():
        return rundir.read_key()
    if counts["requests"] == 0:
        return None
    if counts["responses"] == 0:
        run.log(
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


def _check_planted(config: RunConfig, systems: Sequence[str]) -> None:
    plant = config.simulator.plant if config.simulator is not None else {}
    unknown = sorted(set(plant) - set(systems))
    if unknown:
        raise ConfigError(
            f"simulator.plant names {', '.join(unknown)}, not a system of these responses; "
            f"known systems: {', '.join(systems)}"
        )
