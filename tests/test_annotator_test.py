"""The alternative annotator test (Calderon et al. 2025) against independent references: scipy's
one-sided t-tests, statsmodels' Benjamini-Yekutieli, and the procedure written out per
annotator and per item from the paper's definition (sec. 3: leave annotator j out, score the
judge and j against the others on each item, W = 1 when at least as well, one-sided paired
t-test of H0: rho_f <= rho_h - epsilon, BY at q = 0.05, winning rate >= 0.5)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from calibration.annotator_test import (
    alternative_annotator_test,
    benjamini_yekutieli,
    one_sided_p,
)


@pytest.mark.parametrize("seed", range(5))
def test_one_sided_p_is_scipy_paired_t_test(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 200))
    w_f = (rng.random(n) < rng.uniform(0.5, 0.95)).astype(float)
    w_h = (rng.random(n) < rng.uniform(0.5, 0.95)).astype(float)
    epsilon = float(rng.choice([0.1, 0.15, 0.2]))
    d = w_h - w_f
    got = one_sided_p(d, epsilon)
    # H1: mean(W_h - W_f) < epsilon, i.e. rho_f > rho_h - epsilon.
    assert got == pytest.approx(stats.ttest_1samp(d, epsilon, alternative="less").pvalue)
    assert got == pytest.approx(stats.ttest_rel(w_h, w_f + epsilon, alternative="less").pvalue)


def test_one_sided_p_without_variance_is_decided_by_the_mean() -> None:
    assert one_sided_p(np.zeros(40), 0.1) == 0.0  # the judge never behind: H0 rejected
    assert one_sided_p(np.full(40, 0.5), 0.1) == 1.0


@pytest.mark.parametrize("m", [1, 2, 3, 7, 26])
def test_benjamini_yekutieli_is_statsmodels_fdr_by(m: int) -> None:
    rng = np.random.default_rng(m)
    p = np.concatenate([rng.random(m) ** 3, [0.01, 0.01]])[:m]  # small ones, and ties
    adjusted, rejected = benjamini_yekutieli(p, 0.05)
    ref_rejected, ref_adjusted, _, _ = multipletests(p, alpha=0.05, method="fdr_by")
    assert adjusted == pytest.approx(ref_adjusted)
    assert rejected.tolist() == ref_rejected.tolist()


def _reference_alt_test(
    humans: dict[str, dict[str, object]],
    judge: dict[str, object],
    score,
    epsilon: float,
    min_items: int = 30,
) -> tuple[float, float, dict[str, float]]:
    """The procedure written out item by item from the paper (independent of the module)."""
    by_item: dict[str, list[str]] = {}
    for h, labels in humans.items():
        for i in labels:
            by_item.setdefault(i, []).append(h)
    p_values, advantage = {}, []
    for j, labels in humans.items():
        items = [i for i in labels if len(by_item[i]) >= 2 and i in judge]
        if len(items) < min_items:
            continue
        w_f, w_h = [], []
        for i in items:
            others = [humans[k][i] for k in by_item[i] if k != j]
            s_f, s_h = score(judge[i], others), score(labels[i], others)
            w_f.append(1.0 if s_f >= s_h else 0.0)
            w_h.append(1.0 if s_h >= s_f else 0.0)
        d = np.array(w_h) - np.array(w_f)
        p_values[j] = stats.ttest_1samp(d, epsilon, alternative="less").pvalue
        advantage.append(np.mean(w_f))
    rejected, _, _, _ = multipletests(list(p_values.values()), alpha=0.05, method="fdr_by")
    return float(np.mean(rejected)), float(np.mean(advantage)), p_values


def _accuracy(x: object, others: list[object]) -> float:
    return float(np.mean([x == o for o in others]))


def _neg_rmse(x: object, others: list[object]) -> float:
    return -float(np.sqrt(np.mean([(float(x) - float(o)) ** 2 for o in others])))  # type: ignore[arg-type]


def _random_labels(
    seed: int, numeric: bool, annotators: int = 5, items: int = 160
) -> tuple[dict[str, dict[str, object]], dict[str, object], pd.DataFrame]:
    """Annotators labelling random subsets (so keys have 1 to `annotators` labels), a judge
    noisier or cleaner than them, and the same as `JoinedLabels.comparisons` rows."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=items) if numeric else rng.choice(["a", "b", "tie"], items)
    humans: dict[str, dict[str, object]] = {}
    for h in range(annotators):
        accuracy = rng.uniform(0.55, 0.95)
        chosen = np.flatnonzero(rng.random(items) < rng.uniform(0.4, 0.9))
        noise = (
            rng.integers(1, 6, size=items) if numeric else rng.choice(["a", "b", "tie"], size=items)
        )
        label = np.where(rng.random(items) < accuracy, truth, noise)
        humans[f"h{h}"] = {f"i{i}": label[i] for i in chosen}
    judge_noise = (
        rng.integers(1, 6, size=items) if numeric else rng.choice(["a", "b", "tie"], items)
    )
    judge_label = np.where(rng.random(items) < rng.uniform(0.5, 0.98), truth, judge_noise)
    judge = {f"i{i}": judge_label[i] for i in range(items)}
    rows = [
        {"key": int(i[1:]), "annotator": h, "human": v, "judge": judge[i]}
        for h, labels in humans.items()
        for i, v in labels.items()
    ]
    comparisons = pd.DataFrame(rows).sort_values("key", kind="stable").reset_index(drop=True)
    if numeric:
        comparisons = comparisons.astype({"human": float, "judge": float})
    return humans, judge, comparisons


