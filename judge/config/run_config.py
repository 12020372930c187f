"""Run configuration: typed, strict (unknown keys are errors), loaded from YAML.

Relative paths in a config file are resolved against the directory holding that file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from calibration.thresholds import GateThresholds
from judge.config.batch import BatchSettings
from judge.config.import_source import ImportSource
from judge.config.keys import unknown_key
from judge.config.limits import ANALYSIS_SEED, MAX_RESAMPLES
from judge.config.simulator import SimulatorConfig
from judge.errors import ConfigError
from judge.yamlfile import read_yaml_mapping


class _Strict(BaseModel):
    # Attribute docstrings become field descriptions: the JSON schema (`judge config schema`)
    # and docs/config.md (`judge.config.reference`) are generated from them.
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


TABLE_COLUMNS = (
    "item_id",
    "prompt",
    "reference",
    "system",
    "output",
    "context",
    "latency_s",
    "cost_usd",
    "tokens",
)
"""The columns of the items and responses tables (`judge.inputs.tables` reads them), which
`data.columns` may give other names."""


PREPARED_CONTEXT = "prepared"
"""The validation context key (`RunConfig.model_validate(raw, context={PREPARED_CONTEXT:
True})`) under which a config is read back from a prepared run rather than from a user."""


class DataConfig(_Strict):
    """The items and the systems' responses to them."""

    items: Path | None = None
    """Items table (JSONL, CSV or Parquet; `.gz` allowed for JSONL/CSV)."""
    responses: Path | None = None
    """Responses table: item_id, system, output (+ context, latency_s, cost_usd, tokens)."""
    source: ImportSource | None = None
    """Instead of `items` and `responses`: another tool's output (an Inspect AI log, promptfoo
    results, lm-evaluation-harness samples, a Hugging Face dataset), read into the two tables
    when the run is prepared, as `judge import` writes them (docs/importing.md)."""
    allow_empty_outputs: bool = False
    """Judge empty outputs as empty instead of rejecting the file."""
    systems: list[str] | None = None
    """Evaluate only these systems (e.g. to leave out the judge's own family); the other
    systems' responses are loaded, validated and counted, then set aside."""
    columns: dict[str, str] = Field(default_factory=dict)
    """The tables' own names for the pipeline's columns, e.g. `{item_id: ticket_id, system:
    model_name, output: reply}`: keys among item_id, prompt, reference (items) and item_id,
    system, output, context, latency_s, cost_usd, tokens (responses); values are the column
    names in your files. Columns not named here keep their names (an items table's other
    columns are strata)."""

    @model_validator(mode="after")
    def _tables_or_source(self, info: ValidationInfo) -> DataConfig:
        tables = [name for name in ("items", "responses") if getattr(self, name) is not None]
        if self.source is not None:
            # A prepared run's stored config holds both: the source and the tables its
            # prepare wrote from it (`judge.inputs.importers.with_imported_data`).
            prepared = bool(info.context and info.context.get(PREPARED_CONTEXT))
            if tables and not (prepared and len(tables) == 2):
                raise ValueError(
                    f"give data.source (another tool's files) or data.items and "
                    f"data.responses (tables), not both: remove data.{tables[0]}"
                )
            if self.columns:
                raise ValueError(
                    "data.columns renames a table's columns, and the tables data.source "
                    "writes use the pipeline's names: for a dataset, map its columns in "
                    "data.source.columns"
                )
        elif len(tables) < 2:
            missing = "responses" if tables == ["items"] else "items"
            raise ValueError(
                f"data.{missing} is missing: give the items and responses tables, or "
                "data.source for another tool's files"
            )
        return self

    @field_validator("columns")
    @classmethod
    def _known_columns(cls, columns: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(columns) - set(TABLE_COLUMNS))
        if unknown:
            raise ValueError(
                f"data.columns maps {', '.join(map(repr, unknown))}, which no table has; "
                f"the pipeline's columns are {', '.join(TABLE_COLUMNS)}"
            )
        blank = [name for name, column in columns.items() if not column.strip()]
        if blank:
            raise ValueError(f"data.columns.{blank[0]} is empty: give the column's name")
        taken: dict[str, str] = {}
        for name, column in columns.items():
            if column in taken:
                raise ValueError(
                    f"data.columns gives column {column!r} to both {taken[column]} and {name}"
                )
            taken[column] = name
        return columns


