"""Where a run keeps what it paid for: the run dir's layout and lock (`rundir`), the SQLite
run store (`run_store`, `rows`, `lookup`, `migrations`) and the judgments files written from it
(`judgment_files`, `result_rows`)."""

from judge.exports import lazy_exports

_EXPORTS = {
    "RunDir": "judge.store.rundir",
    "RunStore": "judge.store.run_store",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
