"""One meaning of "told apart" (the Holm-adjusted paired test), ranks from the same tests, and
p-values that can be small.

References: statsmodels' `multipletests(method="holm")` for Holm's adjustment;
`scipy.stats.binomtest` for the exact sign test; `scipy.stats.norm` for the normal
approximation; hand-built told-apart sets for the ranks, with the rank worked out by hand
from the definition in calibration/ranks.py.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from calibration.bootstrap import paired_bootstrap
from calibration.compare import compare_table
from calibration.pairs import all_pairs, family_resamples, holm
from calibration.ranks import interval_overlap_ranks, ranks_from_tests
from calibration.resampling import sign_test
from judge.run.analyse import _decision
from judge.summary.run_summary import RunComparison

# --------------------------------------------------------------------------- p-values


def test_holm_matches_statsmodels() -> None:
    rng = np.random.default_rng(0)
    for m in (1, 2, 5, 30, 190):
        p = rng.uniform(0, 0.2, m) ** 2
        p[: m // 4] = p[0]  # ties
        expected = multipletests(p, alpha=0.05, method="holm")[1]
        np.testing.assert_allclose(holm(p), expected, rtol=1e-12, atol=0)


def test_sign_test_matches_scipy_binomtest() -> None:
    for wins, losses in itertools.product((0, 1, 3, 9, 30, 200), (0, 2, 7, 31, 150)):
        if wins + losses == 0:
            assert sign_test(0, 0) == 1.0
            continue
        expected = stats.binomtest(wins, wins + losses, 0.5).pvalue
        assert sign_test(wins, losses) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_verdicts_at_the_floor_use_the_sign_test() -> None:
    # 40 wins, 2 losses, 8 ties: no resample of the mean crosses 0. "Mean 0" for +1/0/-1 units
    # is "wins as likely as losses": binomtest(40, 42) is the exact p-value.
    diff = np.array([1.0] * 40 + [-1.0] * 2 + [0.0] * 8)
    res = paired_bootstrap(diff, np.zeros(50), seed=0, resamples=1_000)
    assert res.p_method == "sign" and not res.p_floor_limited
    assert res.p_value == pytest.approx(stats.binomtest(40, 42).pvalue, rel=1e-9)
    # Five wins out of five: the exact test cannot tell them apart at 5%, though no resample
    # crosses 0 (p = 2 / 2^5 = 0.0625).
    five = paired_bootstrap(np.ones(5), np.zeros(5), seed=0, resamples=1_000)
    assert five.p_value == pytest.approx(0.0625) and not five.p_below_level


@pytest.mark.parametrize("n", [12, 50, 200])
def test_at_the_floor_the_p_value_is_the_paired_t_tests(n: int) -> None:
    """No resample crosses 0: the p-value is Student's paired t test (scipy's, an independent
    reference) at any number of items, not the normal tail (2-3 times too thin at 50 items,
    where Holm decides for many systems)."""
    rng = np.random.default_rng(n)
    a, b = rng.normal(1.5, 1.0, n), rng.normal(0.0, 1.0, n)
    res = paired_bootstrap(a, b, seed=2, resamples=1_000)
    assert res.p_method == "t" and not res.p_floor_limited
    assert res.p_value == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-9)
    if n == 12:  # 12 units: the bootstrap's tail was too thin to reach 0 at all
        assert res.p_value > 1 / 1001
    else:
        assert res.p_value < 1 / 1001  # below the floor it replaces
    if n == 50:
        assert res.p_value > 2 * stats.norm.sf(abs(res.mean_diff) / res.se)  # thicker tail


def test_at_the_floor_strata_test_on_the_within_stratum_spread() -> None:
    """Resampled within strata, the spread between strata is not noise: the t test's SE is
    the stratified one, the bootstrap's own SE with each stratum's variance on n_h - 1."""
    rng = np.random.default_rng(5)
    strata = np.repeat(["easy", "hard"], 40)
    diff = np.where(strata == "easy", 2.0, 0.5) + rng.normal(0, 0.5, 80)
    res = paired_bootstrap(diff, np.zeros(80), seed=0, resamples=2_000, strata=strata)
    groups = [diff[strata == s] for s in ("easy", "hard")]
    se = np.sqrt(sum(np.var(g, ddof=1) * len(g) for g in groups)) / 80
    assert res.p_method == "t"
    assert res.p_value == pytest.approx(2 * stats.t.sf(diff.mean() / se, 78), rel=1e-9)
    assert res.se == pytest.approx(se * np.sqrt(39 / 40), rel=0.1)  # the bootstrap's, on n_h


def test_one_unit_per_stratum_at_the_floor_is_flagged() -> None:
    """No spread left to test with: the p-value keeps the floor, flagged."""
    diff = np.array([3.0, 2.5, 4.0])
    res = paired_bootstrap(diff, np.zeros(3), seed=0, resamples=999, strata=["x", "y", "z"])
    assert res.p_method == "bootstrap" and res.p_floor_limited


def test_resolved_p_values_stay_the_bootstraps() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.normal(0.15, 1.0, 200), rng.normal(0.0, 1.0, 200)
    res = paired_bootstrap(a, b, seed=0, resamples=4_000)
    assert res.p_method == "bootstrap" and 0.001 < res.p_value < 0.9
    # Consistent with the interval: p < 0.05 exactly when it excludes 0 (away from 0.05).
    assert (res.p_value < 0.05) == (res.ci_low > 0 or res.ci_high < 0)


def test_family_resamples_rule() -> None:
    for m, level in ((1, 0.05), (190, 0.05), (780, 0.05), (45, 0.01)):
        b = family_resamples(m, level)
        assert m / (b + 1) <= level / 2 < m / b  # the fewest with floor x pairs <= level / 2


def test_twelve_items_of_clearly_different_systems_need_no_more_resamples() -> None:
    # 20 systems, 3 apart with noise sd 1 on 12 items: every pair is clearly different. With
    # 1,000 resamples the floor x 190 pairs would be 0.19; the t test resolves each pair's
    # p-value below the floor without bootstrapping again.
    rng = np.random.default_rng(5)
    wide = pd.DataFrame({f"s{k:02d}": 3.0 * k + rng.normal(0, 1, 12) for k in range(20)})
    res = all_pairs(wide, seed=0, resamples=1_000)
    assert len(res.comparisons) == 190
    assert all(c.told_apart for c in res.comparisons)
    assert {c.result.p_method for c in res.comparisons} == {"t"}
    assert {c.result.resamples for c in res.comparisons} == {1_000}
    assert max(c.p_holm for c in res.comparisons) <= 0.025


def test_floor_limited_pairs_are_resampled_for_their_family() -> None:
    # Resampled within strata of one item each, a pair has no spread to test with: its
    # p-value is the floor, and with 19 resamples the floor x 3 pairs is above half the
    # level, so each pair is bootstrapped again with enough resamples for its family.
    wide = pd.DataFrame(
        {"a": [9.0, 8.5, 9.5], "b": [5.0, 4.0, 6.5], "c": [1.0, 0.5, 2.0]},
        index=pd.Index(["i0", "i1", "i2"], name="item_id"),
    )
    strata = pd.Series(["x", "y", "z"], index=wide.index)
    res = all_pairs(wide, seed=0, resamples=19, strata=strata)
    assert all(c.result.p_floor_limited for c in res.comparisons)
    assert all(c.result.resamples == family_resamples(3, 0.05) for c in res.comparisons)


# --------------------------------------------------------------------------- ranks


def _apart(*pairs: str) -> set[frozenset[str]]:
    return {frozenset(p) for p in pairs}


def test_ranks_from_tests_hand_built() -> None:
    est = {"A": 4.0, "B": 3.0, "C": 2.0, "D": 1.0}
    # Nothing told apart: all first.
    assert ranks_from_tests(est, set()) == {"A": 1, "B": 1, "C": 1, "D": 1}
    # Everything told apart: 1 2 3 4.
    every = {frozenset(p) for p in itertools.combinations(est, 2)}
    assert ranks_from_tests(est, every) == {"A": 1, "B": 2, "C": 3, "D": 4}
    # A clean cut between {A, B} and {C, D}: competition ranks 1 1 3 3.
    cut = _apart("AC", "AD", "BC", "BD")
    assert ranks_from_tests(est, cut) == {"A": 1, "B": 1, "C": 3, "D": 3}
    # Not transitive: A is told apart from C, B from neither. C ranks 1 + 1 = 2; B shares
    # A's rank; D (told apart from nobody) cannot rank above C: 2.
    assert ranks_from_tests(est, _apart("AC")) == {"A": 1, "B": 1, "C": 2, "D": 2}
    # A apart from B, B apart from C, A and C not: C would be 1 + 1 = 2 like B, but B is told
    # apart from it, so C goes below B.
    assert ranks_from_tests(est, _apart("AB", "BC")) == {"A": 1, "B": 2, "C": 3, "D": 3}


def test_ranks_never_tie_told_apart_systems_and_follow_the_ordering() -> None:
    rng = random.Random(0)
    for _ in range(300):
        k = rng.randint(2, 9)
        names = [f"s{i}" for i in range(k)]
        est = {s: rng.choice([0.0, 1.0, 2.0, 3.0, 4.0, 5.0]) for s in names}
        apart = {
            frozenset(p)
            for p in itertools.combinations(names, 2)
            if est[p[0]] != est[p[1]] and rng.random() < 0.5
        }
        ranks = ranks_from_tests(est, apart)
        for s, t in itertools.combinations(names, 2):
            if frozenset((s, t)) in apart:
                assert ranks[s] != ranks[t]
            if est[s] > est[t]:
                assert ranks[s] <= ranks[t]
            if est[s] == est[t] and not apart & {frozenset((s, u)) for u in names}:
                assert ranks[s] <= ranks[t]
        # Competition ranks: each rank r is held by no system while r-1 systems rank above.
        assert min(ranks.values()) == 1
        for s in names:
            assert ranks[s] >= 1 + sum(frozenset((s, t)) in apart and est[t] > est[s] for t in est)


def _chain(n_items: int = 100) -> pd.DataFrame:
    """Nine systems 0.15 apart on items of varied difficulty (sd 1, shared by all systems) with
    noise sd 0.5: each mean's interval overlaps its neighbours' (a chain from first to last),
    while the ends are 1.2 apart."""
    rng = np.random.default_rng(11)
    q = rng.normal(0, 1, n_items)
    rows = [
        (f"i{i}", f"m{k}", q[i] + 0.15 * (8 - k) + rng.normal(0, 0.5))
        for k in range(9)
        for i in range(n_items)
    ]
    return pd.DataFrame(rows, columns=["item_id", "system", "score"])


def test_the_nine_system_chain_no_longer_ties_disjoint_intervals() -> None:
    report = compare_table(_chain(), kind="scores", resamples=2_000, seed=0)
    r = {s.system: s for s in report.ranking}
    names = sorted(r)
    lo = [r[s].ci_low for s in names]
    hi = [r[s].ci_high for s in names]
    est = [r[s].estimate for s in names]
    # The old rule chains the overlaps: every system shares one rank.
    assert len(set(interval_overlap_ranks(est, lo, hi))) == 1
    apart = {frozenset((c.a, c.b)) for c in report.comparisons if c.told_apart}
    disjoint = [
        (s, t)
        for s, t in itertools.combinations(names, 2)
        if r[s].ci_high < r[t].ci_low or r[t].ci_high < r[s].ci_low
    ]
    assert disjoint  # the example has systems with disjoint intervals
    for s, t in disjoint:
        assert frozenset((s, t)) in apart and r[s].rank != r[t].rank
    for s, t in itertools.combinations(names, 2):
        if r[s].rank == r[t].rank:
            assert frozenset((s, t)) not in apart


def _acme() -> pd.DataFrame:
    # Item difficulty dominates the scores, so the two means' intervals overlap, but large is
    # better than small on almost every item: the paired test tells them apart.
    rng = np.random.default_rng(2)
    rows = []
    for i in range(60):
        q = rng.normal(0, 2)
        rows += [
            (f"i{i}", "acme-large", q + 0.4 + rng.normal(0, 0.1)),
            (f"i{i}", "acme-small", q + rng.normal(0, 0.1)),
            (f"i{i}", "acme-tiny", q + 0.35 + rng.normal(0, 2)),
        ]
    return pd.DataFrame(rows, columns=["item_id", "system", "score"])


def test_the_decisions_tied_with_and_told_apart_agree() -> None:
    report = compare_table(_acme(), kind="scores", resamples=2_000, seed=0)
    comparison = RunComparison.model_validate({"judge": "j", **report.to_dict()})
    decision = _decision(comparison, None, None)
    large, small = (s for s in report.ranking if s.system in ("acme-large", "acme-small"))
    assert large.ci_low < small.ci_high  # the intervals overlap (old rule: one rank)
    apart = {frozenset((c.a, c.b)) for c in report.comparisons if c.told_apart}
    assert frozenset(("acme-large", "acme-small")) in apart
    assert decision.leader == "acme-large" and "acme-small" not in decision.leader_tied_with
    for s in decision.leader_tied_with:
        assert frozenset((decision.leader, s)) not in apart
    ranks = {s.system: s.rank for s in report.ranking}
    for n in decision.neighbours:
        assert n.told_apart == (frozenset((n.upper, n.lower)) in apart)
        if ranks[n.upper] == ranks[n.lower]:
            assert not n.told_apart


# --------------------------------------------------------------------------- invariance


def _verdicts(seed: int) -> pd.DataFrame:
    """Six systems, every pair on 80 items, win probabilities from spaced strengths."""
    rng = np.random.default_rng(seed)
    strength = dict(zip("abcdef", (1.2, 0.9, 0.8, 0.3, 0.25, -0.6), strict=True))
    rows = []
    for (x, y), i in itertools.product(itertools.combinations("abcdef", 2), range(80)):
        p = 1 / (1 + np.exp(strength[y] - strength[x]))
        u = rng.random()
        score = 0.5 if abs(u - p) < 0.1 else float(u < p)
        rows.append((f"q{i}", x, y, score))
    return pd.DataFrame(rows, columns=["item_id", "system_a", "system_b", "score_a"])


def _scores(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [
        (f"q{i}", s, float(np.clip(round(m + rng.normal(0, 1.5)), 1, 10)))
        for s, m in zip("abcde", (6.0, 5.6, 5.5, 4.8, 4.0), strict=True)
        for i in range(60)
    ]
    return pd.DataFrame(rows, columns=["item_id", "system", "score"])


def _outcome(report: object, back: dict[str, str]) -> tuple[dict, dict]:
    ranks = {back[s.system]: s.rank for s in report.ranking}  # type: ignore[attr-defined]
    tests = {
        frozenset((back[c.a], back[c.b])): (c.told_apart, round(c.p_holm, 12))
        for c in report.comparisons  # type: ignore[attr-defined]
    }
    return ranks, tests


@pytest.mark.parametrize("kind", ["pairwise", "scores"])
def test_ranks_and_told_apart_do_not_depend_on_names_or_row_order(kind: str) -> None:
    table = _verdicts(0) if kind == "pairwise" else _scores(0)
    columns = ["system_a", "system_b"] if kind == "pairwise" else ["system"]
    systems = sorted(set(table[columns].to_numpy().ravel()))
    first = compare_table(table, kind=kind, resamples=1_000, seed=7)
    identity = {s: s for s in systems}
    expected = _outcome(first, identity)
    assert len(set(expected[0].values())) > 1  # something is ranked apart
    assert {v[0] for v in expected[1].values()} == {True, False}  # and something is not
    rng = random.Random(1)
    for _ in range(4):
        names = [f"{rng.choice('zyxw')}{rng.randint(0, 99)}-{s}" for s in systems]
        rng.shuffle(names)
        rename = dict(zip(systems, names, strict=True))
        renamed = table.copy()
        for c in columns:
            renamed[c] = renamed[c].map(rename)
        renamed = renamed.sample(frac=1.0, random_state=rng.randint(0, 10**6))
        if kind == "pairwise" and rng.random() < 0.5:  # list the other system first
            renamed = renamed.rename(columns={"system_a": "system_b", "system_b": "system_a"})
            renamed["score_a"] = 1 - renamed["score_a"]
        report = compare_table(renamed, kind=kind, resamples=1_000, seed=7)
        assert _outcome(report, {v: k for k, v in rename.items()}) == expected


def test_bradley_terry_and_win_rate_intervals_do_not_depend_on_names_or_row_order() -> None:
    from types import SimpleNamespace

    from calibration.ranking import bradley_terry
    from judge.run.analyse import _win_rates

    table = _verdicts(0)
    config = SimpleNamespace(compare=SimpleNamespace(seed=7, resamples=500))

    def outcome(t: pd.DataFrame, back: dict[str, str]) -> tuple[dict, dict]:
        bt = bradley_terry(t, seed=7, resamples=500)
        strengths = {
            back[s]: (bt.strength[k], bt.ci_low[k], bt.ci_high[k], bt.not_estimable)
            for k, s in enumerate(bt.systems)
        }
        rates = {
            back[w.system]: (w.win_rate, w.ci_low, w.ci_high, w.items)
            for w in _win_rates(t, config)  # type: ignore[arg-type]
        }
        return strengths, rates

    systems = sorted(set(table["system_a"]) | set(table["system_b"]))
    expected = outcome(table, {s: s for s in systems})
    rng = random.Random(5)
    for _ in range(3):
        names = [f"{rng.choice('zyxw')}{rng.randint(0, 99)}-{s}" for s in systems]
        rename = dict(zip(systems, names, strict=True))
        renamed = table.assign(
            system_a=table["system_a"].map(rename), system_b=table["system_b"].map(rename)
        ).sample(frac=1.0, random_state=rng.randint(0, 10**6))
        if rng.random() < 0.5:  # list the other system first
            renamed = renamed.rename(columns={"system_a": "system_b", "system_b": "system_a"})
            renamed["score_a"] = 1 - renamed["score_a"]
        got = outcome(renamed, {v: k for k, v in rename.items()})
        for want, have in zip(expected, got, strict=True):
            assert want.keys() == have.keys()
            for system in want:
                np.testing.assert_allclose(have[system][:3], want[system][:3], rtol=0, atol=1e-9)
                assert have[system][3:] == want[system][3:]


def test_a_holm_value_raised_to_a_floor_limited_ones_is_a_bound_too() -> None:
    from calibration.pairs import _holm_bounds

    # Worked by hand, 3 pairs: p = 0.001 (the floor: the true p is below it), 0.0012, 0.04.
    # Holm: 3 x 0.001 = 0.003; max(0.003, 2 x 0.0012 = 0.0024) = 0.003, the first pair's
    # bound; max(0.003, 0.04) = 0.04, its own value.
    p = [0.0012, 0.04, 0.001]
    expected = multipletests(p, method="holm")[1]
    np.testing.assert_allclose(expected, [0.003, 0.04, 0.003])
    assert _holm_bounds(p, [False, False, True]).tolist() == [True, False, True]
    assert _holm_bounds(p, [False, False, False]).tolist() == [False, False, False]
    # Capped at 1 (2 x 0.6): not printed as "< 1.000".
    assert _holm_bounds([0.6, 0.7], [True, False]).tolist() == [False, False]


# --------------------------------------------------------------------------- on the page


def test_floor_limited_p_values_are_printed_below_the_floor(capsys: pytest.CaptureFixture) -> None:
    from judge.cli.console import print_comparison
    from judge.report.format import pvalue

    # One pair (a family of one) resampled within strata of one item each, 5 apart: no
    # resample of 999 crosses 0, no spread is left for the t test, and 1/1000 is already
    # below the level: the p-value stays the floor, printed "< 0.001".
    rows = [(f"i{i}", s, m * (1 + i % 3)) for i in range(6) for s, m in (("x", 5.0), ("y", 0.0))]
    table = pd.DataFrame(rows, columns=["item_id", "system", "score"])
    table["topic"] = table["item_id"]
    report = compare_table(table, kind="scores", resamples=999, seed=0, by="topic")
    (c,) = [c for c in report.comparisons if c.stratum is None]
    assert c.result.p_floor_limited and c.p_holm == pytest.approx(1 / 1000) and c.told_apart
    assert pvalue(c.p_holm, c.result.p_floor_limited) == "< 0.001"
    assert pvalue(2.2e-15) == "2.2e-15" and pvalue(0.0123) == "0.012"
    print_comparison(report.to_dict())
    out = capsys.readouterr().out
    assert "│  < 0.001 │ told apart │" in out and "below 0.001" in out


def test_a_gates_p_value_is_the_pairs_holm_adjusted_one() -> None:
    report = compare_table(
        _scores(0), kind="scores", resamples=1_000, seed=7, gates=["p_value(diff(a, b)) < 0.05"]
    )
    (pair,) = [c for c in report.comparisons if (c.a, c.b) == ("a", "b")]
    (gate,) = report.gates
    assert pair.p_holm > pair.result.p_value  # ten pairs: Holm raised it
    assert gate.value == pytest.approx(pair.p_holm) and gate.passed == pair.told_apart


def test_a_gates_p_value_is_holms_whichever_way_round_the_pair_is_written() -> None:
    # The family holds (a, b) only; b - a is the same test turned round, so "diff(b, a)" must
    # get the same Holm-adjusted value, not the pair's unadjusted one.
    gates = ["p_value(diff(a, b)) < 0.05", "p_value(diff(b, a)) < 0.05"]
    report = compare_table(_scores(0), kind="scores", resamples=1_000, seed=7, gates=gates)
    (pair,) = [c for c in report.comparisons if (c.a, c.b) == ("a", "b")]
    forward, backward = report.gates
    assert pair.p_holm > pair.result.p_value
    assert forward.value == backward.value == pytest.approx(pair.p_holm)
    assert forward.passed == backward.passed == pair.told_apart
