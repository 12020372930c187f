"""Judges chosen by evidence from a finished run (issue 19, parts 1, 2 and 4): a run judged by
three simulated judges of planted quality and price, with human labels (the planted truth) on
two items in three. `judge panels --run`: the frontier, measured costs, the cross-family rule;
the single judges' alphas checked against the `krippendorff` package on the run's own
judgments. `judge cascade`: coverage, the queue and the cost rebuilt by hand from
judgments.jsonl and the thresholds."""

from __future__ import annotations

import json
import random
from pathlib import Path

import krippendorff
import numpy as np
import pytest

from judge import load_config
from judge.run import run_pipeline
from tests.helpers import run_cli_here
from tests.test_runner import quality, write_config, write_dataset

N_ITEMS = 90
LABELLED = [i for i in range(N_ITEMS) if i % 3]
"""Two items in three have human labels: the others are for the cascade to decide or queue."""
TWICE = [i for i in LABELLED if i % 3 == 1]
"""Items a second annotator labelled too (the human ceiling), agreeing except on `SPLIT`."""
SPLIT = [i for i in TWICE if i % 9 == 1]
SYSTEMS = ("sys-a", "sys-b", "sys-c")
# model -> (simulator noise: its quality, USD per million input tokens: its price)
JUDGES = {
    "openai/sim-cheap": (0.3, 0.1),
    "openai/sim-mid": (0.1, 1.0),
    "openai/sim-strong": (0.02, 10.0),
}


def _quality(system: str, i: int) -> float:
    return round(random.Random(f"{system}{i}").uniform(0.1, 0.9), 3)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three systems on 60 items, every pair judged by three judges; the human labels are the
    planted truth (the higher quality wins). sim-strong is declared of sys-a's family."""
    root = tmp_path_factory.mktemp("panels-run")
    items, responses = write_dataset(
        root,
        N_ITEMS,
        {s: (lambda i, s=s: quality(_quality(s, i), f"{s} answer {i}.")) for s in SYSTEMS},
    )
    labels = root / "labels.jsonl"
    with labels.open("w") as fh:
        for i in LABELLED:
            for a, b in ((0, 1), (0, 2), (1, 2)):
                sa, sb = SYSTEMS[a], SYSTEMS[b]
                winner, loser = (sa, sb) if _quality(sa, i) > _quality(sb, i) else (sb, sa)
                row = {"item_id": f"q{i}", "system_a": sa, "system_b": sb, "winner": winner}
                fh.write(json.dumps({**row, "annotator": "h1"}) + "\n")
                if i in TWICE:
                    second = loser if i in SPLIT else winner
                    fh.write(json.dumps({**row, "winner": second, "annotator": "h2"}) + "\n")
    config = write_config(
        root,
        items,
        responses,
        judges=[
            {
                "model": m,
                "base_url": "simulator",
                "input_cost_per_mtok": price,
                "output_cost_per_mtok": price,
            }
            for m, (_, price) in JUDGES.items()
        ],
        simulator={"seed": 2, "judges": {m: {"noise": n} for m, (n, _) in JUDGES.items()}},
        families={"sys-a": "acme", "openai/sim-strong": "acme"},
        allow_same_family=True,
        calibration={"human": str(labels), "resamples": 200},
        compare={"resamples": 200},
        cache=str(root / "cache.sqlite"),
    )
    outcome = run_pipeline(load_config(config), root / "run")
    assert outcome.exit_code in (0, 1)  # 1: a gate may fail; the panels do not care
    return root / "run"


