"""How `make test` spreads the suite over its two workers (`pytest -n 2 --dist loadfile`).

xdist's file scheduling hands out test files biggest-first by *test count*: a file of 300
one-millisecond tests goes before one slow browser test, and whatever slow file is left for last
runs alone while the other worker idles. It also builds a session fixture once on each worker
that uses it: the security suite's live service (tests/service/secured.py, ~15 s per backend)
was built eight times in one run, for five files.

So here files go out longest-first by their measured time (tests/durations.json), files not in
it first of all (unknown may be long), and the files that share the live service go as one unit,
to one worker, which builds it once per backend.

    pytest -n 2 --dist loadfile --record-durations   # rewrites tests/durations.json
"""

from __future__ import annotations

import json
from collections import OrderedDict, defaultdict
from pathlib import Path

import pytest
from xdist.scheduler import LoadFileScheduling
from xdist.workermanage import WorkerController

DURATIONS = Path(__file__).parent / "durations.json"

SHARED_SERVICE = "tests/service/secured.py"
"""The unit name of the files that use its session fixture `env`."""
USES_SHARED_SERVICE = {
    "tests/service/test_owner_page.py",
    "tests/service/test_schema_fuzz.py",
    "tests/service/test_security.py",
    "tests/service/test_uploads.py",
    "tests/service/test_work_limits.py",
}


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its file, or the shared service's group."""
    path = nodeid.split("::", 1)[0]
    return SHARED_SERVICE if path in USES_SHARED_SERVICE else path


def load_durations() -> dict[str, float]:
    try:
        data = json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


class LongestFirst(LoadFileScheduling):
    """File scheduling with the shared-service files as one unit, longest unit first."""

    def __init__(self, config: pytest.Config, log: object = None) -> None:
        super().__init__(config, log)  # type: ignore[arg-type]
        self.durations = load_durations()
        self.ordered = False

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)

    def _assign_work_unit(self, node: WorkerController) -> None:
        # The base class fills its queue by test count and hands out units from the front as
        # workers ask: ordered here, once, before the first unit goes out.
        if not self.ordered:
            unknown = max(self.durations.values(), default=0.0) + 1.0
            units = sorted(self.workqueue.items(), key=lambda u: -self.durations.get(u[0], unknown))
            self.workqueue = OrderedDict(units)
            self.ordered = True
        super()._assign_work_unit(node)


class DurationRecorder:
    """On the controller: adds up each unit's setup, call and teardown times from the workers'
    reports and writes them to tests/durations.json at the end of a full, passing run."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[unit_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if exitstatus != 0 or not self.seconds:
            return
        ordered = dict(sorted(((k, round(v, 1)) for k, v in self.seconds.items()), key=str))
        DURATIONS.write_text(json.dumps(ordered, indent=1) + "\n")
