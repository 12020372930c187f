"""Labels a run stored by an earlier version of the service: kept as `inputs/labels.<ext>`,
outside the run dir. They move into it (`run/human_labels.<ext>`) the first time the run's
labels are looked for, so an upgrade loses no calibration."""

from __future__ import annotations

from pathlib import Path

from judge.service.analysis import labels_file
from judge.service.layout import RunPaths


def test_labels_an_earlier_version_kept_move_into_the_run_dir(tmp_path: Path) -> None:
    paths = RunPaths(tmp_path / "r_0123456789abcdef0123")
    paths.inputs.mkdir(parents=True)
    paths.run_dir.mkdir()
    legacy = paths.inputs / "labels.csv"
    legacy.write_text("item_id,system_a,system_b,winner\nq1,a,b,a\n", encoding="utf-8")
    found = labels_file(paths)
    assert found == paths.run_dir / "human_labels.csv"
    assert found.read_text(encoding="utf-8") == "item_id,system_a,system_b,winner\nq1,a,b,a\n"
    assert not legacy.exists()
    assert labels_file(paths) == found  # found where it now lives, once


def test_a_run_without_labels_has_none(tmp_path: Path) -> None:
    paths = RunPaths(tmp_path / "r_0123456789abcdef0124")
    paths.inputs.mkdir(parents=True)
    paths.run_dir.mkdir()
    assert labels_file(paths) is None