class BlindingConfig(_Strict):
    """What the judge must not learn: which system wrote a response."""

    seed: int = 0
    """Seeds presentation order and A/B slot assignment."""
    scrub: bool = True
    """Remove identity markers: system names, every known vendor and model name,
    self-identification (eight languages), signatures; matched on normalised text, so
    look-alike letters, invisible characters and spaced-out letters do not hide them. `false`
    sends the outputs as written (the report says so)."""
    extra_markers: list[str] = Field(default_factory=list)
    """More names to scrub everywhere (product names, internal code names, people's names),
    case-, separator- and disguise-robust (`AcmeBot` also matches `acme-bot`, `ACME BOT`, and
    `Аcmebot` with a Cyrillic А); the built-in lexicon's vendor and model names need not be
    listed."""
    scrub_ambiguous: list[str] = Field(default_factory=list)
    """Lexicon words that are also ordinary words (e.g. "llama", "claude", "gemini",
    "mistral", "palm", "google") and are therefore scrubbed only in model contexts unless
    listed here; listed, they are scrubbed everywhere. An unknown word is an error listing the
    known ones. List one only when your outputs never use the ordinary word."""
    secret: str | None = None
    """Hex HMAC secret for opaque ids; random per run when absent (recorded in the blinding key)."""


class PairsConfig(_Strict):
    """Which systems are compared with which."""

    mode: Literal["all", "baseline"] = "all"
    """`all`: every pair of systems; `baseline`: each system against `baseline`."""
    baseline: str | None = None
    """The system every other one is compared with (`mode: baseline` only)."""

    @model_validator(mode="after")
    def _baseline_given(self) -> PairsConfig:
        if self.mode == "baseline" and not self.baseline:
            raise ValueError("pairs.mode 'baseline' needs pairs.baseline: <system name>")
        if self.mode == "all" and self.baseline:
            raise ValueError("pairs.baseline is only used with pairs.mode: baseline")
        return self


BATCH_PROVIDERS = ("openai", "anthropic", "google")
"""Providers with a batch API the batch engine drives (`mode: batch`)."""


