"""`write_outputs` streams (issue 15): the judgments it writes are those it wrote when it held
every result in memory (golden files written by that code, `tests/outputs_runs.py`), whatever
order the replies were stored in, with the Parquet file in row groups and the store read in
its index's order."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judge import RunDir, load_config
from judge.run.outputs import write_outputs
from judge.store import result_rows
from tests.outputs_runs import GOLDEN, OUTPUT_FILES, RUNS, build, finished, summary_part


def _assert_golden(rundir: RunDir, name: str) -> None:
    for file in OUTPUT_FILES:
        golden, written = GOLDEN / name / file, rundir.path / file
        if not golden.exists():
            assert not written.exists(), file
        elif file.endswith(".parquet"):
            got, want = pq.read_table(written), pq.read_table(golden)
            # Column types too: a column no row fills stays of Arrow's null type.
            assert got.schema.equals(want.schema), file
            assert got.equals(want), file
        else:
            assert written.read_bytes() == golden.read_bytes(), file
    want = json.loads((GOLDEN / name / "summary.json").read_text())
    assert summary_part(rundir) == want
    assert not (rundir.path / "judgments.spool").exists()


@pytest.mark.parametrize("name", RUNS)
def test_outputs_equal_those_written_before_streaming(tmp_path: Path, name: str) -> None:
    _assert_golden(finished(tmp_path, name), name)


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1), name=st.sampled_from(RUNS))
def test_outputs_do_not_depend_on_the_order_replies_were_stored(seed: int, name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        _assert_golden(finished(Path(tmp), name, shuffle=seed), name)


def test_parquet_is_written_in_row_groups(tmp_path: Path) -> None:
    rundir = build(tmp_path, "pairwise")
    write_outputs(load_config(tmp_path / "config.yaml"), rundir, row_group_rows=10)
    parquet = pq.ParquetFile(rundir.judgments_parquet)
    sizes = [parquet.metadata.row_group(i).num_rows for i in range(parquet.num_row_groups)]
    assert sizes == [10] * 10 + [8]  # 108 rows
    _assert_golden(rundir, "pairwise")


def test_results_are_read_in_index_order_without_the_prompts(tmp_path: Path) -> None:
    """The read that feeds the outputs walks the covering index: no sort of the whole run,
    and the rows of `judge_requests` (where the rendered prompts are) are never visited."""
    rundir = build(tmp_path, "pairwise")
    with rundir.open_store() as store:
        plan = store.connection.execute(f"EXPLAIN QUERY PLAN {result_rows._SELECT}").fetchall()
        details = [row[-1] for row in plan]
        assert any("COVERING INDEX judge_requests_by_item" in d for d in details), details
        assert not any("TEMP B-TREE" in d for d in details), details
        items = [[r.item_id for r in group] for group in result_rows.by_item(store)]
    assert [group[0] for group in items] == sorted({g[0] for g in items})
    assert all(len(set(group)) == 1 for group in items)


def test_an_output_holding_a_nul_is_measured_in_characters(tmp_path: Path) -> None:
    rundir = build(tmp_path, "one_order")
    with rundir.open_store() as store:
        db = store.connection
        (blind_id,) = db.execute("SELECT slot_a FROM pairs ORDER BY pair_id LIMIT 1").fetchone()
        db.execute(
            "UPDATE blinded_responses SET output = ? WHERE blind_id = ?", ("é\x00abc", blind_id)
        )
        found = [
            r.length_a
            for group in result_rows.by_item(store)
            for r in group
            if r.slot_a == blind_id
        ]
    assert found and set(found) == {5}


def test_a_failure_while_writing_leaves_the_previous_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rundir = finished(tmp_path, "pairwise")
    before = {f: (rundir.path / f).read_bytes() for f in OUTPUT_FILES}
    from judge.store.judgment_files import JudgmentsWriter

    calls = 0
    add = JudgmentsWriter.add

    def failing(self: JudgmentsWriter, row: dict) -> None:
        nonlocal calls
        calls += 1
        if calls == 50:
            raise OSError("disk full")
        add(self, row)

    monkeypatch.setattr(JudgmentsWriter, "add", failing)
    with pytest.raises(OSError, match="disk full"):
        write_outputs(load_config(tmp_path / "config.yaml"), rundir)
    assert {f: (rundir.path / f).read_bytes() for f in OUTPUT_FILES} == before
    assert not (rundir.path / "judgments.spool").exists()
