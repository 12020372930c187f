"""AlpacaEval 2.0 (weighted_alpaca_eval_gpt4_turbo) per-instruction preferences.

Reference: the published leaderboard, data/alpaca_eval/weighted_alpaca_eval_gpt4_turbo_
leaderboard.csv (verbatim from tatsu-lab/alpaca_eval @ cd543a1). Recipe (data/alpaca_eval/
SOURCE.md): win_rate = 100 x mean over non-null rows of (preference - 1); standard_error =
100 x sample std (ddof=1) of the same values / sqrt(n); n_wins / n_draws / n_wins_base count
preference > / == / < 1.5. Every model is judged against gpt4_1106_preview on the same 805
instructions, so two models pair up by instruction_idx.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from calibration.bootstrap import paired_bootstrap, win_rate
from calibration.compare import compare_table
from calibration.pairs import holm

DATA = Path(__file__).resolve().parent.parent / "data" / "alpaca_eval"
BASELINE = "gpt4_1106_preview"


@pytest.fixture(scope="module")
def preferences() -> pd.DataFrame:
    return pd.read_csv(DATA / "preferences.csv.gz")


@pytest.fixture(scope="module")
def leaderboard(preferences: pd.DataFrame) -> pd.DataFrame:
    board = pd.read_csv(DATA / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv", index_col=0)
    return board[board.index.isin(preferences["model"].unique())]


def test_win_rates_and_standard_errors_equal_the_leaderboard(
    preferences: pd.DataFrame, leaderboard: pd.DataFrame
) -> None:
    assert len(leaderboard) == 57  # every model on the leaderboard that has annotations
    for model, published in leaderboard.iterrows():
        pref = preferences.loc[preferences["model"] == model, "preference"].dropna()
        res = win_rate(pref - 1, seed=0, resamples=200)
        assert 100 * res.win_rate == pytest.approx(published["win_rate"], abs=1e-8), model
        assert 100 * res.se == pytest.approx(published["standard_error"], abs=1e-8), model
        assert (res.wins, res.ties, res.losses, res.n) == (
            published["n_wins"],
            published["n_draws"],
            published["n_wins_base"],
            published["n_total"],
        ), model


def test_compare_table_reproduces_the_leaderboard(
    preferences: pd.DataFrame, leaderboard: pd.DataFrame
) -> None:
    rows = preferences[preferences["model"] != BASELINE]  # the baseline against itself
    table = pd.DataFrame(
        {
            "item_id": rows["instruction_idx"],
            "system_a": rows["model"],
            "system_b": BASELINE,
            "score_a": rows["preference"] - 1,
            "dataset": rows["dataset"],
        }
    )
    report = compare_table(
        table,
        kind="pairwise",
        baseline=BASELINE,
        by="dataset",
        resamples=500,
        seed=0,
        gates=[f"winrate(claude-2, {BASELINE}) > 0.5"],
    )
    published = leaderboard["win_rate"]
    compared = {c.a: c.result for c in report.comparisons}
    assert len(compared) == 57  # includes text_davinci_003, not on the leaderboard
    for model, wr in published.drop(BASELINE).items():
        assert 100 * (1 + compared[model].mean_diff) / 2 == pytest.approx(wr, abs=1e-8)
        assert 100 * report.win_rates.loc[model, BASELINE] == pytest.approx(wr, abs=1e-8)
    (gate,) = report.gates
    assert not gate.passed and gate.value == pytest.approx(published["claude-2"] / 100)
    assert gate.reason.startswith(f"winrate(claude-2, {BASELINE}) = 0.1719 (95% CI")
    assert {c.stratum for c in report.by_stratum} == set(rows["dataset"])
    json.dumps(report.to_dict())


def test_paired_intervals_between_leaderboard_neighbours(
    preferences: pd.DataFrame, leaderboard: pd.DataFrame
) -> None:
    # Neighbours on the published ordering (win rate, descending) compared on the
    # instructions both were judged on. Pairing removes the instruction difficulty both share:
    # the paired standard error is below the unpaired sqrt(se_a^2 + se_b^2) for every pair.
    board = leaderboard.drop(BASELINE).sort_values("win_rate", ascending=False)
    wide = preferences.pivot(index="instruction_idx", columns="model", values="preference") - 1
    names = list(board.index)
    results = []
    for a, b in itertools.pairwise(names):
        both = wide[a].notna() & wide[b].notna()
        res = paired_bootstrap(wide.loc[both, a], wide.loc[both, b], seed=0, resamples=10_000)
        results.append((a, b, res))
        unpaired = math.hypot(board.loc[a, "standard_error"], board.loc[b, "standard_error"])
        assert res.se < unpaired / 100, (a, b)
        assert 100 * res.mean_diff == pytest.approx(
            100 * (wide.loc[both, a] - wide.loc[both, b]).mean()
        )
    unadjusted = {(a, b) for a, b, r in results if r.p_below_level}
    assert unadjusted == {
        ("NullModel", "FuseChat-Gemma-2-9B-Instruct"),
        ("FuseChat-Gemma-2-9B-Instruct", "FuseChat-Qwen-2.5-7B-Instruct"),
        ("FuseChat-Llama-3.1-8B-Instruct", "FuseChat-Llama-3.2-3B-Instruct"),
        ("FuseChat-Llama-3.2-3B-Instruct", "FuseChat-Llama-3.2-1B-Instruct"),
        ("FuseChat-Llama-3.2-1B-Instruct", "claude-2"),
        ("gpt-3.5-turbo-1106_verbose", "OpenHermes-2.5-Mistral-7B"),  # p = 0.019
    }
    # Across the 55 neighbour tests, Holm keeps all but the p = 0.019 one.
    adjusted = holm([r.p_value for _, _, r in results])
    kept = {(a, b) for (a, b, _), p in zip(results, adjusted, strict=True) if p < 0.05}
    assert kept == unadjusted - {("gpt-3.5-turbo-1106_verbose", "OpenHermes-2.5-Mistral-7B")}
    assert np.mean([r.p_below_level for _, _, r in results]) < 0.15  # most are ties
