"""Rubrics: versioned YAML judge instructions, validated at load and rendered into chat messages.

A rubric's templates are trusted (written by the evaluator); the values rendered into them are
not. Prompts, references and responses are candidate data that may try to talk to the judge,
so they only ever appear between delimiter tags (`[RESPONSE A]` ... `[/RESPONSE A]`), and any
look-alike of those tags inside them is rewritten so the text cannot close its own delimiter
or open a forged one.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Self

import jinja2
from jinja2 import meta
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from judge.config.keys import unknown_key
from judge.errors import ConfigError, LimitError
from judge.hashing import content_hash
from judge.rubric import templates
from judge.rubric.verdict_forms import defuse_delimiters, defuse_verdicts, delimiter_neutraliser
from judge.types import BlindedResponse, ChatMessage, Item, Label
from judge.yamlfile import read_yaml_mapping

PAIRWISE_VARIABLES: tuple[str, ...] = (
    "prompt",
    "reference",
    "slot_a",
    "slot_b",
    "history_a",
    "history_b",
    "criteria",
    "scale",
)
"""Placeholders a pairwise rubric's templates may use."""

ABSOLUTE_VARIABLES: tuple[str, ...] = (
    "prompt",
    "reference",
    "response",
    "history",
    "criteria",
    "scale",
)
"""Placeholders an absolute rubric's templates may use."""

# Candidate-controlled values: only in the user message, only between delimiters, neutralised.
_UNTRUSTED = frozenset(
    {"prompt", "reference", "slot_a", "slot_b", "history_a", "history_b", "response", "history"}
)
_REQUIRED = {"pairwise": ("prompt", "slot_a", "slot_b"), "absolute": ("prompt", "response")}

# judge/rubric/rubrics.py -> <repo>/rubrics. This module's own path rather than `judge.__file__`:
# an editable install made before judge/__init__.py existed maps `judge` as a namespace
# package, whose `__file__` is None.
BUILTIN_DIR = Path(__file__).resolve().parents[2] / "rubrics"
"""Where bare rubric ids (`pairwise_general`) are looked up."""

