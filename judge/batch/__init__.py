"""Batch mode: judges' requests sent through the providers' batch APIs (OpenAI Batch,
Anthropic Message Batches, Gemini Batch API) at about half the price. `engine` drives them,
`ledger` records them in the run store, `api` is the interface the adapters implement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from judge.config.run_config import JudgeSpec, RunConfig

__all__ = ["in_batch_mode", "synchronous_judges"]


def synchronous_judges(judges: Sequence[JudgeSpec]) -> frozenset[str] | None:
    """The judges a runner sends itself when some are in batch mode; None when none is (the
    runner then sends every pending request)."""
    if all(j.mode == "sync" for j in judges):
        return None
    return frozenset(j.model for j in judges if j.mode == "sync")


def in_batch_mode(config: RunConfig) -> RunConfig:
    """`config` with every judge in batch mode (`judge run --batch`); a `ConfigError` naming
    the judges that have no provider batch API."""
    from judge.config.run_config import BATCH_PROVIDERS
    from judge.errors import ConfigError

    unable = [j.model for j in config.judges if j.provider not in BATCH_PROVIDERS]
    if unable:
        raise ConfigError(
            f"--batch: {', '.join(unable)} cannot run in batch mode (only openai/..., "
            "anthropic/... and google/... judges have a provider batch API); set mode: batch "
            "on the judges that can in the config instead"
        )
    # A flex tier is synchronous: in batch mode the batch discount takes its place.
    judges = [j.model_copy(update={"mode": "batch", "service_tier": None}) for j in config.judges]
    return config.model_copy(update={"judges": judges})