def _panels(run_dir: Path, *extra: str) -> dict:
    result = run_cli_here("panels", "--run", str(run_dir), "--resamples", "200", "--json", *extra)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_frontier_of_a_run_finds_the_strong_judge_and_prices_it_as_measured(
    run_dir: Path,
) -> None:
    frontier = _panels(run_dir, "--same-family")
    assert frontier["units"] == 3 * (len(LABELLED) - len(SPLIT))
    assert frontier["notes"] == [
        f"{3 * len(SPLIT)} labelled units left out: their annotators split evenly"
    ]
    # The human ceiling is the run's calibration's (annotators' alpha with each other).
    summary = json.loads((run_dir / "summary.json").read_text())
    human_alpha = summary["calibration"]["overall"]["ceiling"]["human_alpha"]
    assert frontier["human_ceiling"]["alpha"] == human_alpha["value"] < 1
    assert frontier["human_ceiling"]["pairs"] == 3 * len(TWICE)
    panels = {tuple(p["judges"]): p for p in frontier["panels"]}
    assert len(panels) == 7  # every panel of up to 3 of the 3 judges
    assert tuple(frontier["best"]) == ("openai/sim-strong",)
    # Costs per unit: each judge's measured cost per paid reply, times the two orders.
    for model in JUDGES:
        per_1k = summary["costs"]["judges"][model]["cost_per_1k_usd"]
        assert panels[(model,)]["cost"] == pytest.approx(per_1k / 1000 * 2)
    assert panels[("openai/sim-cheap",)]["cost"] < panels[("openai/sim-strong",)]["cost"]
    # Each judge alone: alpha with the humans as the krippendorff package computes it from
    # the run's own judgments (winner per pair; a missing verdict is missing).
    rows = [json.loads(line) for line in (run_dir / "judgments.jsonl").open()]
    truth = {
        (r["item_id"], *sorted((r["system_a"], r["system_b"]))): r
        for r in rows
        if r["judge"] == "openai/sim-strong" and int(r["item_id"][1:]) in set(LABELLED) - set(SPLIT)
    }
    for model in JUDGES:
        judged = {
            (r["item_id"], *sorted((r["system_a"], r["system_b"]))): r["winner"]
            for r in rows
            if r["judge"] == model
        }
        # Coded as `judge calibrate` codes a pair (its systems in name order): first wins 0,
        # second wins 1, tie 2.
        human, judge = [], []
        for key in sorted(truth):
            item, a, b = key
            i = int(item[1:])
            human.append(0 if _quality(a, i) > _quality(b, i) else 1)
            said = judged.get(key)
            judge.append(np.nan if said is None else {a: 0, b: 1, "tie": 2}[said])
        expected = krippendorff.alpha(
            reliability_data=np.array([human, judge], dtype=float), level_of_measurement="nominal"
        )
        assert panels[(model,)]["alpha"] == pytest.approx(expected, abs=1e-9), model
    assert panels[("openai/sim-strong",)]["alpha"] > panels[("openai/sim-cheap",)]["alpha"] + 0.2


def test_the_cross_family_rule_keeps_a_judge_of_a_systems_family_out(run_dir: Path) -> None:
    frontier = _panels(run_dir)
    assert all("openai/sim-strong" not in p["judges"] for p in frontier["panels"])
    assert len(frontier["panels"]) == 3  # cheap, mid, and the two together
    assert any("cross-family rule" in n and "openai/sim-strong" in n for n in frontier["notes"])
    text = run_cli_here("panels", "--run", str(run_dir), "--resamples", "200")
    assert text.returncode == 0 and "note: cross-family rule" in text.stdout
    both = run_cli_here("panels", "--run", str(run_dir), "--verdicts", "x.csv")
    assert both.returncode == 2 and "--run reads the verdicts" in both.stderr


def _decided_by_hand(run_dir: Path, levels: list[dict]) -> dict[tuple[str, str, str], str | None]:
    """Each pair's deciding judge, from judgments.jsonl and the cascade's thresholds: the first
    judge (cheapest first) whose confidence, the agreement of its two orders (1 both agree, 0.5
    one order only, 0 they disagree), reaches its threshold; None: humans."""
    confidence: dict[tuple[str, str, str], dict[str, float]] = {}
    for line in (run_dir / "judgments.jsonl").open():
        r = json.loads(line)
        if r["judge"] == "panel":
            continue
        key = (r["item_id"], *sorted((r["system_a"], r["system_b"])))
        value = (
            -1.0 if r["winner"] is None else 1.0 if r["consistent"] else 0.5 * (r["orders"] == 1)
        )
        confidence.setdefault(key, {})[r["judge"]] = value
    decided = {}
    for key, by_judge in confidence.items():
        decided[key] = next(
            (
                lv["judge"]
                for lv in levels
                if lv["threshold"] is not None and by_judge.get(lv["judge"], -1) >= lv["threshold"]
            ),
            None,
        )
    return decided


