"""The GitHub Action (issue 34, item 4): `judge pr-comment` renders a run's summary as the
Markdown of a pull-request comment (the simulated notice, the decision, every gate, each pair's
interval), and `.github/actions/judge/action.yml` runs the commands docs/ci.md gives, takes its
inputs through the environment, posts with the token only in `actions/github-script`, and
exits with the run's code.

The run is made by the action's own "Run the config" step, executed by bash with the real CLI
on a simulated judge (`base_url: simulator`, `simulator.plant`) and two gates, one failing.
The posting step needs GitHub, which this workplace cannot reach: its script is driven by
node with a stand-in for the GitHub client instead.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main
import yaml
from typer.testing import CliRunner

from judge.cli.comment_command import pr_comment as pr_comment_command
from judge.cli.main import run as run_command
from judge.report.pr_comment import comment_marker, pr_comment
from judge.store.rundir import RunDir
from judge.summary.run_summary import RunSummary
from tests.helpers import REPO
from tests.support_bots import ITEMS, bots_config, write_bots

ACTION = REPO / ".github" / "actions" / "judge" / "action.yml"
DOCS = REPO / "docs" / "ci.md"
LINK = "https://github.com/OWNER/REPO/actions/runs/1"
GATES = ["ci_low(winrate(bot-new, bot-old)) >= 0.8", "ci_low(winrate(bot-close, bot-old)) >= 0.5"]


def _steps() -> dict[str, dict[str, Any]]:
    action = yaml.safe_load(ACTION.read_text())
    assert action["runs"]["using"] == "composite"
    return {step["name"]: step for step in action["runs"]["steps"]}


def _bash(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """A `run:` step as the runner runs a `shell: bash` one (`bash -e {0}`), the venv's
    `judge` first on PATH."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env={**os.environ, "PATH": path, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@dataclass(frozen=True)
class ActionRun:
    workspace: Path
    run_dir: Path
    outputs: str
    """What the step wrote to $GITHUB_OUTPUT."""
    summary: RunSummary


@pytest.fixture(scope="module")
def action_run(tmp_path_factory: pytest.TempPathFactory) -> ActionRun:
    workspace = tmp_path_factory.mktemp("workspace")
    write_bots(workspace, marked=False)
    judge = {"model": "openai/sim-gpt", "base_url": "simulator", "transport": "http"}
    plant = {"bot-new": 0.8, "bot-old": 0.5, "bot-close": 0.52}
    config = bots_config(judge, simulator={"seed": 1, "plant": plant})
    config["compare"] = {**config["compare"], "gates": GATES}  # type: ignore[dict-item]
    (workspace / "evals").mkdir()
    (workspace / "evals" / "bots.yaml").write_text(yaml.safe_dump(config))
    for name in ("items.jsonl", "responses.jsonl"):
        (workspace / name).rename(workspace / "evals" / name)
    outputs = workspace / "github_output"
    run_dir = workspace / "temp" / "judge-run"
    env = {
        "CONFIG": "evals/bots.yaml",
        "RUN_DIR": str(run_dir),
        "CACHE": ".judge/response_cache.sqlite",
        "GITHUB_OUTPUT": str(outputs),
    }
    done = _bash(_steps()["Run the config"]["run"], env, workspace)
    # The step itself succeeds: the exit code is kept for the last step.
    assert done.returncode == 0, done.stderr
    assert (workspace / ".judge" / "response_cache.sqlite").is_file()
    return ActionRun(workspace, run_dir, outputs.read_text(), RunDir(run_dir).read_summary())


