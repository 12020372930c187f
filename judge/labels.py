"""Reading judge verdicts and human labels into the plain tables `calibration` works on."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judge.errors import DataError

_MT_BENCH = Path(__file__).resolve().parent.parent / "data" / "mt_bench"


def load_table(path: Path) -> pd.DataFrame:
    """A JSONL, CSV or Parquet table (optionally .gz for text formats)."""
    if not path.exists():
        raise DataError("file not found", path=str(path))
    name = path.name.lower().removesuffix(".gz")
    try:
        if name.endswith((".jsonl", ".ndjson")):
            return pd.read_json(path, lines=True, dtype=False)
        if name.endswith(".csv"):
            return pd.read_csv(path, dtype=str, keep_default_na=False)
        if name.endswith(".parquet"):
            return pd.read_parquet(path)
    except ValueError as exc:
        raise DataError(f"cannot read this table: {exc}", path=str(path)) from None
    raise DataError("unsupported file type: expected .jsonl, .csv or .parquet", path=str(path))


def load_judge_table(path: Path, judge: str | None = None) -> pd.DataFrame:
    """Judge verdicts from a table, or from a finished run dir's `judgments.jsonl` (one judge:
    `judge`, else the panel, else the only judge)."""
    if not path.is_dir():
        return load_table(path)
    table = load_table(path / "judgments.jsonl")
    judges = sorted(table["judge"].unique()) if "judge" in table else []
    chosen = judge or ("panel" if "panel" in judges else judges[0] if len(judges) == 1 else None)
    if chosen is None or chosen not in judges:
        raise DataError(
            f"choose a judge with --judge-name; this run has: {', '.join(judges)}",
            path=str(path),
        )
    rows = table[table["judge"] == chosen]
    columns = [
        c for c in ("item_id", "system_a", "system_b", "winner", "score", "system") if c in rows
    ]
    return rows[columns].reset_index(drop=True)


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