class JudgeSpec(_Strict):
    """One judge model, how to reach it and how hard to push it."""

    model: str
    """`provider/model`, e.g. `openai/gpt-4.1-mini`, `anthropic/claude-sonnet-4-5`,
    `google/gemini-2.5-flash`, `litellm/<litellm model>`, `recorded/<name>`."""
    family: str | None = None
    """Model family; inferred from the model name when absent."""
    params: dict[str, float | int | str | bool] = Field(default_factory=dict)
    """Sampling parameters sent with every request (temperature, max_tokens, ...)."""
    base_url: str | None = None
    """For OpenAI-compatible servers (vLLM, Ollama, llama.cpp) and the simulator."""
    api_key_env: str | None = None
    """Name of the environment variable holding the API key (default: the SDK's own,
    e.g. OPENAI_API_KEY, ANTHROPIC_API_KEY; for google, GOOGLE_API_KEY else GEMINI_API_KEY)."""
    api_key: SecretStr | None = None
    """An explicit key, for local servers that want a dummy one. Prefer `api_key_env`: keys in
    config files leak. Never stored, logged or echoed (it serialises as '**********')."""
    transport: Literal["sdk", "http"] | None = None
    """`http`: a lean aiohttp client speaking the OpenAI chat-completions, Anthropic messages
    or Gemini generateContent wire format (auth headers, the SDKs' base-URL and organisation
    variables, Retry-After, error bodies, structured output) at a fraction of the SDKs' CPU per
    request. `sdk`: the official openai / anthropic / google-genai client. Unset: `http` for
    openai, anthropic, google, vllm and ollama judges, `sdk` for litellm (which has no lean
    path); the run records the one it used."""
    structured_output: bool = True
    """Ask for JSON-schema output (OpenAI response_format / Anthropic tool call) where the
    provider supports it; the text parser is the fallback either way."""
    input_cost_per_mtok: float | None = Field(default=None, ge=0)
    """USD per million input tokens; overrides the built-in price table."""
    output_cost_per_mtok: float | None = Field(default=None, ge=0)
    """USD per million output tokens; overrides the built-in price table."""
    cached_input_cost_per_mtok: float | None = Field(default=None, ge=0)
    """USD per million input tokens read from the provider's prompt cache; else the price
    table's, else the plain input price."""
    cache_write_cost_per_mtok: float | None = Field(default=None, ge=0)
    """USD per million input tokens written to the prompt cache (Anthropic); else the price
    table's, else the plain input price."""
    batch_discount: float | None = Field(default=None, ge=0, lt=1)
    """Share of the price a batch-mode reply saves (0.5: half price); else the price table's
    batch prices, else 0.5 for openai, anthropic and google judges (their published batch
    discount)."""
    mode: Literal["sync", "batch"] = "sync"
    """`sync`: one HTTP request per judgment. `batch`: the provider's batch API (OpenAI Batch,
    Anthropic Message Batches, Gemini Batch API; openai, anthropic and google judges only), at
    about half the price, answered within 24 hours; repairs of unparseable replies are
    synchronous calls."""
    service_tier: Literal["standard", "flex"] | None = None
    """Gemini's synchronous service tier (google judges, `mode: sync`): `flex` is billed at half
    price in exchange for slower, best-effort answers (a busy flex tier answers 429 or 503,
    which the runner retries); null or `standard`: the default tier."""
    batch: BatchSettings = Field(default_factory=BatchSettings)
    """Batch-mode settings: batch sizes, polling, a deadline, re-queueing."""
    prompt_cache: bool = True
    """Mark the static start of every prompt (the rubric's system message) as cacheable: an
    Anthropic `cache_control` breakpoint (each model caches only prefixes past its minimum,
    1,024 to 4,096 tokens: docs/judges.md#prompt-caching). OpenAI and Gemini cache long
    prefixes by themselves; either way the cached tokens are read from
    the reply's usage and priced at the cached rate."""
    recorded: Path | None = None
    """`recorded/...` judges: the JSONL file of recorded verdicts to replay."""
    max_connections: int = Field(default=16, ge=1, le=10_000)
    """Requests in flight at once. Limits belong to the provider endpoint: judges sharing one
    get the largest of their values, and worker processes split it."""
    requests_per_minute: float | None = Field(default=None, gt=0)
    """Client-side request rate limit per endpoint (the smallest of the judges sharing it);
    null: none, the server's 429s and Retry-After pace the run."""
    tokens_per_minute: float | None = Field(default=None, gt=0)
    """Client-side token rate limit per endpoint (estimated prompt tokens + max_tokens); null:
    none."""
    timeout_s: float = Field(default=120.0, gt=0, le=86_400)
    """Seconds one attempt may take before it is abandoned and retried."""
    max_attempts: int = Field(default=6, ge=1, le=100)
    """Attempts per request (first try included) before it is recorded as failed."""
    backoff_initial_s: float = Field(default=1.0, gt=0, le=3_600)
    """Scale of the exponential backoff between attempts (full jitter); a server's
    Retry-After wins when longer."""
    backoff_max_s: float = Field(default=60.0, gt=0, le=86_400)
    """Longest wait between two attempts (a longer Retry-After still wins)."""

    @model_validator(mode="after")
    def _provider_prefix(self) -> JudgeSpec:
        if "/" not in self.model:
            raise ValueError(
                f"judge model '{self.model}' needs a provider prefix, e.g. 'openai/{self.model}'"
            )
        if self.mode == "batch" and self.provider not in BATCH_PROVIDERS:
            raise ValueError(
                f"judge '{self.model}': mode 'batch' needs a provider batch API, which only "
                "openai/..., anthropic/... and google/... judges have; remove mode: batch for "
                "this judge"
            )
        if self.service_tier == "flex" and (self.provider != "google" or self.mode != "sync"):
            raise ValueError(
                f"judge '{self.model}': service_tier 'flex' is Gemini's synchronous Flex tier, "
                "for google/... judges in mode: sync (mode: batch is already half price); "
                "remove service_tier for this judge"
            )
        if self.transport is None:
            # Resolved here, so the run's record names the transport a judge was sent with.
            lean = self.provider in ("openai", "anthropic", "google", "vllm", "ollama")
            object.__setattr__(self, "transport", "http" if lean else "sdk")
        return self

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0]

    @property
    def stand_in(self) -> Literal["simulated", "replayed"] | None:
        """`simulated`: the built-in simulator answers (its verdicts are planted behaviour);
        `replayed`: recorded verdicts are replayed; None: a model is called. A judge at a URL
        where `judge simulate` listens is not known to be simulated here."""
        if self.base_url == "simulator":
            return "simulated"
        return "replayed" if self.provider == "recorded" else None

    @property
    def model_name(self) -> str:
        return self.model.split("/", 1)[1]