def test_the_comment_holds_the_notice_the_decision_the_gates_and_every_interval(
    action_run: ActionRun,
) -> None:
    assert action_run.outputs == "exit-code=1\n"  # a gate failed
    summary = action_run.summary
    analysis = summary.analysed()
    text = pr_comment(summary, details_url=LINK)
    lines = text.splitlines()
    assert lines[0] == comment_marker("bots") == "<!-- judge-pipeline pr-comment: bots -->"
    notice = summary.run.notice()
    assert notice is not None and notice.startswith("SIMULATED: openai/sim-gpt")
    assert lines[2] == f"> **{notice}**"  # before any number
    assert "> **[FAIL]** 1 of 2 gates failed." in lines
    assert f"> **{analysis.decision.answer.text}**" in lines
    assert analysis.decision.answer.text.startswith("No: the gate ci_low(winrate(bot-close")
    assert f"> **[NOT CALIBRATED]** Judge: {analysis.decision.trust_reason}." in lines
    gates = analysis.comparison.gates
    assert [g.expression for g in gates] == GATES and [g.passed for g in gates] == [True, False]
    for g in gates:
        mark = "PASS" if g.passed else "FAIL"
        row = (
            f"| {g.expression} | **[{mark}]** | {g.value:.3f} | [{g.ci_low:.3f}, {g.ci_high:.3f}] |"
        )
        assert row in lines
    pairs = analysis.comparison.comparisons
    assert len(pairs) == 2
    for c in pairs:
        assert c.ci_low is not None and c.ci_high is not None
        row = f"| {c.a} vs {c.b} | {c.mean_diff:.3f} [{c.ci_low:.3f}, {c.ci_high:.3f}] | "
        assert any(line.startswith(row) for line in lines), row
    assert f"{ITEMS} items, 80 pairs, 160 requests" in lines[-1] and LINK in lines[-1]

    # The command prints the same, and writes it with --out.
    app = typer.Typer()
    app.command("pr-comment")(pr_comment_command)
    printed = CliRunner().invoke(app, [str(action_run.run_dir), "--link", LINK])
    assert printed.exit_code == 0 and printed.stdout == text
    out = action_run.workspace / "comment" / "pr.md"
    written = CliRunner().invoke(app, [str(action_run.run_dir), "--out", str(out), "--link", LINK])
    assert written.exit_code == 0 and out.read_text() == text

    # docs/ci.md shows this comment as it is rendered.
    docs = DOCS.read_text()
    shown = docs.split("<!-- pr-comment-example -->\n```markdown\n", 1)[1]
    shown = shown.split("\n```\n", 1)[0]
    assert shown == text.split("\n\n", 1)[1].rstrip("\n")


def test_the_comment_of_the_demo_names_its_replayed_judge_and_all_its_pairs(demo: Path) -> None:
    summary = RunDir(demo).read_summary()
    analysis = summary.analysed()
    lines = pr_comment(summary).splitlines()
    assert lines[2] == f"> **{summary.run.notice()}**"
    assert lines[2].startswith("> **REPLAYED: recorded/gpt-4 replays recorded verdicts")
    assert "No gate is configured: the run cannot fail a check." in lines
    assert "No gate is configured (compare.gates in the run config)." in lines
    mark = analysis.decision.gate.upper()
    assert any(line.startswith(f"> **[{mark}]** Judge: ") for line in lines)
    rows = [line for line in lines if re.match(r"\| \S+ vs \S+ \| ", line)]
    assert len(rows) == len(analysis.comparison.comparisons) == 15
    assert lines[-1].endswith("The whole report is in the run dir.")


def test_a_stopped_run_says_so_and_shows_no_decision(action_run: ActionRun) -> None:
    summary = action_run.summary
    stopped = summary.model_copy(
        update={"analysis": None, "counts": summary.counts.model_copy(update={"pending": 12})}
    )
    text = pr_comment(stopped)
    assert "> **[STOPPED]** Stopped with 12 requests pending (its budget, or an interrupt)" in text
    assert "gate" not in text.lower()
    assert summary.run.notice() in text  # type: ignore[operator]


def _commands(script: str) -> list[str]:
    return [line.strip() for line in script.splitlines() if line.strip().startswith("judge ")]


