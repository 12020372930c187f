"""What the operator decides when starting `judge serve` (flags of the same names).

Besides access (tokens, allowed URLs and paths) the settings bound the work one request can
make the server do, each refused with a problem document naming the limit: the size of what
is uploaded (`max_upload_mb`, `max_expanded_mb`, `max_line_kb`), the judge requests a run may
make (`max_requests`), what rendering a rubric may cost (`max_template_output_kb`,
`max_render_s`, `max_render_total_s`), bootstrap resamples (`max_resamples`), and how long
a judge may wait and retry (`max_wait_s`, `max_attempts`). And one token holds at most
`max_running_per_token` worker slots: its other runs wait.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from judge.cluster import Executor
from judge.config.limits import RenderLimits

DEFAULT_DATA_DIR = Path("judge-service")
DEFAULT_PORT = 8000
"""Where `judge serve` listens unless told (`judge simulate` takes 8001)."""
DEFAULT_SAMPLING_PARAMS = (
    "temperature",
    "top_p",
    "top_k",
    "max_tokens",
    "max_completion_tokens",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "stop",
    "reasoning_effort",
)
"""Judge `params` a client may set. Others are refused: some providers (LiteLLM) read routing
and credentials from them (`api_base`, `api_key`), which would send the server's key elsewhere."""


@dataclass(frozen=True)
class ServiceSettings:
    data_dir: Path = DEFAULT_DATA_DIR
    """Run directories, uploads and response caches live here (and the SQLite database when
    `db_url` is not given)."""
    db_url: str | None = None
    """SQLAlchemy URL of the service database; `postgresql://...` uses psycopg 3.
    None: `sqlite:///<data_dir>/service.sqlite`."""
    max_running: int = 2
    """Runs executing at once; more wait in `queued`."""
    max_running_per_token: int | None = None
    """Runs of one token executing at once; its others stay queued, and queued runs of other
    tokens start before them, so one token cannot hold every worker slot while another's run
    waits. None: `max_running - 1` (at least 1)."""
    executor: Executor = Executor.local
    """Where a run's worker process judges it: `local`, in itself; `ray`, in shards over a Ray
    cluster (`judge.cluster`; needs the `ray` extra). A run Ray cannot judge (recorded or
    batch-mode judges) is judged locally, and its worker log says why."""
    ray_address: str | None = None
    """With `executor="ray"`: `auto` (the cluster this machine joined with `ray start`),
    `ray://HOST:10001`, or None: Ray's default for each run's worker (`RayCluster.address`: a
    cluster `ray start` left on this machine, else one started for the run and stopped
    after)."""
    max_upload_mb: float = 100.0
    """Largest request body accepted (all uploaded files together)."""
    max_expanded_mb: float | None = None
    """Largest size of a submission's uploaded files together once decompressed (`.gz` text,
    Parquet data), or of one labels upload: checked before anything reads them, so a small
    compressed file cannot blow up in memory. None: four times `max_upload_mb`."""
    max_line_kb: float = 1024.0
    """Longest line of an uploaded text file (JSONL, CSV, YAML; decompressed), and largest
    single value of an uploaded Parquet file."""
    allow_server_paths: tuple[Path, ...] = ()
    """Directories whose files a JSON-submitted config may reference. Empty: uploads only."""
    allow_base_urls: tuple[str, ...] = ()
    """Judge `base_url`s a client may use (prefix match on whole path segments). `simulator`
    is always allowed: it is started inside the run, on loopback."""
    allow_key_envs: tuple[str, ...] = ()
    """Environment variable names a client's `api_key_env` may name."""
    allow_params: tuple[str, ...] = field(default=DEFAULT_SAMPLING_PARAMS)
    """Judge `params` keys a client may set."""
    cancel_grace_s: float = 10.0
    """After asking a run's process to stop, how long to wait before killing it."""
    max_requests: int = 20_000
    """Judge requests one run may make (pairs x orders x judges), counted when it is
    submitted, before anything is paired, rendered or stored: 413 `limit-exceeded`."""
    max_template_output_kb: float = 64.0
    """Text a rubric template may produce per prompt beyond the texts it renders (those count
    four times over): its output, and every string its filters and operators build. 422."""
    max_render_s: float = 0.5
    """Seconds rendering one prompt from a rubric may take. 422."""
    max_render_total_s: float = 20.0
    """Seconds rendering all prompts of one submission may take together (rubric templates
    only: loading, blinding and storing are not counted). 422."""
    max_resamples: int = 100_000
    """Bootstrap resamples a config (`compare.resamples`, `calibration.resamples`) or an
    on-demand comparison or calibration may ask for. 400."""
    max_wait_s: float = 300.0
    """Longest single wait a config may ask for: a judge's `timeout_s`, `backoff_initial_s`,
    `backoff_max_s` and the interval its `requests_per_minute` or `tokens_per_minute` imply
    (60 / rate); the simulator's `latency.median_s`, `stall_s` (when it stalls) and
    `retry_after_s` (when it answers 429). 400."""
    max_attempts: int = 10
    """Attempts per judge request a config may ask for (`judges[].max_attempts`). 400."""

    @property
    def database_url(self) -> str:
        if self.db_url:
            return self.db_url
        return f"sqlite:///{(self.data_dir / 'service.sqlite').resolve()}"

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)

    @property
    def max_expanded_bytes(self) -> int:
        mb = 4 * self.max_upload_mb if self.max_expanded_mb is None else self.max_expanded_mb
        return int(mb * 1024 * 1024)

    @property
    def max_line_bytes(self) -> int:
        return int(self.max_line_kb * 1024)

    @property
    def running_per_token(self) -> int:
        if self.max_running_per_token is not None:
            return self.max_running_per_token
        return max(1, self.max_running - 1)

    @property
    def render_limits(self) -> RenderLimits:
        return RenderLimits(
            max_template_output_kb=self.max_template_output_kb,
            max_render_s=self.max_render_s,
            max_render_total_s=self.max_render_total_s,
        )
