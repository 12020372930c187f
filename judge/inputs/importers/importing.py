"""One entry for every table importer: `import_tables(source, out)` (what `judge import` and
a config's `data.source` both call) and `with_imported_data`, the step a prepare takes first
when its config names a source."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from judge.config.import_source import ImportSource
from judge.config.run_config import RunConfig
from judge.inputs.importers.written_tables import ImportReport


def import_tables(source: ImportSource, out: Path) -> ImportReport:
    """Read `source` (another tool's files) into `out/items.jsonl` and `out/responses.jsonl`,
    and `out/import_report.json`; returns what was written and skipped. `DataError` for a file
    that cannot be read as that tool writes it, naming the file, line (or JSON path) and field;
    `ConfigError` when the optional package a kind needs is not installed."""
    if source.kind == "inspect":
        from judge.inputs.importers.inspect_logs import import_inspect

        writer = import_inspect(source.path, out)
    elif source.kind == "promptfoo":
        from judge.inputs.importers.promptfoo_results import import_promptfoo

        writer = import_promptfoo(source.path, out)
    elif source.kind == "lm-eval":
        from judge.inputs.importers.lm_eval_samples import import_lm_eval

        writer = import_lm_eval(source.path, out)
    else:
        from judge.inputs.importers.hf_dataset import import_hf

        writer = import_hf(source, out)
    return writer.report


def with_imported_data(
    config: RunConfig, directory: Path, log: Callable[[str], None] = lambda _msg: None
) -> RunConfig:
    """`config` reading the tables imported from its `data.source` into `directory`, or
    `config` itself when it names tables. The source is read again at each prepare: the same
    files give the same tables, byte for byte, so a resumed run finds its inputs unchanged,
    and changed files are judged as changed (the run's fingerprint covers the tables)."""
    data = config.data
    if data.source is None or data.items is not None:
        return config
    log(f"importing {data.source.kind} data into {directory}")
    report = import_tables(data.source, directory)
    for line in report.lines():
        log(line)
    tables = {"items": report.items_file, "responses": report.responses_file}
    return config.model_copy(update={"data": data.model_copy(update=tables)})
