"""The one-page evaluation report: `report.md` and a self-contained `report.html` (figures
embedded as data URIs, no network), rendered from `summary.json` alone.

Every number on the page is a value of the summary, formatted; nothing is computed here, so a
reader can check any figure against the machine-readable file (a test holds us to it). The
page is a list of blocks rendered twice, as Markdown and as HTML.
"""

from __future__ import annotations

import base64
import html
import json
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge import plots
from judge.errors import DataError
from judge.pipeline import SUMMARY_JSON

REPORT_MD = "report.md"
REPORT_HTML = "report.html"
PLOTS_DIR = "plots"


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Para:
    text: str


@dataclass(frozen=True)
class Bullets:
    items: list[str]


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class Figure:
    name: str
    png: bytes
    alt: str


Block = Heading | Para | Bullets | Table | Figure


def write_report(run_dir: Path) -> tuple[Path, Path]:
    """Render `report.md`, `report.html` and `plots/*.png` from the run's `summary.json`."""
    path = run_dir / SUMMARY_JSON
    if not path.exists():
        raise DataError("no summary.json: run `judge run` on this config first", path=str(path))
    summary = json.loads(path.read_text(encoding="utf-8"))
    blocks = build(summary)
    figures = run_dir / PLOTS_DIR
    figures.mkdir(exist_ok=True)
    for block in blocks:
        if isinstance(block, Figure):
            (figures / f"{block.name}.png").write_bytes(block.png)
    md, page = run_dir / REPORT_MD, run_dir / REPORT_HTML
    _replace(md, to_markdown(blocks))
    _replace(page, to_html(blocks, title=f"Evaluation report: {summary['run']['name']}"))
    return md, page


