"""Reading the items and responses tables (JSONL, CSV, Parquet) into checked rows, with
errors that name the file, line and field (`tables`, `sources`, `cells`, `duplicates`); other
tools' files read into those tables (`importers`)."""

from judge.exports import lazy_exports

_EXPORTS = {
    "load_items": "judge.inputs.tables",
    "load_responses": "judge.inputs.tables",
    "iter_items": "judge.inputs.tables",
    "iter_responses": "judge.inputs.tables",
    "SUPPORTED_FORMATS": "judge.inputs.tables",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
