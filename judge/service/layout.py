"""Where a run's files live under the data dir.

<data_dir>/service.sqlite          service metadata (default database)
<data_dir>/caches/<owner>.sqlite   response cache, one per token: identical requests are
                                   paid once per owner, and no owner learns (from `cached`
                                   flags or timings) what another owner asked
<data_dir>/runs/<run_id>/inputs/   uploaded files and the config the run executes
<data_dir>/runs/<run_id>/run/      the pipeline's run dir (`judge.store.rundir.RunDir`: its store,
                                   outputs and the lock its one worker holds)
<data_dir>/runs/<run_id>/worker.*  the worker process's log and outcome
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from judge.store.rundir import RunDir

RUN_ID = re.compile(r"^r_[0-9a-f]{20}$")


@dataclass(frozen=True)
class RunPaths:
    root: Path

    @property
    def inputs(self) -> Path:
        return self.root / "inputs"

    @property
    def run_dir(self) -> Path:
        return self.root / "run"

    @property
    def rundir(self) -> RunDir:
        """The run dir as the library knows it (its files, store and lock)."""
        return RunDir(self.run_dir)

    @property
    def config(self) -> Path:
        """The config the run executes: the client's, with upload paths filled in."""
        return self.inputs / "config.yaml"

    @property
    def log(self) -> Path:
        return self.root / "worker.log"

    @property
    def outcome(self) -> Path:
        return self.root / "worker.outcome.json"


def run_paths(data_dir: Path, run_id: str) -> RunPaths:
    if not RUN_ID.match(run_id):
        raise ValueError(f"not a run id: {run_id!r}")
    return RunPaths(data_dir.resolve() / "runs" / run_id)


def cache_path(data_dir: Path, owner_id: str) -> Path:
    return data_dir.resolve() / "caches" / f"{owner_id}.sqlite"
