"""The spend limit of one process's judging (`budget.max_cost_usd`, split over worker
processes): what was spent, what calls in flight may still cost, and what submitted provider
batches will cost, counted as committed from the moment they are submitted (a batch cannot be
stopped half-way for free)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Budget:
    max_usd: float | None
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    """Estimated cost of the synchronous calls in flight."""
    committed_usd: float = 0.0
    """Estimated cost of the batches submitted and not yet collected."""

    def allows(self, estimate_usd: float) -> bool:
        if self.max_usd is None:
            return True
        used = self.spent_usd + self.reserved_usd + self.committed_usd
        return used + estimate_usd <= self.max_usd

    def left(self) -> float | None:
        if self.max_usd is None:
            return None
        return self.max_usd - self.spent_usd - self.reserved_usd - self.committed_usd
