"""`judge blind`: blind a responses table into judge-visible tables and a key, streaming like
prepare (`judge.run.staging`), so a table of millions of responses blinds in bounded memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from judge.blinding.blind import (
    ScrubTally,
    blind_one,
    new_secret,
    pair_up,
    presentation_key,
    wanted_pairs,
)
from judge.blinding.scrubber import Scrubber
from judge.run.staging import Staging
from judge.store.rundir import RunDir
from judge.types import ScrubReport


@dataclass
class Blinded:
    items: int
    responses: int
    systems: list[str]
    pairs: int
    skipped: int
    """System pairs on an item where one system has no response (not paired)."""
    scrub: ScrubReport


def blind_tables(
    items: Path,
    responses: Path,
    out: RunDir,
    *,
    seed: int,
    mode: Literal["all", "baseline"],
    baseline: str | None,
    extra_markers: Sequence[str] = (),
    scrub_ambiguous: Sequence[str] = (),
    allow_empty_outputs: bool = False,
) -> Blinded:
    """Write `out`'s blinded and pairs tables, scrub report and key. The secret of a key
    already in `out` is reused: the same inputs keep their opaque ids."""
    out.path.mkdir(parents=True, exist_ok=True)
    previous = out.read_key() if out.has_key() else None
    secret = previous.blinding_secret if previous is not None else new_secret()
    with Staging(out.staging_file) as stage:
        ids = stage.load_items(items)
        stage.load_responses(responses, ids, allow_empty_outputs=allow_empty_outputs, keep=None)
        systems = sorted(stage.systems)
        wanted = wanted_pairs(systems, mode, baseline)
        scrubber = Scrubber(systems, extra_markers=extra_markers, scrub_ambiguous=scrub_ambiguous)
        tally = ScrubTally(systems)
        keys = out.key_writer(secret, previous)
        pairs = skipped = 0
        try:
            for group in stage.groups():
                present: dict[str, str] = {}
                shown = []
                for r in group.responses:
                    b, marks = blind_one(r, secret, scrubber)
                    tally.add(r.system, marks)
                    keys.add_response(b.blind_id, r.system)
                    present[r.system] = b.blind_id
                    shown.append((presentation_key(seed, b.blind_id), b))
                item_id = group.item.item_id
                listed = [(item_id, a, b) for a, b in wanted]
                made, slots, missing = pair_up(secret, seed, {item_id: present}, listed)
                for pid, (a, b) in slots.items():
                    keys.add_pair(pid, a, b)
                stage.add_shown(shown)
                stage.add_pairs(made)
                pairs += len(made)
                skipped += len(missing)
            keys.finish()
        finally:
            keys.close()
        scrub = tally.report()
        out.write_blinding_tables(stage.shown(), stage.pairs(), scrub)
        return Blinded(
            items=stage.items,
            responses=stage.responses,
            systems=systems,
            pairs=pairs,
            skipped=skipped,
            scrub=scrub,
        )
