"""The demo end to end (`judge run configs/demo.yaml`) and its one-page report (issue 6).

One run of the real CLI on the bundled MT-Bench data (the session's `demo`, tests/conftest.py);
the tests read what it wrote: the literature check, the report's numbers against summary.json,
the blinding of every judge-visible artifact, the HTML's self-containment, and a
headless-Chromium rendering with its first screen.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.report import build_traced, to_markdown
from judge.simulator import SimulatorConfig, running_simulator
from judge.summary import RunSummary
from judge.untrusted import inert
from tests.helpers import (
    MT_BENCH,
    REPO,
    colour_count,
    first_screen,
    keep_artefact,
    rgb_pixels,
    run_cli_here,
    small_config,
)


def _summary(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- literature


def test_agreement_with_experts_equals_the_mt_bench_paper(demo: Path) -> None:
    # Zheng et al. 2023, Table 2, "G4-Pair vs Human": S1 66% (886/1343) turn 1, (871/1325)
    # turn 2; S2 85% (727/859), (731/864) — the counts FastChat's compute_agreement.py gives.
    literature = _summary(demo)["literature"]
    by_turn = {p["stratum"].get("turn"): p for p in literature["agreement"]}
    assert (by_turn["1"]["agreement_s1"]["agree"], by_turn["1"]["agreement_s1"]["comparisons"]) == (
        886,
        1343,
    )
    assert (by_turn["2"]["agreement_s1"]["agree"], by_turn["2"]["agreement_s1"]["comparisons"]) == (
        871,
        1325,
    )
    assert (by_turn["1"]["agreement_s2"]["agree"], by_turn["1"]["agreement_s2"]["comparisons"]) == (
        727,
        859,
    )
    assert (by_turn["2"]["agreement_s2"]["agree"], by_turn["2"]["agreement_s2"]["comparisons"]) == (
        731,
        864,
    )
    # The replay through blinding, both orders and aggregation loses nothing: every verdict of
    # the run equals the published one on the same key.
    assert literature["shared_keys"] == literature["run_keys"] == 2254
    assert literature["identical_verdicts"] == 2254
    assert literature["keys"] == 2400


def test_ranking_is_stated_with_intervals_and_ties(demo: Path) -> None:
    summary = _summary(demo)
    ranking = summary["comparison"]["ranking"]
    assert [r["system"] for r in ranking][:2] == ["gpt-4", "claude-v1"]
    for r in ranking:
        assert r["ci_low"] <= r["estimate"] <= r["ci_high"]
    # Ranks come from the pair table's Holm-adjusted tests: systems sharing a rank are never
    # told apart, and the Decision's "tied with" are those sharing the leader's.
    apart = {
        frozenset((c["a"], c["b"])): c["told_apart"] for c in summary["comparison"]["comparisons"]
    }
    for upper, lower in itertools.combinations(ranking, 2):
        if upper["rank"] == lower["rank"]:
            assert not apart[frozenset((upper["system"], lower["system"]))]
    tied = [r["system"] for r in ranking[1:] if r["rank"] == ranking[0]["rank"]]
    assert summary["decision"]["leader_tied_with"] == tied
    for n in summary["decision"]["neighbours"]:
        assert n["told_apart"] == apart[frozenset((n["upper"], n["lower"]))]
    report = (demo / "report.md").read_text(encoding="utf-8")
    top = ranking[0]
    assert f"| 1 | gpt-4 | {top['estimate']:.3f} [{top['ci_low']:.3f}, {top['ci_high']:.3f}]" in (
        report
    )


def test_same_family_pairs_are_flagged_and_their_effect_shown(demo: Path) -> None:
    summary = _summary(demo)
    same = summary["same_family"]
    assert same["systems"] == ["gpt-3.5-turbo", "gpt-4"]
    rows = [json.loads(line) for line in (demo / "judgments.jsonl").open(encoding="utf-8")]
    flagged = [r for r in rows if r["same_family"]]
    assert same["flagged_pairs"] == len(flagged) > 0
    assert all({"gpt-4", "gpt-3.5-turbo"} & {r["system_a"], r["system_b"]} for r in flagged)
    without = [r["system"] for r in same["cross_family_only"]["ranking"]]
    assert sorted(without) == ["alpaca-13b", "claude-v1", "llama-13b", "vicuna-13b-v1.2"]
    strata = {tuple(s["stratum"].items()) for s in summary["calibration"]["strata"]}
    assert (("same_family", "yes"),) in strata and (("same_family", "no"),) in strata
    assert "### Same-family verdicts" in (demo / "report.md").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- report numbers

Traced = tuple[str, dict[str, Any], list[tuple[Any, str]]]
"""A report page, its summary, and the (value, text) ledger its formatters wrote."""

_NUMBER = re.compile(r"(?<![\w.\-])-?\d+(?:\.\d+)?%?")
_QUOTE = re.compile(r"^(`{3,})text\n(.*?)\n\1$", re.S | re.M)
"""A quoted text (`blocks.Quote`: a candidate's output, a judge's reasoning) in report.md."""


def _leaves(obj: Any) -> list[Any]:
    """Every value of the summary, and every key (strata and systems are keys, too)."""
    if isinstance(obj, dict):
        return [*obj.keys(), *(leaf for v in obj.values() for leaf in _leaves(v))]
    if isinstance(obj, list):
        return [leaf for v in obj for leaf in _leaves(v)]
    return [obj]


def _lengths(obj: Any) -> list[int]:
    """How many entries each list of the summary holds ("2 of 9 canary gates failed" counts
    a list; it computes nothing)."""
    if isinstance(obj, dict):
        return [n for v in obj.values() for n in _lengths(v)]
    if isinstance(obj, list):
        return [len(obj), *(n for v in obj for n in _lengths(v))]
    return []


def _page_problems(report: str, summary: dict[str, Any], ledger: list[tuple[Any, str]]) -> list:
    """Why the page's numbers are not exactly the summary's, formatted: values the formatters
    were given that are not summary values; numbers on the page no formatter wrote (or wrote
    a different number of times)."""
    leaves = _leaves(summary)
    # Quoted texts must be the summary's own, verbatim (control and bidi characters written as
    # visible escapes: `judge.untrusted.inert`); their digits are no numbers of ours.
    strings = {inert(v) for v in leaves if isinstance(v, str)}
    misquoted = [q for q in (m.group(2) for m in _QUOTE.finditer(report)) if q not in strings]
    report = _QUOTE.sub(" ", report)
    known = {repr(v) for v in leaves if not isinstance(v, bool)} | set(map(repr, _lengths(summary)))
    foreign = [value for value, _ in ledger if repr(value) not in known]
    # Text the summary holds verbatim with letters and digits in it (system names, hashes, gate
    # reasons quoting their own numbers) is the summary's own: cut it out before counting.
    named = {
        v
        for v in leaves
        if isinstance(v, str) and re.search(r"[A-Za-z]", v) and re.search(r"\d", v)
    }
    for text in sorted(named, key=len, reverse=True):
        report = report.replace(text, " ")
    on_page = Counter(_NUMBER.findall(report))
    written = Counter(t for _, text in ledger for t in _NUMBER.findall(text))
    return misquoted + foreign + sorted((on_page - written) | (written - on_page))


def _traced(run_dir: Path) -> Traced:
    summary = _summary(run_dir)
    blocks, ledger = build_traced(RunSummary.from_dict(summary))
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    assert to_markdown(blocks) == report  # the page on disk is the one traced here
    return report, summary, ledger


@pytest.fixture(scope="module")
def demo_traced(demo: Path) -> Traced:
    """The demo's page, summary and ledger, traced once (the tests below only read them)."""
    return _traced(demo)


