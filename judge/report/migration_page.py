"""`judge migrate`'s printed lines and its `migrate.md`, read from the typed `Migration` (a
simulated or replayed judge is said first and last in both)."""

from __future__ import annotations

from judge.summary.migration import AgainstHumans, Migration, MovedPair

_WORDS = {
    "flips": "flips sign",
    "loses": "loses told apart",
    "gains": "gains told apart",
    "unchanged": "unchanged",
    "not estimable": "not estimable",
}


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"


def _num(x: float | None, signed: bool = True) -> str:
    if x is None:
        return "n/a"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def _interval(
    value: float | None, low: float | None, high: float | None, signed: bool = True
) -> str:
    if low is None or high is None:
        return f"{_num(value, signed)} [no interval]"
    return f"{_num(value, signed)} [{_num(low, signed)}, {_num(high, signed)}]"


def _told(told: bool) -> str:
    return "told apart" if told else "not told apart"


def _design_line(m: Migration) -> str:
    d = m.design
    cost = "cost unknown" if m.cost_usd is None else f"${m.cost_usd:.4f}"
    return (
        f"re-judged with {m.new_judge}: {d.labelled.rejudged:,} of {d.labelled.items:,} "
        f"labelled items and {d.other.rejudged:,} of {d.other.items:,} others (seed {d.seed}); "
        f"{m.requests:,} requests, {m.sent:,} sent by this run, {cost}"
    )


def _mapping_lines(m: Migration) -> list[str]:
    mp = m.mapping
    a, alpha = mp.agreement, mp.alpha
    rows = []
    for label, counts in zip(mp.labels, mp.confusion, strict=True):
        cells = ", ".join(f"{n:,} {col}" for col, n in zip(mp.labels, counts, strict=True))
        rows.append(f"old {label}: new {cells}")
    return [
        f"{m.old_judge} vs {m.new_judge} on {mp.keys:,} re-judged keys: agreement "
        f"{_pct(a.value)} [{_pct(a.ci_low)}, {_pct(a.ci_high)}], alpha "
        f"{_interval(alpha.value, alpha.ci_low, alpha.ci_high, signed=False)}",
        "  " + "; ".join(rows) + " (ahead: the system the old run had ahead)",
    ]


def _human(h: AgainstHumans) -> str:
    a = h.alpha
    return (
        f"{h.judge} alpha {_interval(a.value, a.ci_low, a.ci_high, signed=False)}, "
        f"gate {h.gate.verdict.upper()}"
    )


def _pair_line(p: MovedPair) -> str:
    old = f"old {_interval(p.old.mean_diff, p.old.ci_low, p.old.ci_high)} {_told(p.old.told_apart)}"
    if p.new is None or p.shift is None:
        return f"  {_WORDS[p.change]:<16} {p.a} vs {p.b}: {old}; {p.reason}"
    n, s = p.new, p.shift
    return (
        f"  {_WORDS[p.change]:<16} {p.a} vs {p.b}: {old} -> new "
        f"{_interval(n.mean_diff, n.ci_low, n.ci_high)} {_told(n.told_apart)}; shift "
        f"{_interval(s.mean_diff, s.ci_low, s.ci_high)} ({p.rejudged} of {p.items} items "
        "re-judged)"
    )


def migration_lines(m: Migration) -> list[str]:
    """What `judge migrate` prints (the notice is printed apart, first and last)."""
    lines = [_design_line(m), *_mapping_lines(m)]
    if m.humans:
        keys = m.humans[0].keys
        lines.append(
            f"against humans on {keys:,} re-judged labelled keys: "
            + "; ".join(_human(h) for h in m.humans)
        )
    lines.append(
        f"past comparisons, net win rate a - b on all items (a: ahead in the old run; told "
        f"apart: Holm-adjusted, {m.ci:.0%}):"
    )
    lines += [_pair_line(p) for p in m.comparisons]
    lines.append(
        "changes: "
        + ", ".join(f"{n} {_WORDS[c]}" for c, n in m.changes.items() if n or c != "not estimable")
    )
    return lines + [f"note: {note}" for note in m.notes]


def migration_markdown(m: Migration) -> str:
    """`migrate.md`: the same content as the printed lines, as a page."""
    parts = [f"# Migrating `{m.old_run}` to {m.new_judge}", ""]
    if m.notice:
        parts += [f"> **{m.notice}**", ""]
    parts += [_design_line(m) + ".", "", "## The two judges", ""]
    mp = m.mapping
    parts += [_mapping_lines(m)[0] + ".", ""]
    parts += ["| old \\ new | " + " | ".join(mp.labels) + " |", "|---|" + "---:|" * len(mp.labels)]
    for label, counts in zip(mp.labels, mp.confusion, strict=True):
        parts.append(f"| {label} | " + " | ".join(f"{n:,}" for n in counts) + " |")
    parts += ["", "(ahead: the system the old run had ahead won the key.)", ""]
    if m.humans:
        parts += ["## Against the human labels", "", "| judge | keys | alpha | agreement | gate |"]
        parts.append("|---|---:|---|---|---|")
        for h in m.humans:
            a, g = h.alpha, h.agreement
            parts.append(
                f"| {h.judge} | {h.keys:,} | {_interval(a.value, a.ci_low, a.ci_high, False)} | "
                f"{_pct(g.value)} [{_pct(g.ci_low)}, {_pct(g.ci_high)}] | {h.gate.verdict} |"
            )
        parts.append("")
    parts += _pairs_table(m)
    parts += [f"- {note}" for note in m.notes]
    if m.notice:
        parts += ["", f"> **{m.notice}**"]
    return "\n".join(parts) + "\n"


def _pairs_table(m: Migration) -> list[str]:
    rows = [
        "## Past comparisons",
        "",
        f"Net win rate a - b on all items, a the system the old run had ahead; told apart: "
        f"Holm-adjusted paired test at {1 - m.ci:.2g}. New: the difference estimator, old "
        "on every item corrected by new - old on the re-judged ones "
        f"({m.resamples:,} resamples, seed {m.seed}).",
        "",
        "| change | a vs b | old | new | shift (new - old) | re-judged |",
        "|---|---|---|---|---|---:|",
    ]
    for p in m.comparisons:
        old = f"{_interval(p.old.mean_diff, p.old.ci_low, p.old.ci_high)} {_told(p.old.told_apart)}"
        new = shift = p.reason or "n/a"
        if p.new is not None and p.shift is not None:
            n, s = p.new, p.shift
            new = f"{_interval(n.mean_diff, n.ci_low, n.ci_high)} {_told(n.told_apart)}"
            shift = _interval(s.mean_diff, s.ci_low, s.ci_high)
        rows.append(
            f"| {_WORDS[p.change]} | {p.a} vs {p.b} | {old} | {new} | {shift} | "
            f"{p.rejudged} of {p.items} |"
        )
    return [*rows, ""]
