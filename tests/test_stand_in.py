"""A simulated or replayed run says so wherever its results appear (issue 31, item 1): the
console's first and last lines, a banner on the report's first screen, `run.simulated` in
summary.json; two simulated judges err independently; a simulated judge costs nothing.

The judges are the local simulator over real HTTP (`base_url: simulator`), run by the real
CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from judge.config.run_config import JudgeSpec, stand_in_notice
from judge.summary import RunSummary
from tests.test_public_api import _config


def _judge(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "judge.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_a_simulated_run_says_so_first_last_in_the_summary_and_on_the_report(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path)
    done = _judge("run", str(config), "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("SIMULATED: openai/sim-gpt, anthropic/sim-claude are the built-in")
    assert lines[-1] == lines[0]
    run_dir = tmp_path / "runs" / "tickets"
    raw = json.loads((run_dir / "summary.json").read_text())
    assert raw["run"]["simulated"] is True
    summary = RunSummary.from_dict(raw)
    # A summary written before `run.simulated` existed: derived from its judges.
    del raw["run"]["simulated"]
    assert RunSummary.from_dict(raw).run.simulated is True
    # The two judges draw their own verdicts: not one judge twice (an agreement of 1.000).
    verdicts = [summary.judges[j.model].first_slot_win_rate for j in summary.run.judges]
    assert verdicts[0] != verdicts[1]
    # Nothing is paid to a simulator: free, not "cost unknown".
    assert summary.costs is not None and summary.costs.total.cost_usd == 0.0
    page = (run_dir / "report.html").read_text()
    banner = page.index('id="stand-in"')
    assert banner < page.index('id="question"') and "say nothing about these systems" in page
    assert "The judges are simulated" in page

    dry = _judge("run", str(config), "--dry-run", "--run-dir", "runs/dry", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    told = [line for line in dry.stderr.splitlines() if line.startswith("SIMULATED: ")]
    assert len(told) == 2


def test_a_run_of_called_models_has_no_notice() -> None:
    called = [JudgeSpec(model="openai/gpt-4.1-mini"), JudgeSpec(model="anthropic/claude-x")]
    assert stand_in_notice(called) is None
    replayed = JudgeSpec(model="recorded/gpt-4", recorded=Path("x.jsonl"))
    notice = stand_in_notice([replayed])
    assert notice == "REPLAYED: recorded/gpt-4 replays recorded verdicts; no model was called."


def test_a_planted_quality_ranks_a_simulated_run_as_planted(tmp_path: Path) -> None:
    # Without it the ranking follows a hash of each text: a one-line auto-reply ranked first.
    plant = {"helpdesk-v2": 0.9, "helpdesk-v1": 0.6, "autoreply": 0.1}
    config = _config(tmp_path)
    raw = json.loads(config.read_text())
    raw["simulator"]["plant"] = plant
    config.write_text(json.dumps(raw))
    done = _judge("run", str(config), "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = RunSummary.from_dict(json.loads((tmp_path / "runs/tickets/summary.json").read_text()))
    rates = summary.analysed().comparison.win_rates
    assert rates is not None
    # Each system beats every system planted below it, on every item.
    for better, worse in (("helpdesk-v2", "helpdesk-v1"), ("helpdesk-v1", "autoreply")):
        assert rates[better][worse] == 1.0 and rates[worse][better] == 0.0
    assert summary.analysed().decision.leader == "helpdesk-v2"
    # The marker is in what the simulator was sent, never in the blinded texts or the report.
    assert "⟦quality" not in (tmp_path / "runs/tickets/blinded.jsonl").read_text()
    assert "⟦quality" not in (tmp_path / "runs/tickets/report.html").read_text()


def test_a_planted_quality_needs_simulated_judges_and_known_systems(tmp_path: Path) -> None:
    config = _config(tmp_path)
    raw = json.loads(config.read_text())
    raw["simulator"]["plant"] = {"helpdesk-v9": 0.9}
    config.write_text(json.dumps(raw))
    done = _judge("run", str(config), "--dry-run", cwd=tmp_path)
    assert done.returncode == 2
    assert "simulator.plant names helpdesk-v9, not a system of these responses" in done.stderr
    raw["judges"].append({"model": "openai/gpt-4.1-mini"})
    raw["simulator"]["plant"] = {"helpdesk-v2": 0.9}
    config.write_text(json.dumps(raw))
    done = _judge("run", str(config), "--dry-run", cwd=tmp_path)
    assert done.returncode == 2 and "openai/gpt-4.1-mini is not the simulator" in done.stderr