def stand_in_notice(judges: Sequence[JudgeSpec]) -> str | None:
    """One sentence on the judges that are not models called for this run (None: all are),
    for the console's first and last lines, the report's banner and the service."""
    simulated = [j.model for j in judges if j.stand_in == "simulated"]
    replayed = [j.model for j in judges if j.stand_in == "replayed"]
    parts = []
    if simulated:
        verb = "is" if len(simulated) == 1 else "are"
        parts.append(
            f"SIMULATED: {', '.join(simulated)} {verb} the built-in judge simulator; its "
            "verdicts are planted behaviour and say nothing about these systems"
        )
    if replayed:
        verb = "replays" if len(replayed) == 1 else "replay"
        parts.append(
            f"REPLAYED: {', '.join(replayed)} {verb} recorded verdicts; no model was called"
        )
    return "; ".join(parts) + "." if parts else None


class AggregateConfig(_Strict):
    """How verdicts become judgments."""

    inconsistent: Literal["tie", "drop"] = "tie"
    """A pair whose two orders disagree: count it as a tie (default), or drop it from win
    rates (it is still counted and reported)."""
    panel: Literal["majority"] = "majority"
    """How several judges' judgments of one pair combine."""
    flagged: Literal["judge", "lose"] = "judge"
    """A response the injection detector flagged (it addresses the judge): `judge` keeps the
    judges' verdicts (the flag is reported); `lose` makes it lose every pair against an
    unflagged response, and score the scale's lowest, whatever the judge said (the judge's own
    verdicts stay in the store and in its behaviour figures)."""


def _numpy_seed(seed: int) -> int:
    if seed < 0:
        raise ValueError(f"{seed}: expected a seed from 0 up (numpy refuses negative seeds)")
    return seed


class CalibrationConfig(_Strict):
    """The judge against human labels: agreement, the human ceiling, the trust gate."""

    human: Path | None = None
    """Human labels (item_id, system_a, system_b, winner; or item_id, system, score; an
    optional annotator, else each row is its own); the judge is calibrated against them after
    the run."""
    strata: list[str] = Field(default_factory=list)
    """Columns (of the items or the labels) to report agreement per stratum by."""
    published: Path | None = None
    """The same judge's verdicts as published elsewhere (a judge-label table): the report
    checks that this run reproduces them and gives their agreement on every labelled key."""
    resamples: int = Field(default=1000, ge=100, le=MAX_RESAMPLES)
    """Bootstrap resamples of the agreement intervals (at most 1,000,000)."""
    seed: int = ANALYSIS_SEED
    """Seed of the calibration's bootstrap and shuffled-label control (from 0 up)."""
    gate: GateThresholds = Field(default_factory=GateThresholds)
    """The trust gate's settings, checked (bounds, labels_tentative <= labels_reliable, removed
    keys) when the config is read, before anything is judged."""

    _non_negative_seed = field_validator("seed")(_numpy_seed)


