"""What `judge align --rejudge` found and measured (`alignment.json` in the run dir, and the
report's "Aligning the judge" section): the notes and examples distilled from the judge's
disagreements with people on the training items, how each candidate rubric did there, and
the chosen one against the original on the held-out items only."""

from __future__ import annotations

from pydantic import Field

from judge.summary.base_model import SummaryModel


class AgreementScore(SummaryModel):
    """Agreement with the people's majority label, with a cluster-bootstrap interval over
    items."""

    keys: int
    agreement: float
    ci_low: float
    ci_high: float


class Gain(SummaryModel):
    """One rubric against another on the same keys: both scores and their paired difference."""

    before: AgreementScore
    after: AgreementScore
    gain: float
    gain_low: float
    gain_high: float
    gate_before: str | None = None
    """The trust gate's verdict (held-out keys only)."""
    gate_after: str | None = None


class AlignmentFinding(SummaryModel):
    topic: str
    """`position`, `length` or `tie` (`calibration.disagreements`)."""
    note: str
    """The clarification the candidate rubrics carry."""
    evidence: str
    """The test behind it, on the training items."""


class AlignmentCandidate(SummaryModel):
    name: str
    rubric: str
    """`<id>@<version>` and its hash."""
    notes: int
    examples: int
    train: Gain | None
    """On the training items the examples were not taken from (None: a dry run)."""
    requests: int
    """Requests its training run held."""


class AlignmentControl(SummaryModel):
    """The same distillation and choice on the training items with their labels shuffled."""

    findings: list[AlignmentFinding]
    chosen: str | None
    heldout: Gain | None
    """The control's choice on the held-out items, against the real labels."""


class PlannedRun(SummaryModel):
    """A dry run's price of one of the alignment's runs."""

    name: str
    requests: int
    to_send: int
    """Of those, not answered by the response cache."""
    cost_usd: float | None
    """Estimated in the judge's mode with prompt caching (None: unpriced)."""


class RubricAlignment(SummaryModel):
    judge: str
    simulated: bool
    """The judge is the built-in simulator: its response to the notes is planted (`heed`)."""
    rubric_from: str
    """The run's rubric, `<id>@<version>`."""
    labels: str
    """The human labels fitted and scored on: file name and sha256."""
    seed: int
    share: float
    train_items: int
    heldout_items: int
    train_keys: int
    heldout_keys: int
    level: float
    resamples: int
    findings: list[AlignmentFinding]
    examples: int
    candidates: list[AlignmentCandidate]
    chosen: str | None
    """The candidate whose training gain's lower bound was above zero, the best such; None:
    none was, and the held-out items were not judged again."""
    rubric_file: str | None
    """Where the chosen rubric was written (a new version, with its provenance)."""
    heldout: Gain | None
    """The chosen rubric against the run's own verdicts, on the held-out items only."""
    control: AlignmentControl | None = None
    requests: int
    """Requests the alignment's runs held (answered from the cache or paid)."""
    cost_usd: float | None
    """What they cost (None: a judge without a price)."""
    planned: list[PlannedRun] = Field(default_factory=list)
    """A dry run: every run the alignment could need, priced; nothing was sent."""

    def lines(self) -> list[str]:
        """The console's account, in the order a reader needs it."""
        planted = " (simulated: its response to notes is planted)" if self.simulated else ""
        out = [
            f"judge {self.judge}{planted}, "
            f"rubric {self.rubric_from}; split by item (seed {self.seed}): "
            f"{self.train_items} training items ({self.train_keys} keys), "
            f"{self.heldout_items} held-out items ({self.heldout_keys} keys)",
        ]
        out += [f"finding: {f.evidence}" for f in self.findings] or [
            "finding: no pattern of disagreement rejected at 5% on the training items"
        ]
        out.append(f"examples: {self.examples} training comparisons the judge got wrong")
        for c in self.candidates:
            train = f"training {_gain(c.train)}" if c.train else "not judged (dry run)"
            out.append(f"candidate {c.name} ({c.notes} notes, {c.examples} examples): {train}")
        if self.planned:
            out.append("chosen: on the training runs' results, once they are judged")
        elif self.chosen is None:
            out.append("chosen: none (no candidate's training gain was above zero at its bound)")
        else:
            out.append(f"chosen: {self.chosen}, written to {self.rubric_file}")
        if self.heldout is not None:
            out.append(f"held-out: {_gain(self.heldout)}")
            out.append(
                f"trust gate on the held-out keys: {self.heldout.gate_before} before, "
                f"{self.heldout.gate_after} after"
            )
        if self.control is not None:
            held = _gain(self.control.heldout) if self.control.heldout else "nothing chosen"
            out.append(
                f"control (shuffled training labels): {len(self.control.findings)} finding(s), "
                f"chosen {self.control.chosen or 'none'}; held-out {held}"
            )
        for plan in self.planned:
            price = "unpriced" if plan.cost_usd is None else f"${plan.cost_usd:.4f}"
            out.append(
                f"would run {plan.name}: {plan.requests:,} requests, {plan.to_send:,} to send, "
                f"{price}"
            )
        if self.planned:
            prices = [p.cost_usd for p in self.planned]
            total = "unknown" if None in prices else f"${sum(p or 0 for p in prices):.4f}"
            out.append(f"at most {total} in all (dry run: nothing was sent)")
            return out
        cost = "unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        out.append(f"requests: {self.requests:,} (cost {cost})")
        return out


def _score(s: AgreementScore) -> str:
    return f"{s.agreement:.1%} [{s.ci_low:.1%}, {s.ci_high:.1%}]"


def _gain(g: Gain) -> str:
    return (
        f"{_score(g.before)} before, {_score(g.after)} after, gain {g.gain:+.1%} "
        f"[{g.gain_low:+.1%}, {g.gain_high:+.1%}] over {g.before.keys} keys"
    )
