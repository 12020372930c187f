"""Judging on a Ray cluster (`judge run --executor ray`): the run's pending requests sharded by
item over shard actors that run the same runner code as `judge run` (providers, limits,
retries, parsing), their replies streamed back to this process, which stores them in the run
store as a local run does. The store, the cache keys and resume do not change: a run started
here can finish on a cluster and the other way round.

Ray is an optional extra (`pip install 'judge-pipeline[ray]'`), imported only by
`judge.cluster.driver` and the modules it loads."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

from judge.errors import ConfigError

if TYPE_CHECKING:
    from judge.config.run_config import RunConfig

__all__ = ["Executor", "RayCluster", "check_cluster_config", "cluster_refusal", "require_ray"]

INSTALL_HINT = "pip install 'judge-pipeline[ray]'"


class Executor(enum.StrEnum):
    """Where a run is judged (`judge run --executor`, `judge serve --executor`)."""

    local = "local"
    ray = "ray"


@dataclass(frozen=True)
class RayCluster:
    """Where and how a run is judged on Ray."""

    address: str | None = None
    """`auto` (the cluster this machine joined with `ray start`), `ray://host:10001` (a remote
    one), or None: Ray's own default (RAY_ADDRESS, else a cluster `ray start` left running on
    this machine, else a new one on this machine for the run, stopped after it). A connection
    this process already has is used as it is."""
    actors: int | None = None
    """Shard actors (one CPU each). None: one per CPU of the cluster, less the driver's on a
    cluster of one machine, and no more than the judges' connections."""
    shard_requests: int | None = None
    """Requests per shard (whole items: a shard may hold a few more). None: what an actor's
    connections take at once (the judges' `max_connections` over the actors, at least 16).
    Small shards keep what is handed to the actors and not yet stored small: that is what a
    dead actor or driver can have had answered without it reaching the store."""
    shards_per_actor: int = 3
    """Shards an actor works on at once (the next ones start while one finishes its tail)."""
    max_shard_tries: int = 10
    """Times one shard is sent again after its actor died before the run gives up."""


def cluster_refusal(config: RunConfig) -> str | None:
    """Why a cluster cannot judge `config` (None: it can)."""
    recorded = [j.model for j in config.judges if j.recorded is not None]
    if recorded:
        return (
            f"{', '.join(recorded)} replays a file on this machine; run recorded judges with "
            "the local executor"
        )
    keyed = [j.model for j in config.judges if j.api_key is not None]
    if keyed:
        return (
            f"{', '.join(keyed)} has its key in the config, which would travel in Ray's task "
            "specs; give it through the environment of the cluster's workers (api_key_env)"
        )
    batch = [j.model for j in config.judges if j.mode == "batch"]
    if batch:
        return (
            f"{', '.join(batch)} is in batch mode (the provider runs its batches: nothing to "
            "spread over a cluster); run it with the local executor"
        )
    return None


def check_cluster_config(config: RunConfig) -> None:
    """`cluster_refusal`, and Ray missing, as a `ConfigError` before anything starts."""
    refusal = cluster_refusal(config)
    if refusal is not None:
        raise ConfigError(f"--executor ray: {refusal}")
    require_ray()


def require_ray() -> None:
    """Ray importable, else a `ConfigError` naming the install."""
    try:
        import ray  # noqa: F401
    except ImportError as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"--executor ray needs Ray ({why}): {INSTALL_HINT}") from None
