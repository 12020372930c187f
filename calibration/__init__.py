"""calibration: pure statistics for judge evaluation (agreement, comparison, ranking).

Imports nothing from `judge`; knows nothing of LLMs. Every statistic returns a typed result
(value, interval, n, seed, method), never a bare float.
"""

from calibration.agreement import (
    cohen_kappa,
    confusion_matrix,
    kendall_tau_b,
    mean_signed_bias,
    pairwise_agreement,
    raw_agreement,
    spearman,
)
from calibration.alpha import krippendorff_alpha
from calibration.annotator_test import AnnotatorTest, alternative_annotator_test
from calibration.bootstrap import PairedBootstrapResult, bootstrap_mean, paired_bootstrap, win_rate
from calibration.calibrate import CalibrationReport, calibrate, shuffled_judge
from calibration.compare import ComparisonReport, compare_table
from calibration.compare_input import ComparisonInputError
from calibration.correction import ppi_mean, ppi_win_rate
from calibration.gates import GateError, GateResult, GateSyntaxError, evaluate_gate, parse_gate
from calibration.kinds import infer_kind
from calibration.labels import LabelError, join_labels, load_mt_bench
from calibration.pairs import all_pairs, holm, win_rate_matrix
from calibration.passk import pass_at_k, pass_at_k_interval
from calibration.ranking import bradley_terry, leaderboard_transfer
from calibration.ranks import interval_overlap_ranks, ranks_from_tests
from calibration.rogan_gladen import rogan_gladen
from calibration.scorecard import MetricSpec, Scorecard, ScorecardSpec, scorecard
from calibration.trust_gate import GateThresholds, GateVerdict
from calibration.trust_gate import evaluate_gate as evaluate_trust_gate

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
