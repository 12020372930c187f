"""calibration: pure statistics for judge evaluation (agreement, comparison, ranking).

Imports nothing from `judge`; knows nothing of LLMs. Every statistic returns a typed result
(value, interval, n, seed, method), never a bare float.
"""

# Loaded on first use (PEP 562): `import calibration.thresholds` (a run config) must not load
# numpy, scipy and pandas with every statistic.
from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, tuple[str, str]] = {
    "AnnotatorTest": ("calibration.annotator_test", "AnnotatorTest"),
    "CalibrationReport": ("calibration.calibrate", "CalibrationReport"),
    "ComparisonInputError": ("calibration.compare_input", "ComparisonInputError"),
    "ComparisonReport": ("calibration.compare", "ComparisonReport"),
    "GateError": ("calibration.gates", "GateError"),
    "GateResult": ("calibration.gates", "GateResult"),
    "GateSyntaxError": ("calibration.gates", "GateSyntaxError"),
    "GateThresholds": ("calibration.trust_gate", "GateThresholds"),
    "GateVerdict": ("calibration.trust_gate", "GateVerdict"),
    "LabelError": ("calibration.labels", "LabelError"),
    "MetricSpec": ("calibration.scorecard", "MetricSpec"),
    "PairedBootstrapResult": ("calibration.bootstrap", "PairedBootstrapResult"),
    "Scorecard": ("calibration.scorecard", "Scorecard"),
    "ScorecardSpec": ("calibration.scorecard", "ScorecardSpec"),
    "all_pairs": ("calibration.pairs", "all_pairs"),
    "alternative_annotator_test": ("calibration.annotator_test", "alternative_annotator_test"),
    "bootstrap_mean": ("calibration.bootstrap", "bootstrap_mean"),
    "bradley_terry": ("calibration.ranking", "bradley_terry"),
    "calibrate": ("calibration.calibrate", "calibrate"),
    "cohen_kappa": ("calibration.agreement", "cohen_kappa"),
    "compare_table": ("calibration.compare", "compare_table"),
    "confusion_matrix": ("calibration.agreement", "confusion_matrix"),
    "evaluate_gate": ("calibration.gates", "evaluate_gate"),
    "evaluate_trust_gate": ("calibration.trust_gate", "evaluate_gate"),
    "holm": ("calibration.pairs", "holm"),
    "infer_kind": ("calibration.kinds", "infer_kind"),
    "interval_overlap_ranks": ("calibration.ranks", "interval_overlap_ranks"),
    "join_labels": ("calibration.labels", "join_labels"),
    "kendall_tau_b": ("calibration.agreement", "kendall_tau_b"),
    "krippendorff_alpha": ("calibration.alpha", "krippendorff_alpha"),
    "leaderboard_transfer": ("calibration.ranking", "leaderboard_transfer"),
    "load_mt_bench": ("calibration.labels", "load_mt_bench"),
    "mean_signed_bias": ("calibration.agreement", "mean_signed_bias"),
    "paired_bootstrap": ("calibration.bootstrap", "paired_bootstrap"),
    "pairwise_agreement": ("calibration.agreement", "pairwise_agreement"),
    "parse_gate": ("calibration.gates", "parse_gate"),
    "pass_at_k": ("calibration.passk", "pass_at_k"),
    "pass_at_k_interval": ("calibration.passk", "pass_at_k_interval"),
    "ppi_mean": ("calibration.correction", "ppi_mean"),
    "ppi_win_rate": ("calibration.correction", "ppi_win_rate"),
    "ranks_from_tests": ("calibration.ranks", "ranks_from_tests"),
    "raw_agreement": ("calibration.agreement", "raw_agreement"),
    "rogan_gladen": ("calibration.rogan_gladen", "rogan_gladen"),
    "scorecard": ("calibration.scorecard", "scorecard"),
    "shuffled_judge": ("calibration.calibrate", "shuffled_judge"),
    "spearman": ("calibration.agreement", "spearman"),
    "win_rate": ("calibration.bootstrap", "win_rate"),
    "win_rate_matrix": ("calibration.pairs", "win_rate_matrix"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'calibration' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "AnnotatorTest",
    "CalibrationReport",
    "ComparisonInputError",
    "ComparisonReport",
    "GateError",
    "GateResult",
    "GateSyntaxError",
    "GateThresholds",
    "GateVerdict",
    "LabelError",
    "MetricSpec",
    "PairedBootstrapResult",
    "Scorecard",
    "ScorecardSpec",
    "all_pairs",
    "alternative_annotator_test",
    "bootstrap_mean",
    "bradley_terry",
    "calibrate",
    "cohen_kappa",
    "compare_table",
    "confusion_matrix",
    "evaluate_gate",
    "evaluate_trust_gate",
    "holm",
    "infer_kind",
    "interval_overlap_ranks",
    "join_labels",
    "kendall_tau_b",
    "krippendorff_alpha",
    "leaderboard_transfer",
    "load_mt_bench",
    "mean_signed_bias",
    "paired_bootstrap",
    "pairwise_agreement",
    "parse_gate",
    "pass_at_k",
    "pass_at_k_interval",
    "ppi_mean",
    "ppi_win_rate",
    "ranks_from_tests",
    "raw_agreement",
    "rogan_gladen",
    "scorecard",
    "shuffled_judge",
    "spearman",
    "win_rate",
    "win_rate_matrix",
]