def test_the_actions_steps_call_the_commands_the_docs_give() -> None:
    steps = _steps()
    called = [c for step in steps.values() if "run" in step for c in _commands(step["run"])]
    docs = DOCS.read_text().split("<!-- action-commands -->\n```bash\n", 1)[1].split("```", 1)[0]
    assert called == _commands(docs) and len(called) == 2
    # Each is a command line the CLI accepts (parsed, not run).
    app = typer.Typer()
    app.command("run")(run_command)
    app.command("pr-comment")(pr_comment_command)
    cli = typer.main.get_command(app)
    for line in called:
        args = [re.sub(r"^\$(\w+)$", r"value-of-\1", a) for a in shlex.split(line)[1:]]
        command = cli.commands[args[0]]  # type: ignore[attr-defined]
        command.make_context(args[0], args[1:])
    # Inputs reach the shell through the environment only (an input holding `"; rm` stays
    # data), every shell step parses, and the token goes to github-script alone.
    for name, step in steps.items():
        if "run" not in step:
            continue
        assert "${{" not in step["run"] and step["shell"] == "bash", name
        assert subprocess.run(["bash", "-n", "-c", step["run"]], check=False).returncode == 0
        assert "token" not in step["run"].lower() and "token" not in json.dumps(step.get("env"))
    post = steps["Post the comment"]
    assert post["uses"].startswith("actions/github-script@")
    assert post["with"]["github-token"] == "${{ inputs.github-token }}"
    assert ACTION.read_text().count("inputs.github-token") == 1


def test_the_last_step_exits_with_the_runs_code(tmp_path: Path) -> None:
    script = _steps()["Fail on the gate"]["run"]
    codes = {code: _bash(script, {"CODE": code}, tmp_path).returncode for code in "0123"}
    assert codes == {"0": 0, "1": 1, "2": 2, "3": 3}
    assert _bash(script, {"CODE": ""}, tmp_path).returncode == 1


def test_the_action_renders_the_comment_with_the_real_cli(action_run: ActionRun) -> None:
    """The "Render the comment" step as the runner runs it: `judge pr-comment` on PATH (this
    needs the command registered in `judge.cli.main`)."""
    comment = action_run.workspace / "temp" / "judge-comment.md"
    step_summary = action_run.workspace / "step_summary.md"
    env = {
        "RUN_DIR": str(action_run.run_dir),
        "COMMENT": str(comment),
        "LINK": LINK,
        "GITHUB_STEP_SUMMARY": str(step_summary),
    }
    done = _bash(_steps()["Render the comment"]["run"], env, action_run.workspace)
    assert done.returncode == 0, done.stderr
    expected = pr_comment(action_run.summary, details_url=LINK)
    assert comment.read_text() == expected and step_summary.read_text() == expected


_DRIVER = """
const fs = require('fs');
const [script, existing] = process.argv.slice(2);
const run = eval('(async function (github, context, core, require) {' +
  fs.readFileSync(script, 'utf8') + '\\n})');
const calls = [];
const github = {
  paginate: async (method, args) => {
    calls.push(['list', args.issue_number]);
    return JSON.parse(existing);
  },
  rest: { issues: {
    listComments: 'listComments',
    updateComment: async (a) => { calls.push(['update', a.comment_id, a.body]); },
    createComment: async (a) => {
      calls.push(['create', a.issue_number, a.body]);
      return { data: { html_url: 'new' } };
    },
  } },
};
const context = { repo: { owner: 'o', repo: 'r' }, payload: { pull_request: { number: 5 } } };
run(github, context, { info: () => {} }, require).then(() => console.log(JSON.stringify(calls)));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run github-script's JS")
def test_the_posting_script_edits_its_earlier_comment_or_posts_one(
    action_run: ActionRun, tmp_path: Path
) -> None:
    script = tmp_path / "script.js"
    script.write_text(_steps()["Post the comment"]["with"]["script"])
    (tmp_path / "driver.js").write_text(_DRIVER)
    body = pr_comment(action_run.summary, details_url=LINK)
    comment = tmp_path / "comment.md"
    comment.write_text(body)

    def post(existing: list[dict[str, Any]]) -> list[Any]:
        done = subprocess.run(
            ["node", str(tmp_path / "driver.js"), str(script), json.dumps(existing)],
            env={**os.environ, "COMMENT": str(comment)},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    earlier = {"id": 9, "body": comment_marker("bots") + "\n\nan older run", "html_url": "u"}
    other = {"id": 7, "body": comment_marker("other-run") + "\n\n", "html_url": "v"}
    assert post([other, earlier]) == [["list", 5], ["update", 9, body]]
    assert post([other]) == [["list", 5], ["create", 5, body]]
