"""Gates judged by the pipeline, for tests: `JudgeEval` runs a config with `judge.evaluate` in
a run dir named for everything that decides what is sent, so a test run again with nothing
changed finds every judgment stored and sends no request; `JudgedRun.require` asserts on the
lower confidence bound of a win rate (`judge.summary.lower_bound`), never on the estimate.

Plain Python: the pytest plugin (`judge.pytest_plugin.plugin`) only chooses the directory.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judge.config.run_config import RunConfig, config_from_mapping, load_config
from judge.errors import RunDirBusy
from judge.hashing import content_hash
from judge.store.rundir import RunDir
from judge.summary.lower_bound import WinRateBound, win_rate_bound

if TYPE_CHECKING:
    import pandas as pd

    from judge.run.evaluate import Result
    from judge.summary.run_summary import RunSummary

_READ_BYTES = 1 << 20


@dataclass(frozen=True)
class JudgedRun:
    """A run `JudgeEval` made (or found made): its `judge.Result`, and the gate over it."""

    result: Result

    @property
    def summary(self) -> RunSummary:
        return self.result.summary

    @property
    def run_dir(self) -> Path:
        return self.result.run_dir.path

    @property
    def report_path(self) -> Path:
        return self.result.report_path

    def win_rate(self, system: str, *, over: str) -> WinRateBound:
        """`system`'s win rate over `over` with its interval: the human-corrected estimate
        when the run has labels, else the judge's paired comparison."""
        __tracebackhide__ = True  # pytest shows the test's line, not this one
        summary = self.result.summary
        if not summary.complete:
            raise AssertionError(
                f"judge gate: run {summary.run.name!r} stopped with "
                f"{summary.counts.pending} requests pending (its budget): no estimate to gate "
                f"on; raise budget.max_cost_usd or max_cost_usd=\nreport: {self.report_path}"
            )
        return win_rate_bound(summary, system, over)

    def require(self, system: str, *, over: str, at_least: float) -> WinRateBound:
        """Assert that the lower bound of `system`'s win rate over `over` (ties half) is at
        least `at_least`: 0.5 asks that it be better, 0.45 that it be at most 5 points
        worse. A bound that cannot be given fails. Returns the bound when it passes."""
        __tracebackhide__ = True
        bound = self.win_rate(system, over=over)
        if bound.ci_low is None or bound.ci_low < at_least:
            raise AssertionError(gate_message(bound, at_least, self.report_path))
        return bound


def gate_message(bound: WinRateBound, at_least: float, report: Path) -> str:
    """A failed gate in a few lines: the bound against the threshold, the estimate and its
    interval, where they come from, and the report to read next."""
    what = f"judge gate failed: win rate of {bound.system} over {bound.over}"
    if bound.ci_low is None:
        lines = [f"{what}: no lower bound ({bound.reason}); {_num(at_least)} required"]
    else:
        low, need = _apart(bound.ci_low, at_least)
        lines = [f"{what}: lower bound {low} < {need} required"]
    if bound.estimate is not None:
        interval = (
            f"[{_num(bound.ci_low)}, {_num(bound.ci_high)}]"
            if bound.ci_low is not None and bound.ci_high is not None
            else "none"
        )
        lines.append(
            f"estimate {_num(bound.estimate)}, {100 * bound.confidence:g}% interval {interval}"
        )
    lines.append(f"from {_source(bound)}")
    if bound.estimate is not None and bound.estimate >= at_least:
        lines.append(
            "the estimate alone would pass: the gate reads the interval's lower bound (one-sided "
            f"{50 * (1 + bound.confidence):g}%); more items, or human labels, narrow the interval"
        )
    if bound.warning:
        lines.append(f"warning: {bound.warning}")
    lines.append(f"report: {report}")
    return "\n".join(lines)


def _source(bound: WinRateBound) -> str:
    whose = f"{bound.judge}'s verdicts" if bound.judge else "the judge's verdicts"
    if bound.source == "corrected":
        return (
            f"the human-corrected estimate of {whose} ({bound.method}; "
            f"{bound.n} human-labelled of {bound.n_judged} judged)"
        )
    return (
        f"{whose}, {bound.method}, {bound.n} items; not calibrated against human labels "
        "(give labels= to gate on the corrected estimate)"
    )


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _apart(value: float, threshold: float) -> tuple[str, str]:
    """Both numbers with as many decimals as tell them apart (0.4996 < 0.500 reads as
    0.500 < 0.500 at three)."""
    for digits in range(3, 7):
        a, b = f"{value:.{digits}f}", f"{threshold:.{digits}f}"
        if a != b:
            return a, b
    return f"{value:.6g}", f"{threshold:.6g}"


