"""The audit's part of `summary.json` (`judge.run.analyse_audit`): verdicts a reader can inspect and
trace back to the files of the run, where the judge and the humans disagree most, how a
panel's judges agree with each other, and each judge's family.

Texts (questions, candidates' outputs, the judges' reasoning) are stored as the page shows
them, cut to an `Excerpt`, so every word on the page is a value of this file."""

from __future__ import annotations

from typing import Literal

from judge.summary.base_model import Estimate, SummaryModel


class Excerpt(SummaryModel):
    """The start of a text, cut at a word boundary near the audit's limit."""

    text: str
    chars: int
    """The whole text's length in characters: more than `len(text)` when it was cut."""

    @property
    def cut(self) -> bool:
        return len(self.text) < self.chars


class Candidate(SummaryModel):
    """One side of a pair, unblinded: the system, and its output as the judge saw it
    (identity markers scrubbed)."""

    system: str
    blind_id: str
    output: Excerpt
    earlier_turns: int
    """Messages of the conversation before this answer (multi-turn items), not shown."""


class OrderVerdict(SummaryModel):
    """One request: a judge's reply for one presentation order of the pair."""

    order: Literal["AB", "BA"]
    first: str
    """The system shown first (as "A") in this order."""
    request_id: str | None
    """Its row in store.sqlite: `judge_requests`, `judge_responses` and `verdicts` share it.
    None for an order the run did not plan."""
    winner: str | None
    """The winner this reply named (a system or `tie`); None without a verdict."""
    reasoning: Excerpt | None
    failure: str | None
    """Why there is no verdict (`parse failure: ...`, `error: ...`); None with one."""
    reply: Excerpt | None
    """The reply as received, when it could not be parsed."""


class JudgeVerdicts(SummaryModel):
    judge: str
    line: int
    """The line of `judgments.jsonl` holding this judge's judgment of the pair (from 1)."""
    winner: str | None
    """The judgment: both orders combined (`aggregate.inconsistent`)."""
    orders: list[OrderVerdict]


Why = Literal["upper", "lower", "disputed", "other", "disagreement"]
"""Why an example was chosen: every verdict named the higher-ranked system (`upper`), or the
lower one (`lower`); the verdicts named different winners (`disputed`, across orders and
judges); a filler when a kind has no item (`other`); the judge against the humans
(`disagreement`)."""


class Example(SummaryModel):
    why: Why
    item_id: str
    pair_id: str
    strata: dict[str, str]
    question: Excerpt
    """The item's prompt (its last user turn for a conversation)."""
    candidates: list[Candidate]
    """The higher-ranked system first (for a disagreement: the judge's pick first)."""
    judge: str
    """Whose judgment `winner` and `line` are: the judge the comparison used (or `panel`)."""
    winner: str | None
    line: int
    """The line of `judgments.jsonl` holding `judge`'s judgment of the pair (from 1)."""
    judges: list[JudgeVerdicts]
    """Every judge that graded the pair, each with its requests."""


class NeighbourExamples(SummaryModel):
    """Examples for one neighbouring pair of the ranking (`decision.neighbours`)."""

    upper: str
    lower: str
    pairs: int
    """Items on which a judge graded these two systems."""
    agreed_upper: int
    """Items on which every verdict (both orders, every judge) named `upper`."""
    agreed_lower: int
    disputed: int
    """Items on which the verdicts named different winners (a system, the other, or a tie)."""
    examples: list[Example]


class HumanVote(SummaryModel):
    choice: str
    """A system, or `tie`."""
    votes: int


class Disagreement(SummaryModel):
    example: Example
    judge_winner: str
    human_winner: str
    """The human majority: the choice with strictly the most votes."""
    votes: list[HumanVote]
    """The humans' votes on this pair, most first."""


class Disagreements(SummaryModel):
    """Where the judge's verdict is opposite to the human majority."""

    judge: str
    keys: int
    """Labelled pairs with a judge verdict naming a system and a human majority naming one."""
    opposite: int
    """Of those, pairs whose human majority named the other system."""
    shown: list[Disagreement]
    """The largest: the most human votes against the judge's pick, net of those for it."""


class PanelAgreement(SummaryModel):
    """How the judges of a panel agree with each other."""

    judges: list[str]
    alpha: Estimate
    """Krippendorff's alpha among the judges (units: pairs, or responses for scores)."""
    level: Literal["nominal", "interval"]
    units: int
    """Units graded by two judges or more."""
    unanimous: int
    """Of those, units on which every judge gave the same verdict (or score)."""
    split: int | None
    """Panel judgments whose majority was split (their verdict is a tie); None for scores."""
    panel_judgments: int


class JudgeFamily(SummaryModel):
    judge: str
    family: str
    inferred: bool
    """From the model's name (`judge.families`), not set in the config."""


class Audit(SummaryModel):
    judges: list[JudgeFamily]
    excerpt_chars: int
    """Texts are cut near this many characters."""
    examples: list[NeighbourExamples]
    examples_note: str | None
    """Why there are no examples, when there are none."""
    disagreements: Disagreements | None
    """None without human labels (or for absolute scores)."""
    panel: PanelAgreement | None
    """None with one judge."""
