"""Reading judge verdicts and human labels into the plain tables `calibration` works on."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from judge.analysis.aggregate import TEXT_FIELDS
from judge.errors import ConfigError, DataError
from judge.store.rundir import RunDir
from judge.types import PANEL

if TYPE_CHECKING:
    from judge.config.run_config import RunConfig

_MT_BENCH = Path(__file__).resolve().parents[2] / "data" / "mt_bench"
_CHUNK_ROWS = 50_000


def load_table(path: Path, *, drop: Collection[str] = ()) -> pd.DataFrame:
    """A JSONL, CSV or Parquet table (optionally .gz for text formats). JSONL and CSV are read
    by the readers of items and responses (`judge.inputs.sources`), so a malformed line, text
    that is not UTF-8, deep nesting, a lone surrogate or a key given twice is an error naming the
    line (and field); an empty file is an empty table. `drop`: columns left out as the rows are
    read (the judges' texts of a judgments file), so they never all sit in memory."""
    from judge.inputs.sources import CsvSource, JsonlSource, Source, table_suffix

    if not path.exists():
        raise DataError("file not found", path=str(path))
    suffix = table_suffix(path)
    if suffix == ".parquet":  # a file, or a directory of them (a partitioned dataset)
        import pyarrow as pa

        try:
            table = pd.read_parquet(path)
            return table.drop(columns=[c for c in drop if c in table.columns])
        except (ValueError, OSError, pa.ArrowException) as exc:
            raise DataError(f"cannot read this table: {exc}", path=str(path)) from None
    if not path.is_file():
        raise DataError("not a file (a directory?)", path=str(path))
    if path.stat().st_size == 0:
        return pd.DataFrame()
    source: Source = CsvSource(path) if suffix.startswith(".csv") else JsonlSource(path)
    columns = source.columns()
    if columns is not None and len(set(columns)) < len(columns):
        twice = next(c for i, c in enumerate(columns) if c in columns[:i])
        raise DataError(
            f"column {twice!r} appears twice; column names must be unique", path=str(path)
        )
    records = [
        {k: v for k, v in record.items() if k not in drop} if drop else record
        for chunk in source.chunks(_CHUNK_ROWS)
        for record in chunk.records
    ]
    # The header is needed only when there are no rows.
    if not records:
        return pd.DataFrame(columns=[c for c in columns or [] if c not in drop])
    return pd.DataFrame.from_records(records)


def load_labels(path: Path) -> pd.DataFrame:
    """Human labels: `load_table`, refusing a file that holds no label (empty, or a header
    only) in one line naming it, before any statistic meets an empty table."""
    table = load_table(path)
    if table.empty:
        what = "a header but no rows" if len(table.columns) else "nothing (an empty file)"
        raise DataError(
            f"no labels: the file holds {what}; expected rows of item_id, system_a, "
            "system_b, winner (pairwise) or item_id, system, score (absolute)",
            path=str(path),
        )
    return table


def run_labels(rundir: RunDir, config: RunConfig) -> Path | None:
    """The human labels a run is calibrated against: those added to it later
    (`RunDir.human_labels`), else its config's `calibration.human`; None when neither."""
    return rundir.human_labels() or config.calibration.human


def required_labels(rundir: RunDir, config: RunConfig, given: Path | None, option: str) -> Path:
    """`given`, else the labels the run is calibrated against (`run_labels`); a ConfigError
    naming `option` (the command's way to give them) when there are none."""
    human = given or run_labels(rundir, config)
    if human is None:
        raise ConfigError(
            f"{rundir.path} has no human labels: give {option} FILE (or add them to the run "
            f"with `judge report {rundir.path} --human FILE`)"
        )
    return human


def load_judge_table(path: Path, judge: str | None = None) -> pd.DataFrame:
    """Judge verdicts from a table, or from a finished run dir's `judgments.jsonl` (one judge:
    `judge`, else the panel, else the only judge)."""
    if not path.is_dir():
        return load_table(path)
    rows = _one_judge(judgment_table(RunDir(path)), judge, path)
    columns = [
        c for c in ("item_id", "system_a", "system_b", "winner", "score", "system") if c in rows
    ]
    return rows[columns].reset_index(drop=True)


def _one_judge(table: pd.DataFrame, judge: str | None, run_dir: Path) -> pd.DataFrame:
    """The rows of `judge`, else of the panel, else of the run's only judge."""
    judges = sorted(table["judge"].unique()) if "judge" in table else []
    chosen = judge or (PANEL if PANEL in judges else judges[0] if len(judges) == 1 else None)
    if chosen is None or chosen not in judges:
        raise DataError(
            f"choose a judge with --judge-name; this run has: {', '.join(judges)}",
            path=str(run_dir),
        )
    return table[table["judge"] == chosen]


def mt_bench_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The bundled MT-Bench GPT-4 verdicts and expert votes as (judge table, human table)."""
    from calibration.labels import load_mt_bench

    if not (_MT_BENCH / "human.jsonl").exists():
        raise DataError(
            "the bundled MT-Bench data is missing (a source checkout has it)", path=str(_MT_BENCH)
        )
    return load_mt_bench(
        _MT_BENCH / "human.jsonl",
        _MT_BENCH / "gpt4_pair.jsonl",
        questions_path=_MT_BENCH / "question.jsonl",
    )


def load_comparison_table(
    path: Path, judge: str | None = None, *, styles: bool = False
) -> tuple[pd.DataFrame, list[str]]:
    """A comparison input: a table as given, or a run dir's judgments (one judge) joined with
    the items' strata so `--by category` works. Returns the table and the strata columns.
    `styles`: pairwise rows also carry their responses' lengths and markdown counts
    (`judge.analysis.response_style`; a table given with output_a / output_b texts is measured)."""
    from judge.analysis.response_style import COLUMNS, with_styles

    if not path.is_dir():
        table = load_table(path)
        return (with_styles(table) if styles else table), []
    rundir = RunDir(path)
    rows, columns = run_judgments(rundir, judge)
    if "score_a" in rows:
        rows = rows[rows["score_a"].notna()]
        keep = ["item_id", "system_a", "system_b", "score_a"]
        if styles:
            rows, keep = with_pair_styles(rundir, rows), keep + COLUMNS
    else:  # absolute runs: one score per response
        rows = rows[rows["score"].notna()]
        keep = ["item_id", "system", "score"]
    return rows[keep + columns].reset_index(drop=True), columns


def with_pair_styles(rundir: RunDir, rows: pd.DataFrame) -> pd.DataFrame:
    """A run's pairwise judgment rows with their two responses' styles (slot A is system_a)."""
    from judge.analysis.response_style import pair_styles

    return rows.merge(pair_styles(rundir), on="pair_id", how="left", validate="many_to_one")


def judgment_table(rundir: RunDir) -> pd.DataFrame:
    """Every row of a run's `judgments.jsonl` (every judge, and the panel) without the
    judges' texts, in file order: row i is line i + 1."""
    return load_table(rundir.judgments_jsonl, drop=TEXT_FIELDS)


def run_judgments(
    rundir: RunDir, judge: str | None = None, table: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, list[str]]:
    """One judge's rows of a run's judgments (default: the panel, or the only judge), every
    column but the judges' texts kept, plus one column per item stratum. `table`: the run's
    `judgment_table`, when the caller has read it already. Returns (rows, strata columns)."""
    table = judgment_table(rundir) if table is None else table
    rows = _one_judge(table, judge, rundir.path)
    # A fixed order whatever the file's: bootstrap draws index rows, so the same seed must
    # meet the same rows to give the same intervals.
    order = [c for c in ("item_id", "system_a", "system_b", "system") if c in rows.columns]
    rows = rows.sort_values(order, kind="stable").reset_index(drop=True)
    strata = rundir.item_strata()
    columns = sorted({k for s in strata.values() for k in s} - set(rows.columns))
    for column in columns:
        rows[column] = rows["item_id"].map(lambda i, c=column: strata.get(i, {}).get(c))
    return rows, columns