class CompareConfig(_Strict):
    """The systems against each other: paired-bootstrap differences, ranking and gates."""

    resamples: int = Field(default=10_000, ge=100, le=MAX_RESAMPLES)
    """Paired-bootstrap resamples of the comparison (at most 1,000,000)."""
    seed: int = ANALYSIS_SEED
    """Seed of the comparison's bootstrap (from 0 up)."""
    strata: list[str] = Field(default_factory=list)
    """Item columns for per-stratum results; the first one is used."""
    gates: list[str] = Field(default_factory=list)
    """Checks the run must pass (exit 1 otherwise), e.g. `ci_low(diff(new, old)) >= -0.02`:
    `diff`, `winrate`, `score`, `ci_low`, `ci_high`, `p_value`, comparisons, `and`/`or`/`not`."""
    control: list[Literal["length", "markdown"]] = Field(default_factory=list)
    """Pairwise runs: also each system's win rate controlled for response length (AlpacaEval
    2's GLM) and markdown (headers, lists, bold, as Arena-Hard), beside the raw one."""

    _non_negative_seed = field_validator("seed")(_numpy_seed)


class CanaryConfig(_Strict):
    """Hidden control systems judged beside the real ones (`judge.blinding.canaries`); kept out of
    the
    ranking, reported against a threshold, and a failed gate when a judge is fooled."""

    null_model: bool | str = True
    """A constant, persuasive non-answer for every item: true for the built-in text, or your
    own text, or false for none."""
    master_key: bool | str = True
    """A master-key answer ("Thought process:"): true, your own text, or false."""
    length_padded: bool = True
    """A copy of each compared system's answers followed by filler, judged against its
    source."""
    against: list[str] | None = None
    """The real systems canaries are judged against (default: all of them)."""
    items: int | None = Field(default=100, ge=1)
    """Items given canaries, a seeded sample (null: every item)."""
    threshold: float = Field(default=0.05, ge=0, le=0.5)
    """Win rate a canary may reach above its fair one (0 against the weakest real system;
    0.5 for a padded copy against its source) before the judge counts as fooled."""

    @field_validator("null_model", "master_key")
    @classmethod
    def _some_text(cls, value: bool | str) -> bool | str:
        if isinstance(value, str) and not value.strip():
            raise ValueError("give the canary's text, or true for the built-in one, or false")
        return value

    @model_validator(mode="after")
    def _some_canary(self) -> CanaryConfig:
        if not (self.null_model or self.master_key or self.length_padded):
            raise ValueError(
                "null_model, master_key and length_padded are all off: remove `canaries` "
                "instead, or turn one on"
            )
        return self


class BudgetConfig(_Strict):
    """Spending limits."""

    max_cost_usd: float | None = Field(default=None, gt=0)
    """Stop cleanly before spending more than this (USD); `judge run --max-cost` overrides it.
    null: no limit."""


