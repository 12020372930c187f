"""The report's figures, drawn from the run summary alone (static PNG, matplotlib's Agg backend).

Colours are the Okabe-Ito palette and the `cividis` map: both stay distinct for the common
colour-vision deficiencies and in greyscale. Every figure returns PNG bytes, or None when the
summary lacks what it shows.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from judge.summary.run_summary import Confusion, JudgeBehaviour, Neighbour, PairDiff

# Okabe & Ito (2008), "Color Universal Design".
BLUE, ORANGE, GREEN, VERMILLION, GREY = "#0072B2", "#E69F00", "#009E73", "#D55E00", "#999999"
_DPI = 110


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.spines.top": False, "axes.spines.right": False})
    return plt


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, bbox_inches="tight", metadata={"Software": None})
    _pyplot().close(fig)
    return buf.getvalue()


def forest(comparisons: Sequence[PairDiff], title: str, unit: str) -> bytes | None:
    """Paired differences (a - b, the summary's pairs being winner-first) with their intervals,
    one row per pair, sorted by difference, the largest on top; blue dots where the pair is
    told apart (Holm), grey diamonds where not."""
    if not comparisons:
        return None
    plt = _pyplot()
    rows = sorted(comparisons, key=lambda c: c.mean_diff)
    fig, ax = plt.subplots(figsize=(6.4, 0.28 * len(rows) + 1.1))
    for y, c in enumerate(rows):
        colour = BLUE if c.told_apart else GREY
        if c.ci_low is not None and c.ci_high is not None:
            ax.plot([c.ci_low, c.ci_high], [y, y], color=colour, lw=2)
        marker = "o" if c.told_apart else "D"
        ax.plot(c.mean_diff, y, marker, color=colour, ms=5)
    ax.axvline(0, color="black", lw=0.8, ls="--")
    ax.set_yticks(range(len(rows)), [f"{c.a} - {c.b}" for c in rows])
    ax.set_xlabel(unit)
    ax.set_title(title)
    return _png(fig)


class Placed(NamedTuple):
    """One row of the ranking chart: a system's estimate, its interval (None: not estimable)
    and its rank (None: the ranking has no fit)."""

    system: str
    value: float
    low: float | None
    high: float | None
    rank: int | None


def ranking(rows: Sequence[Placed], unit: str, reference: float | None) -> bytes | None:
    """`ranking_figure` as PNG."""
    fig = ranking_figure(rows, unit, reference)
    return None if fig is None else _png(fig)


def ranking_figure(rows: Sequence[Placed], unit: str, reference: float | None) -> Any:
    """Each system's estimate with its interval, one row per system in the order given (the
    ranking's), the first on top, labelled with its name on the left and its rank on the
    right; a dashed line at `reference` (a win rate of 0.5: as many wins as losses). Drawn
    like `forest`, in the same blue. None without a row."""
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(2.9, 0.24 * len(rows) + 0.7))
    ys = list(range(len(rows)))
    for y, r in zip(ys, rows, strict=True):
        if r.low is not None and r.high is not None:
            ax.plot([r.low, r.high], [y, y], color=BLUE, lw=2.5, solid_capstyle="butt")
        ax.plot(r.value, y, "o", color=BLUE, ms=5.5)
    if reference is not None:
        ax.axvline(reference, color="black", lw=0.8, ls="--")
    ax.set_yticks(ys, [r.system for r in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)  # row 0, the leader, at the top
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="x", color="#e3e3e3", lw=0.6)
    ax.set_axisbelow(True)
    if any(r.rank is not None for r in rows):
        # Ranks beside the rows: a shared rank is a pair the paired tests do not tell apart.
        right = ax.secondary_yaxis("right")
        right.set_yticks(ys, ["" if r.rank is None else f"rank {r.rank}" for r in rows])
        right.tick_params(length=0)
        right.spines["right"].set_visible(False)
    ax.set_xlabel(unit)
    return fig


def win_matrix(win_rates: dict[str, dict[str, float | None]], order: list[str]) -> bytes | None:
    """Row system's win rate against the column system (ties half)."""
    if not win_rates or len(order) < 2:
        return None
    import numpy as np

    plt = _pyplot()
    grid = np.array(
        [[np.nan if win_rates[r][c] is None else win_rates[r][c] for c in order] for r in order],
        dtype=float,
    )
    fig, ax = plt.subplots(figsize=(0.75 * len(order) + 2.2, 0.6 * len(order) + 1.4))
    image = ax.imshow(grid, cmap="cividis", vmin=0, vmax=1)
    for i in range(len(order)):
        for j in range(len(order)):
            if not np.isnan(grid[i, j]):
                colour = "black" if grid[i, j] > 0.55 else "white"
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", color=colour)
    ax.set_xticks(range(len(order)), order, rotation=35, ha="right")
    ax.set_yticks(range(len(order)), order)
    ax.set_xlabel("opponent")
    ax.set_title("Win rate of the row system against the column system")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return _png(fig)


def confusion(matrix: Confusion | None) -> bytes | None:
    """Judge label (rows) against human label (columns), counts of comparisons."""
    if not matrix:
        return None
    import numpy as np

    plt = _pyplot()
    counts = np.array(matrix.counts, dtype=float)
    labels = [str(x) for x in matrix.labels]
    fig, ax = plt.subplots(figsize=(3.6, 3.1))
    image = ax.imshow(counts, cmap="cividis")
    top = counts.max() or 1.0
    for i in range(len(labels)):
        for j in range(len(labels)):
            colour = "black" if counts[i, j] > 0.55 * top else "white"
            ax.text(j, i, f"{int(counts[i, j])}", ha="center", va="center", color=colour)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel(f"{matrix.columns} label")
    ax.set_ylabel(f"{matrix.rows} label")
    ax.set_title("Judge vs human labels")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return _png(fig)


_BEHAVIOUR = [
    # (title, field, colour, ideal): where a judge without that bias would be.
    ("position consistency", "position_consistency", BLUE, 1.0),
    ("first-slot win rate", "first_slot_win_rate", ORANGE, 0.5),
    ("longer answer wins", "verbosity_preference", GREEN, 0.5),
]


def judge_bias(judges: Mapping[str, JudgeBehaviour]) -> bytes | None:
    """`judge_bias_figure` as PNG."""
    fig = judge_bias_figure(judges)
    return None if fig is None else _png(fig)


def judge_bias_figure(judges: Mapping[str, JudgeBehaviour]) -> Any:
    """One panel per metric, one bar per judge, a dashed line at the metric's own ideal:
    position consistency 1.0 (the same verdict in both orders), first-slot win rate 0.5 (no
    position bias), longer answer wins 0.5 (no length preference). None without a judge
    judged in both orders."""
    shown = {k: v for k, v in judges.items() if v.position_consistency is not None}
    if not shown:
        return None
    plt = _pyplot()
    names = list(shown)
    fig, axes = plt.subplots(
        1, len(_BEHAVIOUR), figsize=(8.4, 0.32 * len(names) + 1.3), sharey=True, squeeze=False
    )
    ys = list(range(len(names)))
    for ax, (title, key, colour, ideal) in zip(axes[0], _BEHAVIOUR, strict=True):
        values = [getattr(shown[n], key) for n in names]
        ax.barh(ys, [v or 0.0 for v in values], height=0.6, color=colour)
        for y, v in zip(ys, values, strict=True):
            ax.text((v or 0.0) + 0.02, y, "n/a" if v is None else f"{v:.2f}", va="center")
        ax.axvline(ideal, color="black", lw=1.0, ls="--")
        ax.set_xlim(0, 1.15)
        ax.set_title(f"{title}\n(dashed: ideal {ideal:.1f})", fontsize=9)
    axes[0][0].set_yticks(ys, names)
    axes[0][0].invert_yaxis()  # the first judge on top, as in the table (the axes share y)
    fig.suptitle("Judge behaviour", fontsize=10)
    fig.tight_layout()
    return fig


def strata_multiples(
    oriented: Mapping[str, Sequence[Neighbour | None]], pairs: list[tuple[str, str]], column: str
) -> bytes | None:
    """One small panel per stratum: the neighbouring pairs' differences with intervals, as
    `summary.json` holds them (decision.neighbours_by_stratum: upper - lower, None when a
    stratum lacks the pair)."""
    if not oriented or not pairs:
        return None
    plt = _pyplot()
    strata = list(oriented)
    cols = min(4, len(strata))
    rows = -(-len(strata) // cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(2.6 * cols, 0.3 * len(pairs) * rows + 1.2 * rows), squeeze=False
    )
    for ax, stratum in zip(axes.flat, strata, strict=False):
        # Top to bottom in ranking order: the first pair on the highest row.
        for y, c in enumerate(reversed(oriented[stratum])):
            if c is None:
                continue
            colour = BLUE if c.told_apart else GREY
            if c.ci_low is not None and c.ci_high is not None:
                ax.plot([c.ci_low, c.ci_high], [y, y], color=colour, lw=2)
            ax.plot(c.diff, y, "o", color=colour, ms=4)
        ax.axvline(0, color="black", lw=0.8, ls="--")
        ax.set_xlim(-1.05, 1.05)
        ax.set_title(f"{column} = {stratum}", fontsize=9)
        ax.set_yticks(range(len(pairs)), [f"{a} - {b}" for a, b in reversed(pairs)])
        if ax not in axes[:, 0]:
            ax.set_yticklabels([])
    for ax in list(axes.flat)[len(strata) :]:
        ax.set_visible(False)
    fig.suptitle("Neighbouring systems of the ranking, per stratum (net win rate)", fontsize=10)
    fig.tight_layout()
    return _png(fig)