_ROLE_NAMES = {"system": "System", "user": "User", "assistant": "Assistant"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PairwiseScale(_Strict):
    labels: tuple[Label, ...]
    """Verdicts the judge may give, a subset of A, B, tie that contains A and B."""

    @field_validator("labels")
    @classmethod
    def _labels_ok(cls, labels: tuple[Label, ...]) -> tuple[Label, ...]:
        if len(set(labels)) != len(labels):
            raise ValueError(f"duplicate label in {list(labels)}")
        if not {"A", "B"} <= set(labels):
            raise ValueError(f"must contain A and B, got {list(labels)}")
        return labels


class AbsoluteScale(_Strict):
    min: int
    """Lowest score."""
    max: int
    """Highest score."""
    anchors: dict[int, str] = Field(default_factory=dict)
    """Score -> what that level means, shown to the judge; keys within [min, max]."""

    @model_validator(mode="after")
    def _range_ok(self) -> Self:
        if self.min >= self.max:
            raise ValueError(f"min ({self.min}) must be below max ({self.max})")
        for level in self.anchors:
            if not self.min <= level <= self.max:
                raise ValueError(
                    f"anchors.{level}: level {level} is outside the scale [{self.min}, {self.max}]"
                )
        return self


def _scale_kind(value: Any) -> str:
    # Which scale model to validate with follows from its keys; whether it fits the rubric's
    # `kind` is checked on the rubric, where the message can say so.
    if isinstance(value, Mapping):
        return "pairwise" if "labels" in value else "absolute"
    return "pairwise" if isinstance(value, PairwiseScale) else "absolute"


Scale = Annotated[
    Annotated[PairwiseScale, Tag("pairwise")] | Annotated[AbsoluteScale, Tag("absolute")],
    Discriminator(_scale_kind),
]


class Criterion(_Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    """Short snake_case name; the JSON key of this criterion's score in multi-criterion replies."""
    text: str = Field(min_length=1)
    """What the judge should look for."""


class OutputSpec(_Strict):
    format: Literal["json"] = "json"
    """Reply format asked of the judge (the parser also accepts common free-text forms)."""
    fields: tuple[str, ...]
    """JSON keys in order, reasoning first: [reasoning, verdict] for pairwise rubrics,
    [reasoning, score] or (one score per criterion) [reasoning, scores] for absolute ones."""
    labels: dict[str, Label] = Field(default_factory=dict)
    """Extra answers the rubric tells the judge to use, mapped to scale labels (e.g.
    {"1": A, "2": B}); the built-in synonyms (Response A, [[C]], draw, ...) always apply."""


class Example(_Strict):
    """A comparison people judged, shown to the judge ahead of the task (what `judge align`
    distils from a judge's disagreements with human labels). Its texts are candidate data: they
    are rendered between their own delimiters in the user message and neutralised like any
    response."""

    prompt: str = Field(min_length=1)
    """The user request, as the example's responses answered it."""
    response_a: str
    """The response shown first."""
    response_b: str
    """The response shown second."""
    verdict: Label
    """What people decided: A, B or tie."""


class Provenance(_Strict):
    """Where a derived rubric came from (`judge align` writes it): enough to tell which labels
    and which split shaped it, and to refuse scoring it on the labels it was fitted on."""

    method: str
    """What derived it, e.g. `judge align`."""
    derived_from: str
    """The rubric it was derived from, `<id>@<version>`."""
    derived_hash: str
    """That rubric's `hash`."""
    judge: str
    """The judge whose disagreements it was fitted to."""
    labels: str
    """The human labels fitted on: file name and sha256."""
    split_seed: int
    """Seed of the split by item into training and held-out items."""
    train_items: tuple[str, ...]
    """The items fitted on; scores on them are not evidence for this rubric."""
    evidence: tuple[str, ...] = ()
    """Why each clarification was written, as measured on the training items."""
    chosen_by: str = ""
    """How this version was chosen among the candidates."""


# Fields a rubric gained after its hash was first defined: left out of the hash while unused,
# so every rubric written before them keeps its hash (and its runs, their cache).
_LATER_FIELDS = ("clarifications", "examples", "provenance")
_EXAMPLE_TAGS = {"[EXAMPLE", "[EXAMPLE USER MESSAGE", "[EXAMPLE RESPONSE A", "[EXAMPLE RESPONSE B"}
"""The examples block's delimiters, neutralised in every candidate text of a rubric with
examples."""
NOTES_HEADING = "Notes from comparing this judge's earlier verdicts with people's:"
"""The heading of a rubric's clarifications in the system message (the simulator's `heed`
reads what follows it)."""


class Rubric(_Strict):
    """One judge instruction set. Bump `version` on any wording change; `hash` changes anyway."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    """Stable name, stored with every verdict (`<id>@<version>`)."""
    version: int = Field(ge=1, strict=True)
    """Bumped on every wording change."""
    kind: Literal["pairwise", "absolute"]
    """`pairwise`: compare two responses (verdict A/B/tie); `absolute`: score one response."""
    description: str = Field(min_length=1)
    """One line for reports: what the rubric asks."""
    scale: Scale
    """Pairwise: {labels: [A, B, tie]}; absolute: {min: 1, max: 5, anchors: {1: ..., 5: ...}}."""
    criteria: tuple[Criterion, ...] = ()
    """What to judge on; in multi-criterion absolute rubrics each is scored separately."""
    reference: Literal["none", "optional", "required"] = "none"
    """Whether items need a reference answer (`required` fails on an item without one)."""
    system: str = Field(min_length=1)
    """Sandboxed Jinja2 template of the system message (no untrusted placeholders)."""
    user: str = Field(min_length=1)
    """Sandboxed Jinja2 template of the user message; untrusted values sit between delimiters."""
    output: OutputSpec
    """Reply format."""
    clarifications: tuple[str, ...] = ()
    """Trusted notes appended to the system message under a heading of their own, e.g. what
    `judge align` measured this judge getting wrong against people."""
    examples: tuple[Example, ...] = ()
    """Pairwise only: comparisons people judged, shown at the start of the user message (a
    prefix every request shares, so prompt caching keeps their cost down)."""
    provenance: Provenance | None = None
    """Set on a derived rubric (`judge align`); absent on a hand-written one."""

    _neutraliser: re.Pattern[str] | None = PrivateAttr(default=None)
    _hash: str = PrivateAttr(default="")
    _memo: dict[str, str] | None = PrivateAttr(default=None)
    _examples_block: str | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        self._check_scale_and_output()
        variables = PAIRWISE_VARIABLES if self.kind == "pairwise" else ABSOLUTE_VARIABLES
        _compile(self.system, "system", variables)
        _compile(self.user, "user", variables)
        self._check_placeholders()
        tags = _delimiter_tags(self.system + "\n" + self.user)
        if self.examples:
            if self.kind != "pairwise":
                raise ValueError("examples: only pairwise rubrics show judged examples")
            tags |= _EXAMPLE_TAGS
        self._neutraliser = delimiter_neutraliser(tags)
        self._check_delimited(variables, tags)
        dumped = self.model_dump(mode="json")
        for name in _LATER_FIELDS:
            if not dumped[name]:
                del dumped[name]
        self._hash = content_hash(dumped)
        return self

    @property
    def hash(self) -> str:
        """`sha256:` of the canonical content: any wording change changes it, key order not."""
        return self._hash

    @property
    def answer_field(self) -> str:
        """The JSON key carrying the verdict: `verdict`, `score` or `scores`."""
        return self.output.fields[-1]

    @property
    def labels(self) -> tuple[Label, ...]:
        """Pairwise labels the judge may give (empty for absolute rubrics)."""
        return self.scale.labels if isinstance(self.scale, PairwiseScale) else ()

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        # Compiled templates and the hash are derived state: an update must re-validate.
        if not update:
            return super().model_copy(deep=deep)
        return type(self).model_validate({**self.model_dump(), **update})

    def _check_scale_and_output(self) -> None:
        fields = list(self.output.fields)
        if self.kind == "pairwise":
            if not isinstance(self.scale, PairwiseScale):
                raise ValueError("scale: a pairwise rubric needs {labels: [A, B, tie]}")
            if fields != ["reasoning", "verdict"]:
                raise ValueError(
                    f"output.fields: a pairwise rubric needs [reasoning, verdict] in that order "
                    f"(reasoning before the verdict), got {fields}"
                )
            for answer, label in self.output.labels.items():
                if label not in self.scale.labels:
                    raise ValueError(
                        f"output.labels.{answer}: label '{label}' is not in scale.labels "
                        f"{list(self.scale.labels)}"
                    )
            return
        if not isinstance(self.scale, AbsoluteScale):
            raise ValueError("scale: an absolute rubric needs {min: 1, max: 5, anchors: {...}}")
        if self.output.labels:
            raise ValueError("output.labels: only pairwise rubrics have labels")
        if fields not in (["reasoning", "score"], ["reasoning", "scores"]):
            raise ValueError(
                "output.fields: an absolute rubric needs [reasoning, score] or, with one score "
                f"per criterion, [reasoning, scores] (reasoning first), got {fields}"
            )
        if fields[1] == "scores" and not self.criteria:
            raise ValueError("output.fields: [reasoning, scores] needs criteria to score")
        if fields[1] == "score" and len(self.criteria) > 1:
            raise ValueError(
                "output.fields: a rubric with several criteria scores each separately: "
                "use [reasoning, scores], or merge the criteria into one"
            )
        ids = [c.id for c in self.criteria]
        if len(set(ids)) != len(ids):
            raise ValueError(f"criteria: duplicate id in {ids}")

    def _check_placeholders(self) -> None:
        used = _placeholders(self.user)
        for name in _REQUIRED[self.kind]:
            if name not in used:
                raise ValueError(f"user: a {self.kind} rubric must show {{{{ {name} }}}}")
        if self.reference == "required" and "reference" not in used:
            raise ValueError("user: reference is required but {{ reference }} is never shown")
        if self.reference == "none" and "reference" in used:
            raise ValueError("user: uses {{ reference }} but the rubric has reference: none")
        leaked = sorted(_placeholders(self.system) & _UNTRUSTED)
        if leaked:
            raise ValueError(
                f"system: '{leaked[0]}' is candidate data and may only appear in the user "
                "message, between delimiters"
            )

    def _check_delimited(self, variables: Sequence[str], tags: set[str]) -> None:
        # Render with a sentinel per untrusted value and check each lands inside an open
        # delimiter pair: this follows {% if %} blocks exactly as real rendering does.
        sentinels = {name: f"\x00{name}\x00" for name in variables if name in _UNTRUSTED}
        values = {**sentinels, **self._trusted_values()}
        for key in ("system", "user"):
            try:
                text = templates.render({key: getattr(self, key)}, values)[key]
            except jinja2.TemplateError as exc:
                raise ValueError(f"{key}: template fails to render: {exc}") from None
            except LimitError as exc:  # not a ValueError: pydantic lets it through as it is
                raise _in_rubric(self.id, exc) from None
        open_tags: list[tuple[str, str]] = []  # (normalised name, as written)
        pattern = re.compile(r"\x00(\w+)\x00|" + _TAG_PATTERN)
        for match in pattern.finditer(text):
            if match.group(1):
                if not open_tags:
                    raise ValueError(
                        f"user: '{match.group(1)}' is candidate data and must sit between "
                        "delimiters such as [RESPONSE A] ... [/RESPONSE A], so it cannot pass "
                        "for instructions"
                    )
                continue
            name = _tag_name(match)
            if name not in tags:
                continue  # bracketed words that are not delimiters, e.g. "[[A]]" in instructions
            if match.group("close") is None:
                open_tags.append((name, match.group(0)))
            elif open_tags and open_tags[-1][0] == name:
                open_tags.pop()
            else:
                opened = f"'{open_tags[-1][1]}'" if open_tags else "nothing"
                raise ValueError(f"user: delimiter '{match.group(0)}' closes {opened}")
        if open_tags:
            raise ValueError(f"user: delimiter '{open_tags[-1][1]}' is never closed")

    def system_text(self) -> str:
        """The system message every request of this rubric starts with: its static prefix (the
        system template takes no candidate data)."""
        empty = dict.fromkeys(_UNTRUSTED, "")
        try:
            out = templates.render({"system": self.system}, {**empty, **self._trusted_values()})
        except jinja2.TemplateError as exc:
            raise ConfigError(f"rubric '{self.id}': template failed to render: {exc}") from None
        except LimitError as exc:
            raise _in_rubric(self.id, exc) from None
        return self._with_notes(out["system"].strip())

    def _with_notes(self, system: str) -> str:
        if not self.clarifications:
            return system
        notes = "\n".join(f"- {note}" for note in self.clarifications)
        return f"{system}\n\n{NOTES_HEADING}\n{notes}"

    def _trusted_values(self) -> dict[str, str]:
        return {"criteria": _criteria_text(self.criteria), "scale": _scale_text(self.scale)}

    def _render(self, item: Item, untrusted: dict[str, str]) -> tuple[ChatMessage, ...]:
        reference = (item.reference or "").strip()
        if self.reference == "required" and not reference:
            raise ConfigError(
                f"rubric '{self.id}' needs a reference answer, but item '{item.item_id}' has none; "
                "add a `reference` to that item or use a rubric with reference: optional"
            )
        values = {
            "prompt": _prompt_text(item.prompt),
            "reference": reference if self.reference != "none" else "",
            **untrusted,
        }
        values = {name: self._neutralise(text) for name, text in values.items()}
        values.update(self._trusted_values())
        try:
            out = templates.render({"system": self.system, "user": self.user}, values)
        except jinja2.TemplateError as exc:
            raise ConfigError(f"rubric '{self.id}': template failed to render: {exc}") from None
        except LimitError as exc:
            raise _in_rubric(self.id, exc) from None
        system, user = self._with_notes(out["system"].strip()), out["user"].strip()
        if self.examples:
            user = f"{self._examples_text()}\n\n{user}"
        return (
            ChatMessage(role="system", content=system),
            ChatMessage(role="user", content=user),
        )

    def _examples_text(self) -> str:
        """The examples block: the same for every request, so it is rendered once."""
        if self._examples_block is None:
            n = len(self.examples)
            blocks = [
                f"[EXAMPLE]\nExample {i} of {n}\n[EXAMPLE USER MESSAGE]\n"
                f"{self._neutralise_now(e.prompt)}\n[/EXAMPLE USER MESSAGE]\n"
                f"[EXAMPLE RESPONSE A]\n{self._neutralise_now(e.response_a)}\n"
                f"[/EXAMPLE RESPONSE A]\n[EXAMPLE RESPONSE B]\n"
                f"{self._neutralise_now(e.response_b)}\n[/EXAMPLE RESPONSE B]\n"
                f"People's verdict: {e.verdict}\n[/EXAMPLE]"
                for i, e in enumerate(self.examples, 1)
            ]
            self._examples_block = (
                "First, comparisons that people judged, to show how they weigh responses. "
                "They are examples only: do not judge them.\n\n"
                + "\n\n".join(blocks)
                + "\n\nNow the comparison to judge."
            )
        return self._examples_block

    @contextlib.contextmanager
    def neutralised(self) -> Iterator[None]:
        """Within the block each distinct text is neutralised once: one item's requests show
        each of its texts several times (both orders, every pair)."""
        previous = self._memo
        self._memo = {} if previous is None else previous
        try:
            yield
        finally:
            self._memo = previous

    def _neutralise(self, text: str) -> str:
        memo = self._memo if self._memo is not None else {}
        if text not in memo:
            memo[text] = self._neutralise_now(text)
        return memo[text]

    def _neutralise_now(self, text: str) -> str:
        text = defuse_verdicts(text)  # a quoted "[[A]]" must not read as the judge's verdict
        return defuse_delimiters(self._neutraliser, text)


def load_rubric(ref: str | Path) -> Rubric:
    """A rubric from a YAML file path, or a built-in one by bare id (e.g. `pairwise_general`)."""
    path = _locate(ref)
    raw = read_yaml_mapping(path, "rubric")
    try:
        return Rubric.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {_format_errors(exc)}") from None


def builtin_rubrics() -> list[str]:
    """Ids of the rubrics shipped in `rubrics/`."""
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.yaml"))


def render_pairwise(
    rubric: Rubric, item: Item, first: BlindedResponse, second: BlindedResponse
) -> tuple[ChatMessage, ...]:
    """System and user messages comparing `first` (slot A) with `second` (slot B). The caller
    swaps the arguments for the BA order."""
    if rubric.kind != "pairwise":
        raise ConfigError(f"rubric '{rubric.id}' is {rubric.kind}: it cannot judge a pair")
    _same_item(item, first, second)
    return rubric._render(
        item,
        {
            "slot_a": first.output,
            "slot_b": second.output,
            "history_a": _transcript(first.context),
            "history_b": _transcript(second.context),
        },
    )


def render_absolute(
    rubric: Rubric, item: Item, response: BlindedResponse
) -> tuple[ChatMessage, ...]:
    """System and user messages asking for a score of one response."""
    if rubric.kind != "absolute":
        raise ConfigError(f"rubric '{rubric.id}' is {rubric.kind}: it cannot score one response")
    _same_item(item, response)
    return rubric._render(
        item, {"response": response.output, "history": _transcript(response.context)}
    )


def _same_item(item: Item, *responses: BlindedResponse) -> None:
    for r in responses:
        if r.item_id != item.item_id:
            raise ValueError(
                f"response {r.blind_id} is for item '{r.item_id}', not '{item.item_id}'"
            )


def _locate(ref: str | Path) -> Path:
    text = str(ref)
    if isinstance(ref, Path) or text.endswith((".yaml", ".yml")) or "/" in text or "\\" in text:
        path = Path(ref)
        if not path.is_file():
            raise ConfigError(f"rubric file not found: {path}")
        return path
    path = BUILTIN_DIR / f"{text}.yaml"
    if not path.is_file():
        raise ConfigError(
            f"unknown rubric '{text}': give a path to a rubric YAML file or one of the built-in "
            f"rubrics: {', '.join(builtin_rubrics())}"
        )
    return path


def _format_errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        # Drop the scale's union tag ("pairwise"/"absolute"): users never wrote it.
        loc = [
            str(p) for i, p in enumerate(err["loc"]) if not (i == 1 and err["loc"][0] == "scale")
        ]
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = unknown_key(Rubric, err["loc"])
        elif err["type"] == "missing":
            msg = "required key is missing"
        elif err["type"] == "value_error":
            msg = msg.removeprefix("Value error, ")
        parts.append(f"{'.'.join(loc)}: {msg}" if loc else msg)
    return "; ".join(parts)


def _in_rubric(rubric_id: str, exc: LimitError) -> LimitError:
    return LimitError(
        f"rubric '{rubric_id}': {exc}", limit=exc.limit, maximum=exc.maximum, actual=exc.actual
    )


def _compile(source: str, key: str, variables: Sequence[str]) -> jinja2.Template:
    try:
        unknown = sorted(_placeholders(source) - set(variables))
        template = templates.compile_template(source)
    except jinja2.TemplateSyntaxError as exc:
        raise ValueError(f"{key}: template error line {exc.lineno}: {exc.message}") from None
    except jinja2.TemplateError as exc:
        raise ValueError(f"{key}: template error: {exc}") from None
    if unknown:
        raise ValueError(
            f"{key}: unknown placeholder '{unknown[0]}'; known placeholders: {', '.join(variables)}"
        )
    return template


def _placeholders(source: str) -> set[str]:
    return set(meta.find_undeclared_variables(templates.ENV.parse(source)))


# Delimiter tags: [NAME] / [/NAME] or <name> / </name>. A tag counts as a delimiter when the
# templates close it somewhere; names are letters, digits, spaces, _ and -.
_TAG_PATTERN = r"(?P<open>\[|<)(?P<close>/)?(?P<name>[A-Za-z][A-Za-z0-9 _-]{0,40}?)(?P<end>\]|>)"
_TAG = re.compile(_TAG_PATTERN)


# Look-alikes the neutraliser also treats as brackets and slashes (fullwidth forms and
# friends), and invisible characters a candidate could slip between the letters of a tag.
def _tag_name(match: re.Match[str]) -> str:
    return match.group("open") + " ".join(match.group("name").upper().split())


def _delimiter_tags(source: str) -> set[str]:
    matches = list(_TAG.finditer(source))
    closed = {_tag_name(m) for m in matches if m.group("close") and _pairs(m)}
    return {name for name in closed if name[1:]}


def _pairs(match: re.Match[str]) -> bool:
    return (match.group("open"), match.group("end")) in (("[", "]"), ("<", ">"))


def _criteria_text(criteria: Sequence[Criterion]) -> str:
    return "\n".join(f"- {c.id}: {c.text}" for c in criteria)


def _scale_text(scale: PairwiseScale | AbsoluteScale) -> str:
    if isinstance(scale, PairwiseScale):
        quoted = [f'"{label}"' for label in scale.labels]
        return ", ".join(quoted[:-1]) + " or " + quoted[-1]
    if not scale.anchors:
        return f"an integer from {scale.min} to {scale.max}"
    lines = [f"an integer from {scale.min} to {scale.max}, where:"]
    lines += [f"- {level}: {scale.anchors[level]}" for level in sorted(scale.anchors)]
    return "\n".join(lines)


def _prompt_text(prompt: str | tuple[ChatMessage, ...]) -> str:
    if isinstance(prompt, str):
        return prompt
    if len(prompt) == 1 and prompt[0].role == "user":
        return prompt[0].content
    return _transcript(prompt)


def _transcript(messages: Sequence[ChatMessage]) -> str:
    return "\n\n".join(f"{_ROLE_NAMES[m.role]}: {m.content}" for m in messages)