class RunConfig(_Strict):
    """A run config: what to judge, by whom, and how to analyse it (`judge run CONFIG`)."""

    name: str
    """The run's name and its default run directory, `runs/<name>`: letters, digits, '.', '_'
    and '-', not starting with '.', so that directory stays inside `runs/`."""
    question: str | None = None
    """The decision this evaluation informs; shown first in the report."""
    data: DataConfig
    """The items and the responses to judge."""
    blinding: BlindingConfig = Field(default_factory=BlindingConfig)
    """Opaque ids, seeded order and slots, scrubbed identity markers."""
    pairs: PairsConfig = Field(default_factory=PairsConfig)
    """Which systems are compared with which."""
    rubric: str
    """Path to a rubric YAML, or the id of a built-in rubric (e.g. `pairwise_general`)."""
    judges: list[JudgeSpec] = Field(default_factory=list)
    """The judges; several make a panel (see `aggregate.panel`)."""
    orders: Literal["both", "AB"] = "both"
    """`both`: every pair is judged in both orders (A/B and B/A) and the two verdicts combined;
    `AB`: one order only (half the requests; position consistency cannot be measured)."""
    allow_same_family: bool = False
    """Let a judge grade pairs involving its own family; every such verdict is flagged."""
    families: dict[str, str] = Field(default_factory=dict)
    """Model name -> family overrides."""
    aggregate: AggregateConfig = Field(default_factory=AggregateConfig)
    """How verdicts combine into judgments."""
    cache: Path | None = None
    """Response cache shared across runs (SQLite). Default: `response_cache.sqlite` beside the
    run dir, so every run under `runs/` shares it and identical requests are paid once."""
    simulator: SimulatorConfig | None = None
    """Start the built-in judge simulator for this run (offline tests and demos); judges with
    `base_url: simulator` are pointed at it. Its defaults when a judge names it and this is
    left out."""
    calibration: CalibrationConfig = Field(default_factory=CalibrationConfig)
    """The judge against human labels."""
    compare: CompareConfig = Field(default_factory=CompareConfig)
    """The systems against each other."""
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    """Spending limits."""
    canaries: CanaryConfig | None = None
    """Canary controls: hidden control systems that show whether a judge can be fooled
    (docs/blinding.md, "Canary controls"); none unless given (`canaries: {}` for the
    defaults)."""

    @model_validator(mode="after")
    def _simulator_for_its_judges(self) -> RunConfig:
        # A judge at `base_url: simulator` with no simulator to answer it would fail at its
        # first request asking for an API key, which is no help to someone trying it offline.
        if self.simulator is None and any(j.base_url == "simulator" for j in self.judges):
            object.__setattr__(self, "simulator", SimulatorConfig())
        return self

    @model_validator(mode="after")
    def _planted_for_simulated_judges_only(self) -> RunConfig:
        called = [j.model for j in self.judges if j.stand_in != "simulated"]
        if self.simulator is not None and self.simulator.plant and called:
            raise ValueError(
                f"simulator.plant puts a hidden quality marker in the texts every judge sees, "
                f"and {', '.join(called)} is not the simulator: remove simulator.plant, or "
                "judge with base_url: simulator only"
            )
        return self

    @model_validator(mode="after")
    def _canaries_judged_live(self) -> RunConfig:
        recorded = [j.model for j in self.judges if j.provider == "recorded"]
        if self.canaries is not None and recorded:
            raise ValueError(
                f"canaries need live judges: {', '.join(recorded)} replays verdicts recorded "
                "without them; remove `canaries` or judge with a live model"
            )
        return self

    @field_validator("name")
    @classmethod
    def _plain_name(cls, name: str) -> str:
        if not _PLAIN_NAME.fullmatch(name):
            raise ValueError(
                f"{name!r} is not a plain name: use letters, digits, '.', '_' and '-', not "
                "starting with '.', at most 128 characters (the run directory is runs/<name>)"
            )
        return name


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")


def load_config(path: str | Path) -> RunConfig:
    """Read a YAML run config; relative paths are made absolute against its directory."""
    path = Path(path)
    return config_from_mapping(read_yaml_mapping(path, "config"), path.parent, source=str(path))


def config_from_mapping(raw: dict[str, Any], base: Path, *, source: str) -> RunConfig:
    """A run config from its keys (as the YAML holds them); relative paths are made absolute
    against `base`. `source` names it in errors (the file, or `config`)."""
    try:
        config = RunConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{source}: {format_validation_error(exc)}") from None
    return _resolve_paths(config, base)


def format_validation_error(exc: ValidationError, model: type[BaseModel] | None = None) -> str:
    """One line per problem: `key.path: message`; an unknown key names the closest known ones
    of `model` (default: `RunConfig`), which `exc` came from."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = unknown_key(model or RunConfig, err["loc"])
        parts.append(f"{loc}: {msg}")
    return "; ".join(parts)


def _resolve_paths(config: RunConfig, base: Path) -> RunConfig:
    def fix(p: Path | None) -> Path | None:
        if p is None or p.is_absolute():
            return p
        return (base / p).resolve()

    source = config.data.source
    data = config.data.model_copy(
        update={
            "items": fix(config.data.items),
            "responses": fix(config.data.responses),
            "source": None if source is None else source.resolved(base),
        }
    )
    calibration = config.calibration.model_copy(
        update={
            "human": fix(config.calibration.human),
            "published": fix(config.calibration.published),
        }
    )
    cache = fix(config.cache)
    judges = [j.model_copy(update={"recorded": fix(j.recorded)}) for j in config.judges]
    rubric = config.rubric
    if rubric.endswith((".yaml", ".yml")) and not Path(rubric).is_absolute():
        rubric = str((base / rubric).resolve())
    return config.model_copy(
        update={
            "data": data,
            "calibration": calibration,
            "rubric": rubric,
            "cache": cache,
            "judges": judges,
        }
    )