@pytest.mark.parametrize("numeric", [False, True], ids=["accuracy", "neg-rmse"])
@pytest.mark.parametrize("seed", range(6))
def test_alt_test_matches_the_procedure_written_out(numeric: bool, seed: int) -> None:
    humans, judge, comparisons = _random_labels(seed, numeric)
    epsilon = [0.1, 0.15, 0.2][seed % 3]
    scoring = "negative RMSE" if numeric else "accuracy"
    got = alternative_annotator_test(comparisons, scoring=scoring, epsilon=epsilon)
    omega, rho, p_values = _reference_alt_test(
        humans, judge, _neg_rmse if numeric else _accuracy, epsilon
    )
    assert got.status in ("passed", "failed")
    assert {r.annotator: r.p_value for r in got.annotators} == pytest.approx(p_values)
    assert got.winning_rate == pytest.approx(omega)
    assert got.advantage_probability == pytest.approx(rho)
    assert got.status == ("passed" if omega >= 0.5 else "failed")


def test_alt_test_without_identified_annotators_does_not_apply() -> None:
    comparisons = pd.DataFrame({"key": range(50), "annotator": "gold", "human": "a", "judge": "a"})
    got = alternative_annotator_test(comparisons, scoring="accuracy")
    assert got.status == "not applicable" and got.winning_rate is None


def test_alt_test_with_too_few_shared_items_says_how_many_more() -> None:
    # h1 and h2 share 12 keys, h3 shares 20 with h1: the two best covered are h1 (32) and h3
    # (20), so 10 more keys labelled by both reach 30 each.
    rows = [(k, "h1") for k in range(32)] + [(k, "h2") for k in range(12)]
    rows += [(k, "h3") for k in range(12, 32)]
    comparisons = pd.DataFrame(rows, columns=["key", "annotator"]).assign(human="a", judge="b")
    got = alternative_annotator_test(comparisons, scoring="accuracy")
    assert got.status == "not enough evidence"
    assert got.items_needed == 10
    assert "label 10 more keys" in got.message


def _reference_with_repeats(
    votes: list[tuple[int, str, str]], judge: dict[int, str], epsilon: float
) -> dict[str, float]:
    """Per-annotator p-values written out for labels with repeats (key, annotator, label):
    the others on a key are every label of the other annotators (each repeat one vote);
    annotator j's W_f and W_h on a key are averaged over j's own repeats."""
    by_key: dict[int, list[tuple[str, str]]] = {}
    for key, who, label in votes:
        by_key.setdefault(key, []).append((who, label))
    p_values = {}
    for j in sorted({who for _, who, _ in votes}):
        d = []
        for key in sorted(by_key):
            own = [label for who, label in by_key[key] if who == j]
            others = [label for who, label in by_key[key] if who != j]
            if not own or not others:
                continue
            s_f = _accuracy(judge[key], others)
            w_f = np.mean([1.0 if s_f >= _accuracy(x, others) else 0.0 for x in own])
            w_h = np.mean([1.0 if _accuracy(x, others) >= s_f else 0.0 for x in own])
            d.append(w_h - w_f)
        p_values[j] = stats.ttest_1samp(d, epsilon, alternative="less").pvalue
    return p_values


@pytest.mark.parametrize("seed", range(3))
def test_repeated_labels_count_by_content_not_row_order(seed: int) -> None:
    # Issue 12 review, item 6: an annotator labelling a key twice. Keeping the first repeat
    # made the p-values change with the order of the table's rows; each repeat now counts as
    # one vote among the others and the annotator's indicators average over its repeats.
    _, judge, comparisons = _random_labels(seed, numeric=False, annotators=4)
    rng = np.random.default_rng(100 + seed)
    again = comparisons.sample(60, random_state=seed)
    again = again.assign(human=rng.choice(["a", "b", "tie"], len(again)))
    with_repeats = pd.concat([comparisons, again], ignore_index=True)
    votes = list(with_repeats[["key", "annotator", "human"]].itertuples(index=False, name=None))
    want = _reference_with_repeats(votes, {int(i[1:]): v for i, v in judge.items()}, 0.1)
    results = []
    for order in range(4):
        rows = with_repeats.sample(frac=1.0, random_state=order).sort_values("key", kind="stable")
        got = alternative_annotator_test(rows.reset_index(drop=True), scoring="accuracy")
        assert {r.annotator: r.p_value for r in got.annotators} == pytest.approx(want)
        results.append(got)
    assert all(r == results[0] for r in results[1:])
