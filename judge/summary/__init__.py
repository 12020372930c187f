"""`summary.json` as typed models: the run's counts and settings (`run_summary`), the trust
gate (`gate`), costs, canaries, controlled win rates, the audit and the decision, all built on
one base (`base_model`)."""

from judge.exports import lazy_exports

_EXPORTS = {
    "RunSummary": "judge.summary.run_summary",
    "Comparison": "judge.summary.run_summary",
    "Calibration": "judge.summary.run_summary",
    "TrustGate": "judge.summary.gate",
    "Decision": "judge.summary.decision",
    "RubricAlignment": "judge.summary.alignment",
    "Estimate": "judge.summary.base_model",
    "SummaryModel": "judge.summary.base_model",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