def test_every_number_in_the_report_comes_from_the_summary(demo_traced: Traced) -> None:
    report, summary, ledger = demo_traced
    assert len(ledger) > 500  # the check has something to check
    assert _page_problems(report, summary, ledger) == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("| 70/25/55 |", "| 71/25/55 |"),  # a count
        ("85.4%", "86.4%"),  # a percentage
        ("claude-v1 | 0.300 [", "claude-v1 | 0.310 ["),  # a difference in the pair table
        ("by 0.300 [0.187", "by 0.310 [0.187"),  # the answer, a sentence of the summary's
        ("(net win rate, 150 items)", "(net win rate, 151 items)"),
        ("about 54 items", "about 37 items"),  # the decision's item count
        ("2254 pairs judged", "2255 pairs judged"),
    ],
)
def test_the_number_check_catches_a_changed_number(demo_traced: Traced, old: str, new: str) -> None:
    report, summary, ledger = demo_traced
    assert old in report
    tampered = report.replace(old, new, 1)
    assert _page_problems(tampered, summary, ledger) != []


def test_the_number_check_catches_a_changed_quote(demo_traced: Traced) -> None:
    report, summary, ledger = demo_traced
    quoted = _QUOTE.search(report)
    assert quoted is not None  # the Audit section quotes questions, outputs and reasoning
    changed = quoted.group(0).replace(quoted.group(2), quoted.group(2) + " 7")
    assert _page_problems(report.replace(quoted.group(0), changed, 1), summary, ledger) != []