def test_the_cascade_of_a_run_decides_what_it_can_and_queues_the_rest(
    run_dir: Path, tmp_path: Path
) -> None:
    queue = tmp_path / "queue.jsonl"
    result = run_cli_here(
        "cascade", str(run_dir), "--same-family", "--target", "0.75", "--queue", str(queue),
        "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    cascade = json.loads(result.stdout)
    levels = cascade["levels"]
    assert [lv["judge"] for lv in levels] == list(JUDGES)  # by measured cost, cheapest first
    summary = json.loads((run_dir / "summary.json").read_text())
    for lv in levels:
        per_1k = summary["costs"]["judges"][lv["judge"]]["cost_per_1k_usd"]
        assert lv["cost"] == pytest.approx(per_1k / 1000 * 2)
    # Coverage and the queue, rebuilt by hand from the thresholds.
    decided = _decided_by_hand(run_dir, levels)
    assert cascade["pairs"] == len(decided) == 3 * N_ITEMS
    for lv in levels:
        share = sum(d == lv["judge"] for d in decided.values()) / len(decided)
        assert lv["coverage"] == pytest.approx(share)
    humans = sum(d is None for d in decided.values())
    assert cascade["humans"] == pytest.approx(humans / len(decided))
    # Pairs whose annotators split have no reference label: they are queued for another.
    settled = set(LABELLED) - set(SPLIT)
    unlabelled = {k for k, d in decided.items() if d is None and int(k[0][1:]) not in settled}
    assert {(q["item_id"], q["system_a"], q["system_b"]) for q in cascade["queue"]} == unlabelled
    assert [json.loads(line) for line in queue.open()] == cascade["queue"]
    # Cost: every judge a pair reaches is paid; against the strongest judge alone.
    reach, expected = 1.0, 0.0
    for lv in levels:
        expected += lv["cost"] * reach
        reach -= lv["coverage"]
    assert cascade["cost"] == pytest.approx(expected)
    assert cascade["strongest_cost"] == levels[-1]["cost"]
    assert sum(lv["coverage"] for lv in levels) > 0.5  # the judges decide most pairs here
    assert cascade["cost"] < cascade["strongest_cost"]
    assert cascade["ci_low"] <= cascade["agreement"] <= cascade["ci_high"]
    assert cascade["holdout"] == 3 * (len(LABELLED) - len(SPLIT)) // 2


def test_the_cascade_refuses_what_it_cannot_use(run_dir: Path) -> None:
    ruled = run_cli_here("cascade", str(run_dir), "--json")
    assert ruled.returncode == 0, ruled.stderr
    cascade = json.loads(ruled.stdout)
    assert "openai/sim-strong" not in [lv["judge"] for lv in cascade["levels"]]
    assert any("cross-family rule" in n for n in cascade["notes"])
    wrong = run_cli_here("cascade", str(run_dir), "--order", "openai/sim-mid,openai/nobody")
    assert wrong.returncode == 2 and "--order names openai/nobody" in wrong.stderr
    bad = run_cli_here("cascade", str(run_dir), "--target", "1.2")
    assert bad.returncode == 2 and "--target and --delta must be in (0, 1)" in bad.stderr


def test_a_panel_level_decides_where_its_members_agree(run_dir: Path) -> None:
    """`--order a+b,c`: the panel's label is its members' majority and its confidence the
    share of members giving it with both orders agreeing, rebuilt here from judgments.jsonl."""
    panel = "openai/sim-cheap+openai/sim-mid"
    result = run_cli_here(
        "cascade", str(run_dir), "--same-family", "--target", "0.85", "--json",
        "--order", f"{panel},openai/sim-strong",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    cascade = json.loads(result.stdout)
    first, second = cascade["levels"]
    assert first["judge"] == panel and first["threshold"] is not None
    assert second["judge"] == "openai/sim-strong"
    summary = json.loads((run_dir / "summary.json").read_text())["costs"]["judges"]
    members = panel.split("+")
    assert first["cost"] == pytest.approx(
        sum(summary[m]["cost_per_1k_usd"] * 2 / 1000 for m in members)
    )
    said: dict[tuple[str, ...], dict[str, tuple[str | None, bool]]] = {}
    for line in (run_dir / "judgments.jsonl").open():
        r = json.loads(line)
        key = (r["item_id"], *sorted((r["system_a"], r["system_b"])))
        said.setdefault(key, {})[r["judge"]] = (r["winner"], r["consistent"] is True)
    share = {}
    for key, by_judge in said.items():
        given = [by_judge[m][0] for m in members if by_judge.get(m, (None,))[0] is not None]
        top = max((given.count(g) for g in given), default=0)
        winners = {g for g in given if given.count(g) == top}
        sure = sum(by_judge[m] == (next(iter(winners)), True) for m in members if m in by_judge)
        share[key] = sure / len(members) if len(winners) == 1 else -1.0
    decided = sum(s >= first["threshold"] for s in share.values()) / len(share)
    assert first["coverage"] == pytest.approx(decided)
    assert 0.3 < first["coverage"] < 1  # unanimity decides some pairs, not all


def test_a_single_judge_runs_consistent_verdicts_are_confident(demo: Path) -> None:
    """The demo: one judge, so judgments.jsonl's `consistent` column has no nulls (numpy bools,
    not Python ones); a verdict both orders gave is still confidence 1."""
    from judge.analysis.run_verdicts import read_run_verdicts

    run = read_run_verdicts(demo)
    rows = [json.loads(line) for line in (demo / "judgments.jsonl").open()]
    consistent = sum(r["consistent"] is True and r["winner"] is not None for r in rows)
    assert consistent > 1000
    assert int((run.verdicts["confidence"] == 1.0).sum()) == consistent
    cascade = run_cli_here("cascade", str(demo), "--same-family", "--target", "0.7", "--json")
    assert cascade.returncode == 0, cascade.stderr
    (level,) = json.loads(cascade.stdout)["levels"]
    assert level["threshold"] == 1.0 and level["coverage"] > 0.5
