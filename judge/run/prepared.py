"""What a finished prepare produced, and how a later one knows there is nothing to redo.

A prepare ends by recording its summary under a fingerprint of everything it read: the config
(its hash), the input files' bytes and this package's version. A later prepare of the same run
dir (every `judge run` that resumes starts with one) whose fingerprint matches returns that
summary without loading, blinding or rendering anything: at 10^6 responses that is minutes of
CPU that a resumed run would otherwise spend re-rendering requests the store already holds.
Anything else (an appended responses file, another version, a missing blinding table) makes
it prepare again, which stores only what is new.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from judge.config.run_config import RunConfig
from judge.hashing import content_hash
from judge.store.rundir import RunDir
from judge.types import InjectionReport, JudgeRequest, ScrubReport

_META_KEY = "prepared"
_READ_BYTES = 1 << 20


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


StoredCallback = Callable[[Sequence[JudgeRequest], int], None]
"""Called with a chunk's requests once stored, and the requests the store then holds."""


HOW_SENT_KEYS = (
    "mode",
    "batch",
    "prompt_cache",
    "cached_input_cost_per_mtok",
    "cache_write_cost_per_mtok",
    "batch_discount",
)


def config_hashes(config: RunConfig, record: dict[str, Any]) -> tuple[str, str]:
    """The hash of a run's config `record` (its JSON dump, and what else a run sends), and the
    hash earlier versions gave the same config, which the runs they prepared carry. A judge's
    transport is left out: it changes how requests travel, not what they say (the cache key
    leaves it out too). Earlier versions hashed it: `sdk`, their default, unless the config
    said otherwise."""
    current = copy.deepcopy(record)
    earlier = copy.deepcopy(record)
    for spec, now, before in zip(config.judges, current["judges"], earlier["judges"], strict=True):
        # How requests are sent (batch or not, a cache breakpoint) and what is paid for them
        # at the cached and batch rates change neither what they say nor their cache keys:
        # left out of both hashes, so a run prepared before these keys existed, or resumed
        # with `--batch`, is the same run.
        for key in HOW_SENT_KEYS:
            now.pop(key, None)
            before.pop(key, None)
        now.pop("transport", None)
        before["transport"] = spec.transport if "transport" in spec.model_fields_set else "sdk"
    for dumped in (current, earlier):
        # Settings added since, at their defaults, hash as the configs before them did: the
        # runs those versions prepared are the same runs.
        if not dumped["compare"].get("control"):
            dumped["compare"].pop("control", None)
        if not dumped["data"].get("columns"):
            dumped["data"].pop("columns", None)
        simulator = dumped.get("simulator") or {}
        if not simulator.get("heed", 1):
            simulator.pop("heed", None)
        for knobs in (simulator.get("judges") or {}).values():
            if knobs.get("heed") is None:
                knobs.pop("heed", None)
        if dumped["data"].get("source") is None:
            dumped["data"].pop("source", None)
        else:
            # Tables imported from `data.source`: where they were written is no input (a dry
            # run writes them elsewhere); their content is in the fingerprint.
            dumped["data"].pop("items", None)
            dumped["data"].pop("responses", None)
    return content_hash(current), content_hash(earlier)


def fingerprint(config: RunConfig, config_hash: str, rubric_hash: str) -> str:
    """`sha256:` of the config's and the rubric's hashes, the input files' contents and the
    package version."""
    from judge import __version__

    digest = hashlib.sha256(f"{config_hash}\n{rubric_hash}\n{__version__}\n".encode())
    for path in (config.data.items, config.data.responses):
        digest.update(f"{path.name}\n".encode())
        with path.open("rb") as fh:
            while block := fh.read(_READ_BYTES):
                digest.update(block)
        digest.update(b"\n")
    return "sha256:" + digest.hexdigest()


def already_prepared(
    rundir: RunDir, print_: str, *, read_only: bool = False
) -> PrepareSummary | None:
    """The summary of the prepare that left this run dir complete from the same inputs, or
    None when anything must be (re)done. `read_only`: write nothing (a dry run); a store of
    an older version then reads as not prepared."""
    from judge.errors import StoreError
    from judge.store.run_store import RunStore

    done = [rundir.key_file, rundir.blinded_file, rundir.pairs_file, rundir.scrub_file]
    if not rundir.has_store() or rundir.key_log_file.exists() or not all(p.exists() for p in done):
        return None
    try:
        store = RunStore.open_read_only(rundir.path) if read_only else rundir.open_store()
    except StoreError:
        if not read_only:
            raise
        return None
    with store:
        recorded = store.get_meta(_META_KEY)
        stored = store.request_count()
    if not isinstance(recorded, dict) or recorded.get("fingerprint") != print_:
        return None
    summary = _summary(recorded["summary"], rundir.path)
    return summary if summary.requests == stored else None


def record_prepared(rundir: RunDir, print_: str, summary: PrepareSummary) -> None:
    """Remember `summary` as what preparing from `print_`'s inputs gives."""
    value = asdict(summary)
    value.update(
        run_dir=None,
        scrub=summary.scrub.model_dump(mode="json"),
        injection=summary.injection.model_dump(mode="json"),
    )
    with rundir.open_store() as store:
        store.set_meta(_META_KEY, {"fingerprint": print_, "summary": value})


def _summary(value: dict[str, Any], run_dir: Path) -> PrepareSummary:
    return PrepareSummary(
        **{
            **value,
            "run_dir": run_dir,
            "scrub": ScrubReport.model_validate(value["scrub"]),
            "injection": InjectionReport.model_validate(value["injection"]),
        }
    )
