"""From stored verdicts to the statistics of `calibration/`: the judgment tables
(`verdict_tables`, `aggregate`, `panel_tables`, `run_verdicts`), judge behaviour
(`judge_stats`, `response_style`), `judge calibrate` / `judge compare` on tables
(`table_analysis`) and the cascade (`cascade_run`)."""

from judge.exports import lazy_exports

_EXPORTS = {
    "calibrate_tables": "judge.analysis.table_analysis",
    "calibrate_source": "judge.analysis.table_analysis",
    "compare_source": "judge.analysis.table_analysis",
    "load_table": "judge.analysis.verdict_tables",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