def test_the_number_check_catches_a_value_not_in_the_summary(demo_traced: Traced) -> None:
    report, summary, ledger = demo_traced
    assert _page_problems(report, summary, [*ledger, (0.123456, "0.123")]) != []


def test_ranking_counts_items_once(demo: Path) -> None:
    summary = _summary(demo)
    items = summary["counts"]["items"]
    rates = {w["system"]: w["items"] for w in summary["win_rates"]}
    for r in summary["comparison"]["ranking"]:
        assert r["n_items"] == rates[r["system"]] <= items


def test_report_sections_and_figures(demo: Path) -> None:
    report = (demo / "report.md").read_text(encoding="utf-8")
    for heading in ("Question", "Decision", "Setup", "Data", "Results", "Judge"):
        assert f"\n## {heading}\n" in report
    for figure in ("ranking", "forest", "win_matrix", "confusion", "judge_bias", "strata"):
        png = demo / "plots" / f"{figure}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"(plots/{figure}.png)" in report
    assert "pairwise_general@1 (sha256:" in report
    assert "GATE" not in report and "Gate: PROVISIONAL" in report
    # What the HTML collapses, report.md holds whole: headings and the tables under them.
    for heading in ("### Paired differences", "### Per category", "### Corrected estimates"):
        assert f"\n{heading}\n" in report
    assert "| pair | difference (net win rate) |" in report
    assert report.count("\n#### Item ") == 18  # 3 examples for 5 pairs, 3 disagreements


def test_html_collapses_long_rarely_needed_parts(demo: Path) -> None:
    page = (demo / "report.html").read_text(encoding="utf-8")
    for name in ("pairs", "per-stratum", "corrected", "setup"):
        assert re.search(f'<details class="h[234]" id="{name}">', page), name
    assert page.count('<details class="h4">') == 18  # each audited item
    # Nothing is left open: a <details> shows only its summary line until clicked.
    assert " open" not in "".join(re.findall(r"<details[^>]*>", page))


def test_html_is_self_contained(demo: Path) -> None:
    page = (demo / "report.html").read_text(encoding="utf-8")
    assert len(re.findall(r'<img alt="[^"]+" src="data:image/png;base64,', page)) == 6
    # Nothing fetched from anywhere: no external URL in any attribute.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "<link" not in page and "<script" not in page


# --------------------------------------------------------------------------- audit


