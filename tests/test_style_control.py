"""Length- and style-controlled comparisons (`calibration.style_control`, `judge compare
--control`, `compare.control`; issue 19, part 3).

References: scikit-learn's LogisticRegression fitted on the soft preferences written as two
weighted rows each, for the fit; simulations with a planted length and bold preference and known
quality, for what the control removes; a whole run against the judge simulator with a planted
verbosity bias (three systems: one padded, one plain, one better), for the pipeline.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression

from calibration.length_control import item_difficulty
from calibration.style_control import _SHRINK, StyleControlError, style_controlled
from judge import load_config
from judge.analysis.response_style import style_of, with_styles
from judge.run import run_pipeline
from tests.helpers import run_cli_here
from tests.test_runner import quality, write_config, write_dataset

MARKDOWN_TEXT = """# Plan

Some **bold** claim and __another__ one, and a ** not bold ** pair.

## Steps
1. first
2) second
- a point
  * nested point
+ plus point

```python
# a comment, not a header
- not a list
**not bold**
```
#not a header (no space)
"""


def test_markdown_counts_leave_code_out() -> None:
    style = style_of(MARKDOWN_TEXT)
    assert (style.headers, style.lists, style.bold) == (2, 5, 2)
    assert style.length == len(MARKDOWN_TEXT)
    # An unclosed fence runs to the end: nothing after it counts.
    assert style_of("```\n# inside\n- inside").headers == 0


def _planted(
    seed: int,
    n: int = 300,
    *,
    phi: float = 1.2,
    bold: float = 0.8,
    quality: dict[str, float] | None = None,
) -> pd.DataFrame:
    """Systems against a baseline on n items: `quality` is each system's log-odds at equal
    length and formatting; the judge adds `phi` * tanh(d / 600) for length and `bold` times the
    normalised bold difference. Rows alternate which side is system_a."""
    quality = quality or {"padded": 0.0, "better": 0.4}
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        base_len, base_bold = max(50.0, rng.normal(900, 300)), int(rng.poisson(1))
        for system, q in quality.items():
            extra_len, extra_bold = (500, 3) if system == "padded" else (0, 0)
            length = max(50.0, rng.normal(900 + extra_len, 300))
            bolds = int(rng.poisson(1 + extra_bold))
            total = bolds + base_bold
            z = q + phi * np.tanh((length - base_len) / 600)
            z += bold * ((bolds - base_bold) / total if total else 0.0)
            won = float(rng.random() < expit(z))
            mine = {"length": length, "headers": 0, "lists": 0, "bold": bolds}
            theirs = {"length": base_len, "headers": 0, "lists": 0, "bold": base_bold}
            a, b, score = (mine, theirs, won) if (i + len(system)) % 2 else (theirs, mine, 1 - won)
            sa, sb = (system, "base") if (i + len(system)) % 2 else ("base", system)
            row = {"item_id": f"i{i}", "system_a": sa, "system_b": sb, "score_a": score}
            row |= {f"{k}_a": v for k, v in a.items()} | {f"{k}_b": v for k, v in b.items()}
            rows.append(row)
    return pd.DataFrame(rows)


def _sklearn_soft(x: np.ndarray, p: np.ndarray, penalty: np.ndarray) -> np.ndarray:
    """Logistic regression on soft targets with an L2 penalty of its own on each coefficient:
    each row twice, labelled 1 with weight p and 0 with weight 1 - p; the penalties by scaling
    the columns (sklearn's one penalty 0.5 w'^2 on x / sqrt(penalty) is 0.5 penalty w^2)."""
    scale = 1 / np.sqrt(penalty)
    model = LogisticRegression(C=1.0, fit_intercept=False, tol=1e-12, max_iter=100_000)
    n = len(p)
    model.fit(
        np.vstack([x, x]) * scale, np.r_[np.ones(n), np.zeros(n)], sample_weight=np.r_[p, 1 - p]
    )
    return model.coef_[0] * scale


@pytest.mark.parametrize("baseline", [None, "base"])
def test_the_fit_is_sklearns_soft_label_logistic_regression(baseline: str | None) -> None:
    """Against the field, the GLM of the controls alone; against a baseline, with the item
    difficulties (`item_difficulty`, shrunk as the module does) as one more column."""
    table = _planted(1)
    table.loc[::7, "score_a"] = 0.5  # ties: soft targets, not rounded
    ours = style_controlled(table, ["length", "markdown"], baseline=baseline, resamples=200)
    rates = {r.system: r for r in ours.systems}
    oriented = {}
    for system in ("padded", "better"):
        mine = table[(table["system_a"] == system) | (table["system_b"] == system)]
        flip = (mine["system_b"] == system).to_numpy()

        def side(name: str, mine: pd.DataFrame = mine, flip: np.ndarray = flip) -> np.ndarray:
            a, b = mine[f"{name}_a"].to_numpy(float), mine[f"{name}_b"].to_numpy(float)
            return np.where(flip, b, a), np.where(flip, a, b)

        (own, other), (own_bold, other_bold) = side("length"), side("bold")
        total = own_bold + other_bold
        bold = np.divide(own_bold - other_bold, total, out=np.zeros(len(mine)), where=total > 0)
        oriented[system] = (
            np.where(flip, 1 - mine["score_a"], mine["score_a"]),
            own - other,
            bold,
            mine["item_id"].to_numpy(),
        )
    if baseline is not None:
        gamma = item_difficulty(
            [s for s, o in oriented.items() for _ in o[0]],
            [i for o in oriented.values() for i in o[3]],
            np.concatenate([o[0] for o in oriented.values()]),
            np.concatenate([o[1] for o in oriented.values()]),
            shrink=_SHRINK,
            feature_ridge=1.0,
            # headers, lists (never used here) and bold, as the module passes them
            features=np.concatenate(
                [np.column_stack([0 * o[2], 0 * o[2], o[2]]) for o in oriented.values()]
            ),
        )
    for system, (p, delta, bold, items) in oriented.items():
        columns = [np.ones(len(p)), np.tanh(delta / delta.std(ddof=1)), bold]
        if baseline is not None:
            columns.append(np.array([gamma[i] for i in items]))
        x = np.column_stack(columns)
        # The module's penalties: intercept 1e-8, length 1e-4, markdown 1, difficulty 1e-4.
        w = _sklearn_soft(x, p, np.array([1e-8, 1e-4, 1.0, 1e-4][: x.shape[1]]))
        rate = rates[system]
        kept = w[0] + (w[3] * x[:, 3] if baseline is not None else 0.0)
        assert rate.controlled == pytest.approx(float(np.mean(expit(kept))), abs=1e-4)
        assert [rate.coefficients["length"], rate.coefficients["bold"]] == pytest.approx(
            list(w[1:3]), abs=2e-3
        )
        assert set(rate.coefficients) == {"length", "bold"}  # headers and lists never varied
        assert rate.win_rate == pytest.approx(p.mean())


def test_the_control_removes_a_planted_style_preference() -> None:
    """Equal quality, but padded and bolded: the raw win rate is far above 1/2 and its interval
    excludes it; against the field (no difficulty term, the planted world has none), the
    controlled rate's 95% interval holds the planted 1/2, and the better system's planted
    sigmoid(0.4), in at least 85% of 20 simulations (94% and 96% over 100)."""
    covered = {"padded": 0, "better": 0}
    raw_excludes_half = 0
    runs = 20
    truth = {"padded": 0.5, "better": float(expit(0.4))}
    for seed in range(runs):
        result = style_controlled(_planted(seed), ["length", "markdown"], resamples=300, seed=seed)
        rates = {r.system: r for r in result.systems}
        for system, value in truth.items():
            covered[system] += rates[system].ci_low <= value <= rates[system].ci_high
        raw_excludes_half += rates["padded"].win_low > 0.5
    assert raw_excludes_half == runs
    assert min(covered.values()) >= 0.85 * runs, covered
    # Length alone leaves the bold preference in: the padded system still looks better.
    only_length = style_controlled(_planted(0, n=600), ["length"], baseline="base", resamples=200)
    both = style_controlled(
        _planted(0, n=600), ["length", "markdown"], baseline="base", resamples=200
    )
    padded = {r.system: r for r in only_length.systems}["padded"]
    assert padded.controlled > {r.system: r for r in both.systems}["padded"].controlled + 0.03


def _with_difficulty(seed: int, systems: int = 4, n: int = 300) -> tuple[pd.DataFrame, dict]:
    """`systems` systems against a baseline on items of planted difficulty (sd 1 logit),
    half of them 500 characters longer; the truth is each system's mean over the items of
    sigmoid(quality + difficulty), its win rate at equal length."""
    rng = np.random.default_rng(seed)
    gamma = rng.normal(0, 1, n)
    base = np.maximum(50, rng.normal(900, 300, n))
    rows, truth = [], {}
    for j in range(systems):
        name, q = f"s{j}", 0.4 * (j % 2)
        length = np.maximum(50, rng.normal(900 + 500 * (j % 3 == 0), 300, n))
        won = rng.random(n) < expit(q + 1.2 * np.tanh((length - base) / 600) + gamma)
        truth[name] = float(expit(q + gamma).mean())
        rows.append(pd.DataFrame({"item_id": np.arange(n), "system_a": name, "system_b": "base",
                                  "score_a": won.astype(float), "length_a": length,
                                  "length_b": base}))  # fmt: skip
    return pd.concat(rows, ignore_index=True), truth


def test_against_a_baseline_items_of_varying_difficulty_are_averaged_over() -> None:
    """AlpacaEval's difficulty term: with items that really differ, the controlled rate is the
    mean over items at equal length; its interval holds it in at least 85% of cases (20
    simulations x 4 systems; 92% over 100 simulations)."""
    covered = total = 0
    for seed in range(20):
        table, truth = _with_difficulty(seed)
        result = style_controlled(table, ["length"], baseline="base", resamples=300, seed=seed)
        for rate in result.systems:
            covered += rate.ci_low <= truth[rate.system] <= rate.ci_high
            total += 1
    assert covered >= 0.85 * total, (covered, total)


def test_judge_compares_control_approaches_alpaca_evals_published_lc_win_rates() -> None:
    """The bundled AlpacaEval 2 preferences as a pairwise table against its baseline: the
    controlled rates `judge compare --control length --baseline gpt4_1106_preview` computes
    against the published length-controlled leaderboard (measured: Spearman 0.976, mean
    absolute difference 1.34 points; the raw win rates 0.961 and 4.77)."""
    data = Path(__file__).resolve().parent.parent / "data" / "alpaca_eval"
    prefs = pd.read_csv(data / "preferences.csv.gz")
    board = pd.read_csv(data / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv", index_col=0)
    baseline = "gpt4_1106_preview"
    table = pd.DataFrame(
        {
            "item_id": prefs["instruction_idx"],
            "system_a": prefs["model"],
            "system_b": baseline,
            "score_a": prefs["preference"] - 1,
            "length_a": prefs["len_output_2"],
            "length_b": prefs["len_output_1"],
        }
    )
    table = table[table["system_a"] != baseline]
    result = style_controlled(table, ["length"], baseline=baseline, resamples=50)
    rates = [r for r in result.systems if r.system in board.index]
    ours = np.array([100 * r.controlled for r in rates])
    raw = np.array([100 * r.win_rate for r in rates])
    published = board.loc[[r.system for r in rates], "length_controlled_winrate"].to_numpy()
    assert len(rates) == 56  # the leaderboard's 57 but the baseline itself
    assert spearmanr(ours, published).statistic >= 0.97
    assert np.abs(ours - published).mean() <= 1.5
    assert np.abs(ours - published).mean() < np.abs(raw - published).mean() / 3


def test_renaming_reordering_and_swapping_sides_change_nothing() -> None:
    table = _planted(3, n=120)
    base = style_controlled(table, ["length", "markdown"], baseline="base", resamples=300, seed=9)
    names = {"padded": "zz-first", "better": "aa-second", "base": "mm-base"}
    renamed = table.replace({"system_a": names, "system_b": names})
    swapped = table.copy()
    for name in ("length", "headers", "lists", "bold"):
        swapped[[f"{name}_a", f"{name}_b"]] = table[[f"{name}_b", f"{name}_a"]].to_numpy()
    swapped[["system_a", "system_b"]] = table[["system_b", "system_a"]].to_numpy()
    swapped["score_a"] = 1 - table["score_a"]
    shuffled = swapped.sample(frac=1, random_state=4).reset_index(drop=True)
    for variant, rename in ((renamed, names), (shuffled, {})):
        other = style_controlled(
            variant,
            ["length", "markdown"],
            baseline=rename.get("base", "base"),
            resamples=300,
            seed=9,
        )
        got = {r.system: r for r in other.systems}
        for r in base.systems:
            o = got[rename.get(r.system, r.system)]
            assert (o.controlled, o.ci_low, o.ci_high, o.win_rate) == pytest.approx(
                (r.controlled, r.ci_low, r.ci_high, r.win_rate), abs=1e-9
            )
            assert o.coefficients == pytest.approx(r.coefficients, abs=1e-9)


def test_bad_input_names_the_column() -> None:
    table = _planted(2, n=20)
    with pytest.raises(StyleControlError, match="no headers_a, headers_b, lists_a"):
        style_controlled(table.drop(columns=["headers_a", "headers_b", "lists_a"]), ["markdown"])
    broken = table.copy()
    broken.loc[5, "length_b"] = np.nan
    with pytest.raises(StyleControlError, match=r"column length_b: 1 judged rows .* row 6"):
        style_controlled(broken, ["length"])
    with pytest.raises(StyleControlError, match="control colour: expected one or more of"):
        style_controlled(table, ["colour"])


def test_a_system_always_longer_is_flagged_as_extrapolated() -> None:
    table = _planted(5, n=80, quality={"padded": 0.0})
    table["length_a"] = np.where(table["system_a"] == "padded", 5000, 100)
    table["length_b"] = np.where(table["system_b"] == "padded", 5000, 100) + np.arange(80)
    result = style_controlled(table, ["length"], baseline="base", resamples=100)
    assert result.systems[0].longer == 1.0
    assert result.notes and "padded's response was the longer in 100%" in result.notes[0]
    # Always shorter: as far from equal length. As long on half the items: not at all.
    swapped = table.assign(length_a=table["length_b"], length_b=table["length_a"])
    shorter = style_controlled(swapped, ["length"], baseline="base", resamples=100)
    assert "padded's response was the shorter in 100%" in shorter.notes[0]
    even = table.assign(length_b=np.where(np.arange(80) % 2, table["length_a"], 10_000))
    assert style_controlled(even, ["length"], baseline="base", resamples=100).notes == ()


# --------------------------------------------------------------------------- a whole run

PAD = " It is worth adding that the details matter here."


def _text(tag: str, i: int, q: float, extra: int) -> str:
    n = random.Random(f"{tag}{i}").randint(1, 8) + extra
    return quality(q, f"{tag} {i}: the lamp by the river." + PAD * n)


def _verbose_run(root: Path, items: int = 150, **overrides: Any) -> Path:
    items_file, responses = write_dataset(
        root,
        items,
        {
            "sys-verbose": lambda i: _text("v", i, 0.5, 4),
            "sys-plain": lambda i: _text("p", i, 0.5, 0),
            "sys-good": lambda i: _text("g", i, 0.65, 0),
        },
    )
    config = write_config(
        root,
        items_file,
        responses,
        judges=[
            {
                "model": "openai/sim-alpha",
                "base_url": "simulator",
                "transport": "http",
                "max_connections": 32,
            }
        ],
        simulator={"seed": 5, "noise": 0.3, "verbosity_bias": 0.5},
        compare={"resamples": 1000, "control": ["length", "markdown"]},
        cache=str(root / "cache.sqlite"),
        **overrides,
    )
    outcome = run_pipeline(load_config(config), root / "run")
    assert outcome.exit_code == 0
    return root / "run"


@pytest.fixture(scope="module")
def verbose_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """150 items, a judge with a planted length preference: sys-verbose (as good as
    sys-plain, four sentences longer on average), sys-plain, and sys-good (better, plain)."""
    return _verbose_run(tmp_path_factory.mktemp("style"))


def test_a_run_paired_against_one_system_is_controlled_against_it(tmp_path: Path) -> None:
    run = _verbose_run(tmp_path, 60, pairs={"mode": "baseline", "baseline": "sys-plain"})
    controlled = json.loads((run / "summary.json").read_text())["comparison"]["controlled"]
    assert controlled["baseline"] == "sys-plain"
    assert {r["system"] for r in controlled["systems"]} == {"sys-verbose", "sys-good"}
    result = run_cli_here("compare", str(run), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["controlled"] == controlled


def test_a_run_reports_the_verbose_systems_win_as_length(verbose_run: Path) -> None:
    summary = json.loads((verbose_run / "summary.json").read_text())
    controlled = summary["comparison"]["controlled"]
    rates = {r["system"]: r for r in controlled["systems"]}
    raw = {w["system"]: w for w in summary["win_rates"]}
    # The raw win rates crown the padded system; the controlled ones the better one.
    assert max(raw, key=lambda s: raw[s]["win_rate"]) == "sys-verbose"
    assert controlled["systems"][0]["system"] == "sys-good"
    verbose = rates["sys-verbose"]
    assert verbose["shift_high"] < 0 and verbose["coefficients"]["length"] > 0.5
    # The same judgments as the raw win rates, and the same raw rate.
    assert verbose["win_rate"] == pytest.approx(raw["sys-verbose"]["win_rate"])
    assert verbose["judgments"] == raw["sys-verbose"]["judgments"]
    diffs = {(d["a"], d["b"]): d for d in controlled["differences"]}
    assert diffs[("sys-good", "sys-verbose")]["ci_low"] > 0
    plain = diffs.get(("sys-verbose", "sys-plain")) or diffs[("sys-plain", "sys-verbose")]
    assert plain["ci_low"] < 0 < plain["ci_high"]  # as good as each other, once controlled
    report = (verbose_run / "report.md").read_text()
    assert "### Controlled for length and markdown (headers, lists, bold)" in report
    shown = f"{100 * verbose['win_rate']:.1f}% [" + "{:.1f}%".format(100 * verbose["win_low"])
    assert f"| sys-verbose | {shown}" in report
    assert "{:.1f}%".format(100 * verbose["controlled"]) in report


def test_judge_compare_control_is_the_reports_number(verbose_run: Path) -> None:
    summary = json.loads((verbose_run / "summary.json").read_text())
    result = run_cli_here("compare", str(verbose_run), "--json")
    assert result.returncode == 0, result.stderr
    # The run's compare settings (seed, resamples, control): the same numbers, exactly.
    assert json.loads(result.stdout)["controlled"] == summary["comparison"]["controlled"]
    length_only = run_cli_here("compare", str(verbose_run), "--control", "length")
    assert length_only.returncode == 0, length_only.stderr
    assert "controlled for length" in length_only.stdout and "bold slope" not in length_only.stdout
    bad = run_cli_here("compare", str(verbose_run), "--control", "length,colour")
    assert bad.returncode == 2 and "control colour: expected one or more of length, markdown" in (
        bad.stderr
    )


def test_a_table_with_texts_is_measured(tmp_path: Path) -> None:
    rng = random.Random(3)
    rows = []
    for i in range(60):
        long_side = rng.random() < 0.5
        long_text, short_text = "**Yes.** " * rng.randint(3, 9), "Yes. " * rng.randint(1, 4)
        a, b = (long_text, short_text) if long_side else (short_text, long_text)
        won = rng.random() < 0.8
        score = float(won == long_side)
        rows.append({"item_id": i, "system_a": "x" if long_side else "y",
                     "system_b": "y" if long_side else "x", "score_a": score,
                     "output_a": a, "output_b": b})  # fmt: skip
    table = pd.DataFrame(rows)
    measured = with_styles(table)
    assert (measured["bold_a"] > 0).sum() == sum(r["system_a"] == "x" for r in rows)
    path = tmp_path / "judgments.csv"
    table.to_csv(path, index=False)
    result = run_cli_here("compare", str(path), "--control", "length,markdown", "--json")
    assert result.returncode == 0, result.stderr
    controlled = json.loads(result.stdout)["controlled"]
    assert {r["system"] for r in controlled["systems"]} == {"x", "y"}
    scores = tmp_path / "scores.csv"
    pd.DataFrame({"item_id": [1, 1, 2, 2], "system": list("abab"), "score": [1, 2, 3, 4]}).to_csv(
        scores, index=False
    )
    refused = run_cli_here("compare", str(scores), "--control", "length")
    assert refused.returncode != 0 and "needs pairwise judgments" in refused.stderr


def test_an_absolute_run_says_why_it_has_no_control(tmp_path: Path) -> None:
    items, responses = write_dataset(
        tmp_path,
        12,
        {"sys-a": lambda i: _text("a", i, 0.5, 0), "sys-b": lambda i: _text("b", i, 0.6, 2)},
    )
    config = write_config(
        tmp_path,
        items,
        responses,
        rubric="absolute_1to5",
        judges=[{"model": "openai/sim-alpha", "base_url": "simulator", "transport": "http"}],
        simulator={"seed": 1},
        compare={"resamples": 200, "control": ["length"]},
        cache=str(tmp_path / "cache.sqlite"),
    )
    outcome = run_pipeline(load_config(config), tmp_path / "run")
    comparison = outcome.summary.analysed().comparison
    assert comparison.controlled is None
    assert any("compare.control (length) left out" in n for n in comparison.notes)