def _replace(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


# --------------------------------------------------------------------------- formatting
# Every number reaches the page through these formatters, which note the value they were given
# and the text they made: `build_traced` returns that ledger so a test can check each value is
# one of summary.json's and that the page holds no number the formatters did not write.

_ledger: ContextVar[list[tuple[Any, str]] | None] = ContextVar("report_ledger", default=None)


def _noted(value: Any, text: str) -> str:
    ledger = _ledger.get()
    if ledger is not None:
        ledger.append((value, text))
    return text


def label(x: object) -> str:
    """A name that may look like a number (a stratum value "1", a version "2.14.0")."""
    return _noted(x, str(x))  # type: ignore[arg-type]


def count(x: int | float) -> str:
    """An integer (or a value shown as given, e.g. a parameter)."""
    return _noted(x, str(x))


def pct(x: float | None) -> str:
    return "n/a" if x is None else _noted(x, f"{100 * x:.1f}%")


def pct0(x: float | None) -> str:
    return "n/a" if x is None else _noted(x, f"{100 * x:.0f}%")


def level(x: float) -> str:
    """A confidence level: 0.95 -> 95%."""
    return _noted(x, f"{100 * x:g}%")


def num(x: float | None, digits: int = 3) -> str:
    if x is None:
        return "n/a"
    text = f"{x:.{digits}f}"
    # A bootstrap bound of -1e-17 is zero: "-0.00" would read as a sign it does not have.
    if text.startswith("-") and not text.strip("-0."):
        text = text[1:]
    return _noted(x, text)


def short(x: float | None) -> str:
    return num(x, 2)


def usd(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else "$" + num(x, digits)


def seconds(x: float | None) -> str:
    return "n/a" if x is None else num(x, 3) + " s"


def interval(value: float | None, low: float | None, high: float | None, style=num) -> str:
    if value is None:
        return "n/a"
    if low is None or high is None:
        return style(value)
    return f"{style(value)} [{style(low)}, {style(high)}]"


def _est(e: dict | None, style=num) -> str:
    if not e:
        return "n/a"
    return interval(e.get("value"), e.get("ci_low"), e.get("ci_high"), style)


def _share(m: dict) -> str:
    return f"{pct(m['value'])} ({count(m['agree'])}/{count(m['comparisons'])})"


def _stratum_name(stratum: dict[str, str]) -> str:
    return ", ".join(f"{k} = {label(v)}" for k, v in stratum.items()) or "all"


# --------------------------------------------------------------------------- the page


def build_traced(summary: dict[str, Any]) -> tuple[list[Block], list[tuple[Any, str]]]:
    """The page's blocks and the ledger of (value, text) of every number formatted on it."""
    ledger: list[tuple[Any, str]] = []
    token = _ledger.set(ledger)
    try:
        return build(summary), ledger
    finally:
        _ledger.reset(token)


def build(summary: dict[str, Any]) -> list[Block]:
    run = summary["run"]
    blocks: list[Block] = [Heading(f"Evaluation report: {run['name']}", 1)]
    # The decision follows the question: a reader with a minute reads those two.
    blocks += _question(summary)
    blocks += _decision(summary)
    blocks += _setup(summary)
    blocks += _data(summary)
    blocks += _results(summary)
    blocks += _judge(summary)
    return blocks


def _question(summary: dict) -> list[Block]:
    question = summary["run"].get("question") or "No question was stated in the run config."
    return [Heading("Question"), Para(question)]


def _setup(summary: dict) -> list[Block]:
    run = summary["run"]
    comparison = summary.get("comparison") or {}
    rubric = run.get("rubric") or {}
    env = run.get("environment") or {}
    judges = [
        [
            j["model"] + (" (recorded verdicts replayed)" if j.get("recorded") else ""),
            j.get("family") or "inferred",
            ", ".join(f"{k}={_param(v)}" for k, v in sorted((j.get("params") or {}).items()))
            or "provider defaults",
            j.get("transport") or "",
        ]
        for j in run["judges"]
    ]
    seeds = ", ".join(f"{k} {count(v)}" for k, v in (run.get("seeds") or {}).items())
    calibration = summary.get("calibration") or {}
    if calibration:
        seeds += f", calibration {count(calibration['seed'])}"
    packages = ", ".join(f"{k} {label(v)}" for k, v in sorted((env.get("packages") or {}).items()))
    pairs = run.get("pairs") or {}
    sampling = f"pairs: {pairs.get('mode', 'all')}"
    if pairs.get("baseline"):
        sampling += f" against {pairs['baseline']}"
    sampling += f"; orders: {run.get('orders', 'both')}"
    if run.get("orders", "both") == "both":
        sampling += " (every pair judged as A/B and as B/A; disagreeing orders count as a tie)"
    return [
        Heading("Setup"),
        Bullets(
            [
                f"Systems: {', '.join(comparison.get('systems') or [])}",
                f"Rubric: {rubric.get('id')}@{count(rubric.get('version'))} ({rubric.get('hash')})",
                f"Sampling: {sampling}",
                f"Seeds: {seeds}",
                f"Config: {run.get('config_hash')}; recorded {env.get('recorded_at')} on "
                f"Python {label(env.get('python'))}",
                f"Packages: {packages}",
            ]
        ),
        Table(["judge", "family", "parameters", "transport"], judges),
    ]


def _param(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return json.dumps(value)
    return count(value)


def _data(summary: dict) -> list[Block]:
    counts = summary["counts"]
    scrub = summary.get("scrub") or {}
    data = summary.get("data") or {}
    rules = ", ".join(
        f"{k} {count(v)}" for k, v in sorted((scrub.get("by_rule") or {}).items()) if v
    )
    strata = [
        [column, ", ".join(f"{label(value)} ({count(n)})" for value, n in sizes.items())]
        for column, sizes in (data.get("strata") or {}).items()
    ]
    calibration = summary.get("calibration") or {}
    holdout = (
        "No holdout: every human label is used both to measure agreement and to correct the "
        "estimates, so the corrected intervals are for these items, not new ones."
        if calibration
        else "No human labels were given: the judge is not calibrated."
    )
    blocks: list[Block] = [
        Heading("Data"),
        Bullets(
            [
                f"{count(counts['items'])} items, {count(counts['blinded'])} responses, "
                f"{count(counts['pairs'])} pairs judged ({count(summary.get('skipped_pairs', 0))}"
                " pairs skipped: a system's answer missing), "
                f"{count(counts['requests'])} judge requests",
                f"Replies: {count(counts['verdicts'])} verdicts, "
                f"{count(counts['parse_failures'])} parse failures, {count(counts['errors'])} "
                f"errors, {count(counts['pending'])} pending; {count(counts['cached'])} from the "
                "cache",
                f"Blinding: {count(scrub.get('total', 0))} identity markers scrubbed in "
                f"{count(scrub.get('responses_changed', 0))} of {count(scrub.get('responses', 0))}"
                " responses" + (f" ({rules})" if rules else ""),
                holdout,
            ]
        ),
    ]
    strata += [
        [column, f"{count(n)} values (one per item group; not listed)"]
        for column, n in (data.get("many_valued") or {}).items()
    ]
    if strata:
        blocks.append(Table(["stratum", "items per value"], strata))
    return blocks


def _results(summary: dict) -> list[Block]:
    comparison = summary.get("comparison")
    if not comparison:
        return [Heading("Results"), Para("No comparison: the run has no scored judgments.")]
    ci = level(comparison["ci"])
    blocks: list[Block] = [Heading("Results")]
    win = {w["system"]: w for w in summary.get("win_rates") or []}
    strength = "Bradley-Terry strength" if comparison["kind"] == "pairwise" else "mean score"
    blocks.append(
        Para(
            f"Judged by {comparison['judge']}. Ranking with {ci} intervals from "
            f"{count(comparison['resamples'])} paired bootstrap resamples over items (seed "
            f"{count(comparison['seed'])}); systems whose intervals overlap share a rank."
        )
    )
    rows = []
    for r in comparison["ranking"]:
        w = win.get(r["system"])
        rows.append(
            [
                count(r["rank"]),
                r["system"],
                interval(r["estimate"], r["ci_low"], r["ci_high"]),
                interval(w["win_rate"], w["ci_low"], w["ci_high"], pct) if w else "n/a",
                count(r["n_items"]),
            ]
        )
    blocks.append(Table(["rank", "system", strength, "win rate vs all others", "items"], rows))
    if comparison.get("notes"):
        blocks.append(Bullets([f"Note: {n}" for n in comparison["notes"]]))
    order = [r["system"] for r in comparison["ranking"]] or list(comparison["systems"])
    figure = plots.forest(comparison["comparisons"], "Paired differences, all pairs")
    if figure:
        blocks.append(Figure("forest", figure, "Forest plot of paired differences"))
    if comparison.get("win_rates"):
        matrix = plots.win_matrix(comparison["win_rates"], order)
        if matrix:
            blocks.append(Figure("win_matrix", matrix, "Win-rate matrix heat map"))
    diffs = [
        [
            f"{c['a']} vs {c['b']}",
            interval(c["mean_diff"], c["ci_low"], c["ci_high"]),
            f"{count(c['wins'])}/{count(c['losses'])}/{count(c['ties'])}",
            ("≤ " if c.get("p_at_floor") else "") + num(c["p_holm"]),
            "yes" if c["distinguishable"] else "no",
        ]
        for c in comparison["comparisons"]
    ]
    blocks.append(Heading("Paired differences", 3))
    if comparison.get("p_floor") is not None and any(
        c.get("p_at_floor") for c in comparison["comparisons"]
    ):
        blocks.append(
            Para(
                f"A bootstrap of {count(comparison['resamples'])} resamples gives no p-value "
                f"below {num(comparison['p_floor'], 5)} (before Holm's adjustment): pairs at "
                "that floor are marked ≤."
            )
        )
    blocks.append(
        Table(["pair", "difference (net win rate)", "W/L/T", "p (Holm)", "told apart"], diffs)
    )
    blocks += _per_stratum(summary, comparison)
    blocks += _same_family(summary)
    blocks += _cost(summary)
    return blocks


def _neighbour_pairs(summary: dict) -> list[tuple[str, str]]:
    return [(n["upper"], n["lower"]) for n in (summary.get("decision") or {}).get("neighbours", [])]


def _per_stratum(summary: dict, comparison: dict) -> list[Block]:
    by = comparison.get("by")
    if not by or not comparison.get("by_stratum"):
        return []
    pairs = _neighbour_pairs(summary)
    oriented = (summary.get("decision") or {}).get("neighbours_by_stratum") or {}
    rows = [
        [label(stratum)]
        + [
            "n/a" if c is None else interval(c["diff"], c["ci_low"], c["ci_high"], short)
            for c in found
        ]
        for stratum, found in oriented.items()
    ]
    blocks: list[Block] = [Heading(f"Per {by}", 3)]
    by_stratum = (summary.get("win_rates_by_stratum") or {}).get("strata") or {}
    if by_stratum:
        systems = [r["system"] for r in comparison["ranking"]] or list(comparison["systems"])
        table = []
        for stratum, rates in by_stratum.items():
            mine = {w["system"]: w for w in rates}
            table.append(
                [label(stratum)]
                + [
                    interval(mine[s]["win_rate"], mine[s]["ci_low"], mine[s]["ci_high"], pct0)
                    if s in mine
                    else "n/a"
                    for s in systems
                ]
            )
        blocks += [
            Para(f"Win rate against all others within each {by}:"),
            Table([by, *systems], table),
        ]
    blocks += [
        Para(
            "Neighbouring systems of the overall ranking, within each stratum (net win rate of "
            "the first, with its interval). Every pair and stratum is in summary.json under "
            "comparison.by_stratum."
        ),
        Table([by, *(f"{a} vs {b}" for a, b in pairs)], rows),
    ]
    figure = plots.strata_multiples(oriented, pairs, by)
    if figure:
        blocks.append(Figure("strata", figure, f"Per-{by} small multiples"))
    return blocks


def _same_family(summary: dict) -> list[Block]:
    same = summary.get("same_family")
    if not same:
        return []
    judges = ", ".join(j["model"] for j in summary["run"]["judges"])
    full = {r["system"]: r for r in (summary.get("comparison") or {}).get("ranking", [])}
    blocks: list[Block] = [
        Heading("Same-family verdicts", 3),
        Para(
            f"{judges} shares a family with {', '.join(same['systems'])}: "
            f"{count(same['flagged_pairs'])} pair judgments are flagged (allowed by the config), "
            f"{count(same['cross_family_pairs'])} are cross-family. Without the flagged pairs "
            f"{', '.join(same['systems'])} drop out (every pair of theirs is flagged) and the "
            "others are ranked among themselves, so their ranks renumber; what matters is "
            "whether their order holds:"
        ),
    ]
    only = same.get("cross_family_only")
    if only:
        rows = [
            [
                r["system"],
                count(r["rank"]),
                interval(r["estimate"], r["ci_low"], r["ci_high"]),
                count(full[r["system"]]["rank"]) if r["system"] in full else "n/a",
            ]
            for r in only["ranking"]
        ]
        blocks.append(Table(["system", "rank without", "strength without", "rank with"], rows))
    calibration = summary.get("calibration") or {}
    split = {
        s["stratum"]["same_family"]: s
        for s in calibration.get("strata", [])
        if "same_family" in s["stratum"]
    }
    if "yes" in split and "no" in split:
        blocks.append(
            Para(
                "Agreement with the humans (S1, ties count): "
                f"{_share(split['yes']['metrics']['agreement_s1'])} on same-family pairs, "
                f"{_share(split['no']['metrics']['agreement_s1'])} on cross-family pairs; "
                f"alpha {_est(split['yes']['metrics']['alpha'])} vs "
                f"{_est(split['no']['metrics']['alpha'])}."
            )
        )
    return blocks


def _cost(summary: dict) -> list[Block]:
    replayed = {j["model"] for j in summary["run"]["judges"] if j.get("recorded")}
    rows = [
        [
            name,
            "replayed, not measured" if name in replayed else usd(s.get("cost_usd")),
            "replayed, not measured" if name in replayed else seconds(s.get("latency_median_s")),
            count(s["requests"]),
        ]
        for name, s in (summary.get("judges") or {}).items()
    ]
    blocks: list[Block] = [
        Heading("Cost and latency", 3),
        Table(["judge", "cost", "median latency", "requests"], rows),
    ]
    systems = summary.get("system_costs") or {}
    if not systems:
        blocks.append(Para("The responses table gives no latency or cost for the systems."))
        return blocks
    blocks.append(
        Table(
            ["system", "median latency", "cost per response", "total cost", "responses"],
            [
                [
                    name,
                    seconds(c["latency_median_s"]),
                    usd(c["cost_usd_mean"], 4),
                    usd(c["cost_usd_total"]),
                    count(c["responses"]),
                ]
                for name, c in systems.items()
            ],
        )
    )
    return blocks


def _judge(summary: dict) -> list[Block]:
    blocks: list[Block] = [Heading("Judge")]
    stats = summary.get("judges") or {}
    rows = [
        [
            name,
            pct(s.get("position_consistency")),
            pct(s.get("first_slot_win_rate")),
            pct(s.get("verbosity_preference")),
            pct(s.get("tie_rate")),
            pct(s.get("parse_failure_rate")),
        ]
        for name, s in stats.items()
    ]
    blocks.append(
        Table(
            [
                "judge",
                "position consistency",
                "first slot wins",
                "longer answer wins",
                "ties (single order)",
                "parse failures",
            ],
            rows,
        )
    )
    figure = plots.judge_bias(stats)
    if figure:
        blocks.append(Figure("judge_bias", figure, "Position consistency and first-slot wins"))
    calibration = summary.get("calibration")
    if not calibration:
        blocks.append(Para("Not calibrated: no human labels (calibration.human) were given."))
        return blocks
    overall = calibration["overall"]
    m = overall["metrics"]
    ceiling = overall.get("ceiling") or {}
    gate = calibration["gate"]
    blocks.append(
        Para(
            f"{count(calibration['join']['matched_labels'])} of "
            f"{count(calibration['join']['human_labels'])} human labels fall on judged pairs "
            f"({count(calibration['join']['human_only']['count'])} labelled keys were not "
            f"judged); agreement on those {count(overall['keys'])} keys, "
            f"{level(calibration['confidence'])} intervals from "
            f"{count(calibration['resamples'])} "
            "resamples over keys:"
        )
    )
    agreement = [
        [
            _stratum_name(part["stratum"]),
            _est(part["metrics"]["alpha"]),
            _share(part["metrics"]["agreement_s1"]),
            _share(part["metrics"]["agreement_s2"]),
            part["gate"]["verdict"],
        ]
        for part in [overall, *calibration["strata"]]
        if not {"category"} & set(part["stratum"])
    ]
    blocks.append(
        Table(["stratum", "alpha", "agreement S1 (ties count)", "S2 (no ties)", "gate"], agreement)
    )
    items = [
        f"Cohen's kappa {_est(m.get('kappa'))}",
        f"Human ceiling: humans among themselves alpha {_est(ceiling.get('human_alpha'))}; "
        f"the judge in a human's place {_est(ceiling.get('judge_alpha_loho'))}; gap "
        f"{_est(ceiling.get('alpha_gap'))}",
        f"Gate: {gate['verdict'].upper()}",
        *gate["reasons"],
    ]
    blocks.append(Bullets(items))
    figure = plots.confusion(overall.get("confusion"))
    if figure:
        blocks.append(Figure("confusion", figure, "Calibration confusion matrix"))
    blocks += _corrected(calibration)
    blocks += _literature(summary)
    return blocks


def _corrected(calibration: dict) -> list[Block]:
    corrected = calibration.get("corrected") or []
    if not corrected:
        return []
    rows = [
        [
            c["target"],
            _est(c["raw"]),
            _est(c["human_only"]),
            interval(c["value"], c["ci_low"], c["ci_high"]),
            count(c["n"]),
        ]
        for c in corrected
    ]
    return [
        Heading("Corrected estimates", 3),
        Para(
            "The judge's raw estimate beside the humans' alone and the PPI++ estimate that "
            "corrects the judge with the human labels."
        ),
        Table(["estimate", "judge (raw)", "humans only", "corrected", "human-labelled"], rows),
    ]


def _literature(summary: dict) -> list[Block]:
    lit = summary.get("literature")
    if not lit:
        return []
    rows = [
        [
            _stratum_name(part["stratum"]),
            _share(part["agreement_s1"]),
            _share(part["agreement_s2"]),
        ]
        for part in lit["agreement"]
        if not {"category"} & set(part["stratum"])
    ]
    return [
        Heading("Against the published verdicts", 3),
        Para(
            f"This run's verdicts equal the published ones on {count(lit['identical_verdicts'])}"
            f" of {count(lit['shared_keys'])} shared keys ({count(lit['run_keys'])} judged here, "
            f"{count(lit['keys'])} published; the rest lack an answer text). The published "
            "verdicts' "
            "agreement with the same human labels on every key:"
        ),
        Table(["stratum", "agreement S1", "S2"], rows),
    ]


def _decision(summary: dict) -> list[Block]:
    decision = summary.get("decision") or {}
    items = []
    if decision.get("leader"):
        tied = decision.get("leader_tied_with") or []
        lead = f"{decision['leader']} ranks first"
        lead += f", tied with {', '.join(tied)}" if tied else ""
        items.append(lead + ".")
    for n in decision.get("neighbours") or []:
        shown = f"{interval(n['diff'], n['ci_low'], n['ci_high'])} on {count(n['n'])} items"
        need = n["items_needed"]
        if n["distinguishable"]:
            items.append(
                f"{n['upper']} over {n['lower']}: {shown}, told apart; at this difference about "
                f"{count(need)} items would still tell them apart."
            )
        else:
            more = f"about {count(need)} items would" if need else "no number of items would"
            items.append(
                f"{n['upper']} vs {n['lower']}: {shown}, not told apart; {more} tell them apart "
                "if the difference held."
            )
    items += _self_preference_items(summary)
    return [Heading("Decision"), Para(_gate_sentence(summary)), Bullets(items)]


def _self_preference_items(summary: dict) -> list[str]:
    same = summary.get("same_family")
    if not same:
        return []
    judges = ", ".join(j["model"] for j in summary["run"]["judges"])
    text = (
        f"{', '.join(same['systems'])} are judged by their own family ({judges}): every "
        "verdict on their pairs is flagged, so their places rest on a judge that may favour "
        "them."
    )
    check = (summary.get("decision") or {}).get("self_preference_check")
    if check:
        text += (
            f" Largest gap on such a pair, {check['target']}: the judge {num(check['judge'])}, "
            f"the humans alone {num(check['humans'])} (corrected {num(check['corrected'])}; "
            "see Corrected estimates)."
        )
    return [text]


def _gate_sentence(summary: dict) -> str:
    decision = summary.get("decision") or {}
    gate = decision.get("gate")
    if decision.get("trusted"):
        return "The judge passed the calibration gate: these results can be relied on."
    if gate == "not calibrated":
        return (
            "The judge was not calibrated against humans: treat the ranking as the judge's "
            "opinion, not as a measurement."
        )
    calibration = summary.get("calibration") or {}
    thresholds = (calibration.get("gate") or {}).get("thresholds", {})
    sentence = (
        f"The judge is {gate.upper()} by the calibration gate: the ranking below is flagged, "
        "not trusted."
    )
    ceiling = (calibration.get("overall") or {}).get("ceiling") or {}
    human = ceiling.get("human_alpha") or {}
    use = thresholds.get("alpha_use")
    if human.get("ci_high") is not None and use is not None and human["ci_high"] < use:
        return sentence + (
            f" The humans themselves agree only to alpha {_est(human)}, below the "
            f"{num(use)} the gate asks of the judge: more or clearer human labels come first; "
            "no judge can be shown to agree with labels better than they agree with each other."
        )
    return sentence + (
        f" A judge-human alpha whose lower bound reaches {num(use)} would change that."
    )


# --------------------------------------------------------------------------- renderers


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(blocks: list[Block]) -> str:
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"{'#' * block.level} {block.text}\n")
        elif isinstance(block, Para):
            out.append(f"{block.text}\n")
        elif isinstance(block, Bullets):
            out.append("\n".join(f"- {item}" for item in block.items) + "\n")
        elif isinstance(block, Table):
            lines = [
                "| " + " | ".join(_md_cell(h) for h in block.header) + " |",
                "|" + "---|" * len(block.header),
                *("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows),
            ]
            out.append("\n".join(lines) + "\n")
        else:
            out.append(f"![{block.alt}]({PLOTS_DIR}/{block.name}.png)\n")
    return "\n".join(out)


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:980px;margin:24px auto;
padding:0 16px;color:#1a1a1a}
h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;border-bottom:1px solid #ccc;margin-top:22px}
h3{font-size:15px;margin-bottom:4px}
table{border-collapse:collapse;margin:6px 0 10px;font-size:12.5px}
td,th{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f2f2f2}
img{max-width:100%;display:block;margin:6px 0}ul{margin:4px 0 8px;padding-left:20px}
""".strip()


def to_html(blocks: list[Block], title: str) -> str:
    esc = html.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
    ]
    for block in blocks:
        if isinstance(block, Heading):
            out.append(f"<h{block.level}>{esc(block.text)}</h{block.level}>")
        elif isinstance(block, Para):
            out.append(f"<p>{esc(block.text)}</p>")
        elif isinstance(block, Bullets):
            out.append("<ul>" + "".join(f"<li>{esc(i)}</li>" for i in block.items) + "</ul>")
        elif isinstance(block, Table):
            head = "".join(f"<th>{esc(h)}</th>" for h in block.header)
            body = "".join(
                "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in block.rows
            )
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        else:
            data = base64.b64encode(block.png).decode("ascii")
            out.append(f'<img alt="{esc(block.alt)}" src="data:image/png;base64,{data}">')
    out.append("</body></html>")
    return "\n".join(out) + "\n"
