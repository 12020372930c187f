"""`data.source`: where a run's items and responses come from when they are another tool's files
(an Inspect AI log, promptfoo results, lm-evaluation-harness samples, a Hugging Face dataset)
rather than the project's own tables. `judge import KIND SOURCE` takes the same keys; the
importers that read them are `judge.inputs.importers`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ImportKind = Literal["inspect", "promptfoo", "lm-eval", "hf"]
"""The tools whose output files become items and responses tables."""

IMPORT_KINDS: tuple[str, ...] = ("inspect", "promptfoo", "lm-eval", "hf")

HF_COLUMNS = ("item_id", "prompt", "reference", "system", "output")
"""What a Hugging Face dataset's column map may name."""

_HF_URI = re.compile(
    r"hf://(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)(?:@(?P<revision>[^:@\s]+))?(?::(?P<split>[^:@\s]+))?"
)
_HF_ONLY = ("dataset", "columns", "system", "strata", "cache_dir")


class ImportSource(BaseModel):
    """Another tool's output files, read into items and responses tables when the run is
    prepared (into the run dir's `imported/`), as `judge import` writes them."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    kind: ImportKind
    """`inspect` (Inspect AI `.eval`/`.json` logs), `promptfoo` (`promptfoo eval -o
    results.json` or `.jsonl`), `lm-eval` (lm-evaluation-harness `--log_samples` files or their
    results directories), `hf` (a Hugging Face dataset's Parquet files)."""
    path: list[Path] = Field(default_factory=list)
    """The files or directories to read (inspect, promptfoo, lm-eval): one path or a list; the
    logs of one task by several models merge into one table of items."""
    dataset: str | None = None
    """hf: `hf://org/name@revision:split` (revision default `main`, split default `train`;
    `subset/split` for a dataset with subsets)."""
    columns: dict[str, str] = Field(default_factory=dict)
    """hf: which columns hold item_id, prompt, reference, system and output, e.g. `{prompt:
    question, output: answer}`; prompt and output are required, item_id defaults to the row
    number."""
    system: str | None = None
    """hf: the system's name when the dataset holds one system's outputs and no system
    column."""
    strata: list[str] = Field(default_factory=list)
    """hf: columns kept as item strata (results are broken down by them)."""
    cache_dir: Path | None = None
    """hf: the Hugging Face cache to read (default: huggingface_hub's, `HF_HOME`);
    `HF_HUB_OFFLINE=1` reads it without the network."""

    @field_validator("path", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str | Path) else value

    @field_validator("columns")
    @classmethod
    def _known_columns(cls, columns: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(columns) - set(HF_COLUMNS))
        if unknown:
            raise ValueError(
                f"columns maps {', '.join(map(repr, unknown))}; a dataset's column map names "
                f"{', '.join(HF_COLUMNS)}"
            )
        blank = [name for name, column in columns.items() if not column.strip()]
        if blank:
            raise ValueError(f"columns.{blank[0]} is empty: give the column's name")
        return columns

    @model_validator(mode="after")
    def _keys_of_its_kind(self) -> ImportSource:
        # By value, not by what was written: a stored config spells every key at its default.
        given = [name for name in _HF_ONLY if getattr(self, name)]
        if self.kind != "hf":
            if given:
                raise ValueError(f"{given[0]} is a key of kind hf, not of kind {self.kind}")
            if not self.path:
                raise ValueError(f"kind {self.kind} reads files: give path (a file or a list)")
            return self
        if self.path:
            raise ValueError("kind hf reads a dataset: give dataset: hf://org/name, not path")
        if self.dataset is None:
            raise ValueError("kind hf needs dataset: hf://org/name@revision:split")
        hf_dataset(self.dataset)
        for needed in ("prompt", "output"):
            if needed not in self.columns:
                raise ValueError(f"kind hf needs columns.{needed}: the column that holds it")
        if ("system" in self.columns) == (self.system is not None):
            raise ValueError(
                "kind hf needs the system's name: either columns.system (a column naming each "
                "row's system) or system: NAME (one system), not both"
            )
        return self

    def resolved(self, base: Path) -> ImportSource:
        """Relative paths made absolute against `base` (the config's directory)."""

        def fix(path: Path) -> Path:
            return path if path.is_absolute() else (base / path).resolve()

        update: dict[str, Any] = {"path": [fix(p) for p in self.path]}
        if self.cache_dir is not None:
            update["cache_dir"] = fix(self.cache_dir)
        return self.model_copy(update=update)


def hf_dataset(uri: str) -> tuple[str, str, str]:
    """(repo id, revision, split) of `hf://org/name@revision:split`; ValueError naming the
    form otherwise."""
    match = _HF_URI.fullmatch(uri.strip())
    if match is None:
        raise ValueError(
            f"dataset {uri!r} is not of the form hf://org/name@revision:split "
            "(revision and split optional: main, train)"
        )
    return match["repo"], match["revision"] or "main", match["split"] or "train"