@dataclass
class JudgeEval:
    """Runs configs with `judge.evaluate`, each in its own run dir under `root`, named for the
    config and the contents of its inputs; the response cache is shared beside them, so a run
    with some outputs changed pays only for the pairs that changed. Relative paths (the
    config's, the tables') are read against `base`."""

    root: Path
    base: Path = field(default_factory=Path.cwd)
    wait_s: float | None = 3600.0
    """How long to wait for another process judging the same inputs (pytest-xdist)."""
    _done: dict[str, JudgedRun] = field(default_factory=dict, init=False, repr=False)

    def __call__(
        self,
        config: RunConfig | Mapping[str, Any] | str | Path,
        *,
        items: pd.DataFrame | str | Path | None = None,
        responses: pd.DataFrame | str | Path | None = None,
        labels: pd.DataFrame | str | Path | None = None,
        columns: Mapping[str, str] | None = None,
        max_cost_usd: float | None = None,
    ) -> JudgedRun:
        """`judge.evaluate(config, ...)` (same arguments) in this session's run dir for those
        inputs; the same call twice in one session runs once."""
        cfg = self._config(config)
        items, responses, labels = (self._table(t) for t in (items, responses, labels))
        key = run_key(cfg, items, responses, columns)
        done = content_hash([key, None if labels is None else _digest(labels), max_cost_usd])
        if done not in self._done:
            run_dir = self.root / f"{cfg.name}-{key.removeprefix('sha256:')[:12]}"
            tables = {"items": items, "responses": responses, "labels": labels}
            result = self._evaluate(cfg, run_dir, tables, columns, max_cost_usd)
            self._done[done] = JudgedRun(result)
        return self._done[done]

    def _config(self, config: RunConfig | Mapping[str, Any] | str | Path) -> RunConfig:
        if isinstance(config, RunConfig):
            return config
        if isinstance(config, Mapping):
            return config_from_mapping(dict(config), self.base, source="config")
        return load_config(self.base / config)

    def _table(self, table: pd.DataFrame | str | Path | None) -> pd.DataFrame | Path | None:
        if table is None or _is_frame(table):
            return table  # type: ignore[return-value]
        return (self.base / table).resolve()  # type: ignore[operator]

    def _evaluate(
        self,
        cfg: RunConfig,
        run_dir: Path,
        tables: dict[str, pd.DataFrame | Path | None],
        columns: Mapping[str, str] | None,
        max_cost_usd: float | None,
    ) -> Result:
        from judge.run.evaluate import evaluate

        def once() -> Result:
            return evaluate(
                cfg, **tables, columns=columns, run_dir=run_dir, max_cost_usd=max_cost_usd
            )

        try:
            return once()
        except RunDirBusy:
            # Another test process (pytest-xdist) is judging the same inputs: once it is done,
            # this one finds every judgment stored and sends nothing.
            with RunDir(run_dir).locked(wait_s=self.wait_s):
                pass
            return once()


def run_key(
    cfg: RunConfig,
    items: pd.DataFrame | Path | None,
    responses: pd.DataFrame | Path | None,
    columns: Mapping[str, str] | None,
) -> str:
    """`sha256:` of what decides the requests a run sends: the config's hash as a prepared run
    records it (`judge.run.prepare.prepared_hashes`: a run dir holding another is refused, so
    another hash is another run dir, and a setting added since at its default is the same
    run), the rubric's text (a run dir prepared with another is refused too), the columns
    and the input tables' contents. Human labels are left out: they change
    the analysis, not what is judged, and a run dir takes new ones."""
    from judge.rubric.rubrics import load_rubric
    from judge.run.prepare import prepared_hashes

    source = cfg.data.source
    rubric = load_rubric(cfg.rubric)
    return content_hash(
        {
            "config": prepared_hashes(cfg, rubric)[0],
            "rubric": rubric.hash,
            "columns": dict(columns) if columns is not None else None,
            "items": _digest(items if items is not None else cfg.data.items),
            "responses": _digest(responses if responses is not None else cfg.data.responses),
            "source": [] if source is None else [_digest(p) for p in source.path],
        }
    )


def _digest(table: pd.DataFrame | Path | None) -> str | None:
    """`sha256:` of a table's content: a file's bytes, a directory's files, a DataFrame's Arrow
    stream (columns, types and values)."""
    if table is None:
        return None
    digest = hashlib.sha256()
    if _is_frame(table):
        import pyarrow as pa

        arrow = pa.Table.from_pandas(table, preserve_index=False)  # type: ignore[arg-type]
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, arrow.schema) as writer:
            writer.write_table(arrow)
        digest.update(sink.getvalue().to_pybytes())
        return "sha256:" + digest.hexdigest()
    path = Path(table)  # type: ignore[arg-type]
    if not path.exists():
        return None  # `judge.evaluate` names the missing file, as `judge run` would
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        digest.update(f"{file.relative_to(path) if path.is_dir() else file.name}\n".encode())
        with file.open("rb") as fh:
            while block := fh.read(_READ_BYTES):
                digest.update(block)
    return "sha256:" + digest.hexdigest()


def _is_frame(value: object) -> bool:
    # Without importing pandas for a path: a DataFrame's module is loaded if one was given.
    frame = getattr(sys.modules.get("pandas"), "DataFrame", None)
    return frame is not None and isinstance(value, frame)