def test_demo_examples_lead_to_their_judgment_lines_and_stored_replies(demo: Path) -> None:
    import sqlite3

    summary = _summary(demo)
    audit = summary["audit"]
    rows = (demo / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    pairs = [(n["upper"], n["lower"]) for n in summary["decision"]["neighbours"]]
    assert [(e["upper"], e["lower"]) for e in audit["examples"]] == pairs
    assert audit["judges"] == [{"judge": "recorded/gpt-4", "family": "openai", "inferred": False}]
    with sqlite3.connect(demo / "store.sqlite") as db:
        for shown in audit["examples"]:
            assert [e["why"] for e in shown["examples"]] == ["upper", "lower", "disputed"]
            for example in shown["examples"]:
                row = json.loads(rows[example["line"] - 1])
                assert (row["pair_id"], row["item_id"], row["winner"]) == (
                    example["pair_id"],
                    example["item_id"],
                    example["winner"],
                )
                for order in example["judges"][0]["orders"]:
                    side = order["order"].lower()
                    assert order["request_id"] == row[f"request_{side}"]
                    stored = db.execute(
                        'SELECT q.pair_id, q."order", v.reasoning FROM judge_requests q'
                        " JOIN verdicts v ON v.request_id = q.request_id WHERE q.request_id = ?",
                        (order["request_id"],),
                    ).fetchone()
                    # The recording has no reasoning: the replayed replies say so.
                    assert stored == (row["pair_id"], order["order"], "recorded verdict")
                    assert order["reasoning"]["text"] == row[f"reasoning_{side}"] == stored[2]
    # The largest disagreements: the experts' votes as the labels file holds them.
    votes: dict[tuple[str, frozenset[str]], Counter[str]] = {}
    for line in (MT_BENCH / "human_labels.jsonl").open(encoding="utf-8"):
        label = json.loads(line)
        key = (label["item_id"], frozenset((label["system_a"], label["system_b"])))
        choice = label[f"system_{label['winner']}"] if label["winner"] != "tie" else "tie"
        votes.setdefault(key, Counter())[choice] += 1
    found = audit["disagreements"]
    assert found["opposite"] >= len(found["shown"]) == 3
    for d in found["shown"]:
        systems = frozenset(c["system"] for c in d["example"]["candidates"])
        counted = votes[(d["example"]["item_id"], systems)]
        assert {v["choice"]: v["votes"] for v in d["votes"]} == dict(counted)
        assert counted.most_common(1)[0][0] == d["human_winner"] != d["judge_winner"]
    report = (demo / "report.md").read_text(encoding="utf-8")
    assert (
        "\n## Audit\n" in report
        and "| recorded/gpt-4 (recorded verdicts replayed) | openai |" in (report)
    )


# --------------------------------------------------------------------------- blinding


# --------------------------------------------------------------------------- re-rendering


def test_judge_report_rerenders_identically(demo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(demo, copy)
    before = (copy / "report.md").read_text(encoding="utf-8")
    for name in ("report.md", "report.html", "summary.json"):
        (copy / name).unlink()
    shutil.rmtree(copy / "plots")
    # In this process: test_first_screen runs `judge report` in a process of its own.
    result = run_cli_here("report", str(copy))
    assert result.returncode == 0, result.stderr
    assert (copy / "report.md").read_text(encoding="utf-8") == before
    assert (copy / "report.html").stat().st_size > 100_000


def test_same_seed_same_numbers_whatever_the_arrival_order(tmp_path: Path) -> None:
    # Replies arrive in a different order with 2 connections than with 16 (and random
    # latency); the bootstrap indexes rows, so only a fixed row order gives equal intervals.
    # `judge run` in this process: the CLI's own runs are tested elsewhere, here the order.
    summaries = []
    with running_simulator(
        SimulatorConfig(seed=5, latency={"kind": "lognormal", "median_s": 0.002, "sigma": 1.0})
    ) as sim:
        for connections in (2, 16):
            path = small_config(tmp_path, sim.openai_base_url, compare={"resamples": 500})
            config = yaml.safe_load(path.read_text())
            config["judges"][0]["max_connections"] = connections
            config["cache"] = str(tmp_path / f"cache{connections}.sqlite")
            path.write_text(yaml.safe_dump(config))
            run_dir = tmp_path / f"run{connections}"
            result = run_cli_here("run", str(path), "--run-dir", str(run_dir), "--quiet")
            assert result.returncode == 0, result.stderr
            summaries.append(_summary(run_dir))
    first, second = (s["comparison"] for s in summaries)
    assert first["comparisons"] == second["comparisons"]
    assert first["ranking"] == second["ranking"]
    assert summaries[0]["win_rates"] == summaries[1]["win_rates"]


def test_systems_latency_and_cost_are_reported(tmp_path: Path) -> None:
    import gzip
    import statistics

    rows = []
    with gzip.open(MT_BENCH / "responses.jsonl.gz", "rt", encoding="utf-8") as src:
        for line in src:
            row = json.loads(line)
            if row["system"] in ("alpaca-13b", "llama-13b") and row["item_id"].endswith("-t1"):
                k = len(rows)
                row |= {"latency_s": 0.5 + (k % 7) / 10, "cost_usd": 0.001 * (1 + k % 3)}
                rows.append(row)
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with running_simulator(SimulatorConfig(seed=4)) as sim:
        path = small_config(tmp_path, sim.openai_base_url, compare={"resamples": 200})
        config = yaml.safe_load(path.read_text())
        config["data"] |= {"responses": str(responses), "systems": ["alpaca-13b", "llama-13b"]}
        path.write_text(yaml.safe_dump(config))
        result = run_cli_here("run", str(path), "--run-dir", str(tmp_path / "run"), "--quiet")
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    for system in ("alpaca-13b", "llama-13b"):
        mine = [r for r in rows if r["system"] == system]
        median = statistics.median(r["latency_s"] for r in mine)
        mean = sum(r["cost_usd"] for r in mine) / len(mine)
        total = sum(r["cost_usd"] for r in mine)
        line = f"| {system} | {median:.3f} s | ${mean:.4f} | ${total:.2f} | {len(mine)} |"
        assert line in report
    report, summary, ledger = _traced(tmp_path / "run")
    assert _page_problems(report, summary, ledger) == []


def test_judge_report_on_a_non_run_is_a_clear_error(tmp_path: Path) -> None:
    result = run_cli_here("report", str(tmp_path))
    assert result.returncode == 2
    assert "not a run directory" in result.stderr
    assert "Traceback" not in result.stderr


# --------------------------------------------------------------------------- rendering


def test_report_renders_in_headless_chromium(demo: Path, tmp_path: Path) -> None:
    """The page opened from disk, background networking off: figures must show; and its first
    1280x800 holds the question, the answer, the trust badge and the gates' line."""
    if shutil.which("chromium") is None:
        pytest.fail("chromium is not installed: `apt-get install chromium` (make test does)")
    shot = tmp_path / "report.png"
    subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "screenshot_report.py"),
            str(demo),
            "--out",
            str(shot),
        ],
        check=True,
        timeout=180,
    )
    keep_artefact(shot, "report_full_page_demo.png")
    pixels = rgb_pixels(shot)
    assert pixels.shape[1] == 1100
    # Okabe-Ito blue (#0072B2): the forest plot's markers, drawn only if the embedded PNGs
    # decoded and rendered.
    assert colour_count(pixels, (0, 114, 178)) > 500
    # Text in the first screenful: the page laid out, not a blank or error page.
    top = pixels[:800]
    assert (top.sum(axis=-1) < 200).sum() > 2000
    first = tmp_path / "first_screen.png"
    layout = first_screen(demo, first)
    keep_artefact(first, "report_first_screen_demo.png")
    summary = _summary(demo)
    assert layout["viewport"][0] == 1280
    assert layout["question"]["text"] == summary["run"]["question"]
    assert layout["answer"]["text"] == summary["decision"]["answer"]["text"]
    assert layout["trust"]["text"] == "PROVISIONAL"
    assert layout["gates"] == [] and layout["no_gates"]["text"].startswith("No gate is configured")
    assert layout["stand_in"]["text"] == _model(demo).run.notice()
    shown = ("stand_in", "question", "answer", "trust", "no_gates")
    for name in (*shown, "ranking_chart", "ranking_table", "ranking_note"):
        assert 0 <= layout[name]["top"] < layout[name]["bottom"] <= 800, name
    assert layout["canaries"] is None  # the demo has no canaries
    # The PROVISIONAL badge's colour, on the rows the DOM puts it.
    badge = rgb_pixels(first)[int(layout["trust"]["top"]) : int(layout["trust"]["bottom"]) + 1]
    assert colour_count(badge, (0xA3, 0x5A, 0x00)) > 50
    # The chart's blue where the DOM puts the chart: the figure drawn, not a broken image.
    chart = rgb_pixels(first)[
        int(layout["ranking_chart"]["top"]) : int(layout["ranking_chart"]["bottom"]) + 1
    ]
    assert colour_count(chart, (0, 114, 178)) > 200
    # The page, closed sections closed, in screens of 1280x800 (it was 24.7 before the long
    # parts were collapsed; 7.3 then).
    assert layout["page_height"] / 800 < 10


def _model(run_dir: Path) -> RunSummary:
    return RunSummary.from_dict(_summary(run_dir))


README = REPO / "README.md"
_README_QUOTE = re.compile(r"<!-- The demo's report\.md, verbatim[^>]*-->\n((?:>.*\n\n?)+)")


def test_the_readme_quotes_the_demo_report_as_it_prints(demo: Path) -> None:
    """The README's excerpt of the demo's report is the page's own text: the first lines of
    its Decision, the answer first (the session's demo run: nothing extra to run)."""
    found = _README_QUOTE.search(README.read_text(encoding="utf-8"))
    assert found is not None, "README: the quoted demo report is gone (or its marker changed)"
    quoted = found.group(1).strip("\n")
    report = (demo / "report.md").read_text(encoding="utf-8")
    decision = report.split("\n## Decision\n\n", 1)[1]
    assert decision.startswith(quoted + "\n")
    answer = _model(demo).analysed().decision.answer.text
    assert quoted.splitlines()[0] == f"> **{answer}**"
