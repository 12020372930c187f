"""A Hugging Face dataset (`hf://org/name@revision:split`) -> items and responses.

The dataset's Parquet files come through `huggingface_hub.snapshot_download` (the `hf`
extra): from the hub, or from the local cache alone with `HF_HUB_OFFLINE=1` (the cache
layout `datasets--org--name/snapshots/<commit>/...` that any earlier download left). The
split's files are those the hub's own conventions name it by: `data/train-00000-of-00001
.parquet`, `train/*.parquet`, `train.parquet`, and under a subset's directory for a dataset
with subsets (`hf://org/name:subset/train`).

A column map says which columns hold item_id, prompt, reference, system and output: one row
per (item, system) in the long layout, or one system's outputs with `system: NAME`. Rows are
read a record batch at a time, only the mapped columns; an item's rows must agree on its
prompt and reference.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from judge.config.import_source import ImportSource, hf_dataset
from judge.errors import DataError
from judge.inputs.importers.optional_deps import optional
from judge.inputs.importers.source_records import ROLES
from judge.inputs.importers.written_tables import Skip, TableWriter, Where

_BATCH_ROWS = 4_096


def import_hf(source: ImportSource, out: Path) -> TableWriter:
    """Read the dataset `source.dataset` with `source.columns` into tables in `out`."""
    assert source.dataset is not None  # the model's validator requires it for kind hf
    repo, revision, split = hf_dataset(source.dataset)
    folder = _snapshot(source, repo, revision)
    files = split_files(folder, split, source.dataset)
    names = {**source.columns, **{f"stratum:{s}": s for s in source.strata}}
    with TableWriter(out, "hf", files) as writer:
        row_number = 0
        for path in files:
            for row, where in _rows(path, names):
                try:
                    _import_row(row, row_number, source, where, writer)
                except Skip as skip:
                    writer.skip(skip.reason)
                row_number += 1
    return writer


def _snapshot(source: ImportSource, repo: str, revision: str) -> Path:
    hub = optional("huggingface_hub", "reading Hugging Face datasets")
    try:
        folder = hub.snapshot_download(
            repo_id=repo,
            repo_type="dataset",
            revision=revision,
            allow_patterns=["*.parquet", "**/*.parquet"],
            cache_dir=source.cache_dir,
        )
    except Exception as exc:  # the hub client's errors (offline, not found, HTTP) are many
        message = str(exc).strip().splitlines()
        raise DataError(
            f"cannot get dataset {repo}@{revision} ({type(exc).__name__}: "
            f"{message[0][:300] if message else 'no message'}); offline, it must be in the "
            "Hugging Face cache (HF_HOME, or data.source.cache_dir) at that revision",
            path=source.dataset,
        ) from None
    return Path(folder)


def split_files(folder: Path, split: str, dataset: str) -> list[Path]:
    """The Parquet files of `split` (`subset/split` for one subset) in a dataset folder."""
    subset, _, name = split.rpartition("/")
    found: dict[str, list[Path]] = {}
    for path in sorted(folder.rglob("*.parquet")):
        parts = path.relative_to(folder).parts
        stem = Path(parts[-1]).name.removesuffix(".parquet")
        if not (name in parts[:-1] or stem == name or stem.startswith(name + "-")):
            continue
        group = parts[0] if len(parts) > 1 and parts[0] not in ("data", name) else ""
        found.setdefault(group, []).append(path)
    if subset:
        found = {subset: found.get(subset, [])}
    if len(found) > 1:
        raise DataError(
            f"split {name!r} is in several subsets ({', '.join(sorted(found))}): name one, "
            f"e.g. {dataset.split(':')[0]}:{sorted(found)[0]}/{name}",
            path=dataset,
        )
    files = next(iter(found.values()), [])
    if not files:
        raise DataError(
            f"no Parquet files of split {split!r} in {folder} (looked for data/{name}-*.parquet, "
            f"{name}/*.parquet, {name}.parquet)",
            path=dataset,
        )
    return files


def _rows(path: Path, names: Mapping[str, str]) -> Iterator[tuple[dict[str, Any], Where]]:
    """Each row of `path` as {map key: value}, reading only the mapped columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    row = 0
    try:
        with pq.ParquetFile(path, buffer_size=1 << 20, pre_buffer=False) as table:
            present = set(table.schema_arrow.names)
            missing = [column for column in names.values() if column not in present]
            if missing:
                raise DataError(
                    f"no column {missing[0]!r} (the column map names it); the columns are "
                    f"{', '.join(sorted(present))}",
                    path=str(path),
                )
            columns = list(dict.fromkeys(names.values()))
            for batch in table.iter_batches(batch_size=_BATCH_ROWS, columns=columns):
                values = batch.to_pydict()
                for index in range(batch.num_rows):
                    row += 1
                    yield (
                        {key: values[column][index] for key, column in names.items()},
                        Where(path, field=f"row {row}"),
                    )
    except (pa.ArrowException, OSError) as exc:
        raise DataError(
            f"not a readable Parquet file (after row {row}): {exc}", path=str(path)
        ) from None


def _import_row(
    row: Mapping[str, Any], number: int, source: ImportSource, where: Where, writer: TableWriter
) -> None:
    columns = source.columns
    item_id = _item_id(row.get("item_id", number), where, columns.get("item_id"))
    prompt = _prompt(row["prompt"], where, columns["prompt"])
    reference = row.get("reference")
    if reference is not None and not isinstance(reference, str):
        raise where.error(
            f"expected the reference as text, found {type(reference).__name__}",
            columns["reference"],
        )
    system = row["system"] if "system" in columns else source.system
    if system is None:
        raise Skip("no system name (null)")
    if not isinstance(system, str):
        raise where.error(
            f"expected the system's name as text, found {system!r}", columns["system"]
        )
    output = row["output"]
    if output is None:
        raise Skip("no output (null)")
    if not isinstance(output, str):
        raise where.error(
            f"expected the output as text, found {type(output).__name__}", columns["output"]
        )
    strata = writer.strata({s: row[f"stratum:{s}"] for s in source.strata}, "stratum column")
    writer.item(item_id, prompt, where, reference=reference, strata=strata)
    writer.response(item_id, system, output, where)


def _item_id(value: Any, where: Where, column: str | None) -> str:
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is None:
        raise Skip("no item id (null)")
    raise where.error(f"expected an item id (text or integer), found {value!r}", column)


def _prompt(value: Any, where: Where, column: str) -> str | list[dict[str, str]]:
    if value is None:
        raise Skip("no prompt (null)")
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(m, Mapping) for m in value):
        messages = []
        for message in value:
            role, content = message.get("role"), message.get("content")
            if role not in ROLES or not isinstance(content, str):
                raise where.error(
                    "expected chat messages with role system, user or assistant and text content",
                    column,
                )
            messages.append({"role": role, "content": content})
        if not messages or messages[-1]["role"] != "user":
            raise Skip("the chat prompt does not end with the user's turn")
        return messages
    raise where.error(
        f"expected the prompt as text or chat messages, found {type(value).__name__}", column
    )
