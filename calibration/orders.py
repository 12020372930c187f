"""Both presentation orders of one pairwise comparison -> one judgment.

The rule is the runner's (`judge.analysis.aggregate` calls `combine_orders`), so a judge table
brought in
with an `order` column is combined exactly as a run combines its own two requests: both orders
agree -> that label; they disagree -> a tie (or no judgment, with `inconsistent="drop"`); one
order has no verdict -> the other stands alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # a run's aggregation combines orders without loading numpy and pandas
    import numpy as np
    import pandas as pd

Inconsistent = Literal["tie", "drop"]
ORDERS: tuple[str, str] = ("AB", "BA")
"""Presentation orders as the runner writes them: AB shows the pair's first slot first."""
TIE = "tie"


@dataclass(frozen=True)
class Combined:
    label: str | None
    """The combined label (a winner or `tie`); None when no order has one, or when the orders
    disagree and `inconsistent="drop"`."""
    consistent: bool | None
    """Both orders have a label and they agree; None when fewer than two have one."""
    orders: int
    """Orders with a label (0, 1 or 2)."""


def combine_orders(
    ab: str | None, ba: str | None, *, inconsistent: Inconsistent = "tie"
) -> Combined:
    """One judgment from the labels of the AB and BA orders (None: that order has none).

    Labels must name the same thing in both orders (a system, or a slot of the *pair* rather
    than of the presentation), so that agreeing orders compare equal.
    """
    present = [label for label in (ab, ba) if label is not None]
    consistent = (ab == ba) if len(present) == 2 else None
    if not present:
        label = None
    elif consistent is False:
        label = TIE if inconsistent == "tie" else None
    else:
        label = present[0]
    return Combined(label, consistent, len(present))


@dataclass(frozen=True)
class OrderCounts:
    """How a judge table's presentation orders were combined (see `combine_orders`)."""

    both_orders: int
    """Keys judged in both orders (each with a verdict)."""
    disagreed: int
    """Of those, keys whose two orders disagree: combined to a tie."""
    one_order: int
    """Keys with a verdict in one order only: that verdict stands alone."""
    decided: int = 0
    """Judgments (rows, each order apart) naming a winner."""
    first_won: int = 0
    """Of those, judgments won by the response shown first."""

    @property
    def position_consistency(self) -> float | None:
        """Share of keys judged in both orders whose two orders agree (None: no such key)."""
        if not self.both_orders:
            return None
        return (self.both_orders - self.disagreed) / self.both_orders

    @property
    def first_slot_rate(self) -> float | None:
        """Share of decided judgments won by the response shown first: 0.5 for a judge
        without position bias (None: no decided judgment)."""
        return self.first_won / self.decided if self.decided else None

    def note(self) -> str:
        text = (
            f"judge orders: {self.both_orders} keys judged in both orders (AB and BA) were "
            f"combined into one judgment each, {self.disagreed} of them disagreed and count as "
            f"a tie; {self.one_order} keys had one order only"
        )
        if self.position_consistency is not None:
            text += f"; position consistency {self.position_consistency:.1%}"
        if self.first_slot_rate is not None:
            text += (
                f"; the response shown first won {self.first_slot_rate:.1%} of "
                f"{self.decided} decided judgments (0.5 without position bias)"
            )
        return text


def parse_orders(values: pd.Series) -> tuple[np.ndarray, int | None]:
    """Order values upper-cased, and the position of the first that is not AB or BA."""
    import numpy as np

    text = values.astype(str).str.strip().str.upper()
    bad = np.flatnonzero(~text.isin(ORDERS).to_numpy())
    return text.to_numpy(), (int(bad[0]) if len(bad) else None)


def combine_table_orders(
    table: pd.DataFrame, key_cols: list[str]
) -> tuple[pd.DataFrame, OrderCounts]:
    """One row per key of a normalised judge table with an `order` column (AB or BA, at most
    one row per key and order, checked by the caller) and `first_won` (`normalise` adds it):
    the first row's other columns, and `label` combined by `combine_orders` (a disagreement
    is a tie, the runner's default)."""
    import pandas as pd

    first = table.drop_duplicates(key_cols).drop(columns=["label", "order", "first_won"])
    wide = table.pivot(index=key_cols, columns="order", values="label")
    wide = wide.reindex(columns=list(ORDERS))
    pairs = wide.astype(object).where(wide.notna(), None).to_numpy()
    combined = [combine_orders(ab, ba) for ab, ba in pairs]
    labels = wide.index.to_frame(index=False)
    labels["label"] = pd.Series([c.label for c in combined], dtype=object)
    out = first.merge(labels, on=key_cols, how="left", sort=False)
    counts = OrderCounts(
        both_orders=sum(c.orders == 2 for c in combined),
        disagreed=sum(c.consistent is False for c in combined),
        one_order=sum(c.orders == 1 for c in combined),
        decided=int(table["first_won"].notna().sum()),
        first_won=int((table["first_won"] == True).sum()),  # noqa: E712 (object column)
    )
    return out.reset_index(drop=True), counts
