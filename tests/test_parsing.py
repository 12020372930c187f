"""Judge reply parsing (judge/rubric/parsing.py): JSON first, then the common free-text forms; every
reply that yields no verdict is a ParseFailure with a reason."""

from __future__ import annotations

import json
from typing import Any

import pytest

from judge import Rubric, load_rubric
from judge.rubric.parsing import EXCERPT_CHARS, parse_reply, repair_prompt
from judge.types import ParseFailure, Verdict

PAIR = load_rubric("pairwise_general")
ABS = load_rubric("absolute_1to5")
SUMMARY = load_rubric("summary_quality")
# A pairwise rubric without ties, and one whose judge answers "1"/"2".
NO_TIE = Rubric.model_validate(
    {
        **PAIR.model_dump(),
        "id": "pairwise_no_tie",
        "scale": {"labels": ["A", "B"]},
        "system": "Judge. Answer {{ scale }}.",
    }
)
NUMBERED = Rubric.model_validate(
    {
        **PAIR.model_dump(),
        "id": "pairwise_numbered",
        "output": {
            "format": "json",
            "fields": ["reasoning", "verdict"],
            "labels": {"Output (1)": "A", "Output (2)": "B"},
        },
    }
)

FENCED = 'Here is my evaluation.\n```json\n{"reasoning": "B is exact.", "verdict": "B"}\n```'
PROSE_JSON = (
    'The format is {"reasoning": "...", "verdict": "A"}. Having compared both:\n'
    '{"reasoning": "A cites the law correctly.", "verdict": "A"} That is final.'
)
ALL_SCORES = '{"coherence": 4, "consistency": 5, "fluency": 5, "relevance": 3}'

# (id, rubric, reply, expected): expected is a dict of Verdict fields or "fail:<reason start>".
CASES: list[tuple[str, Rubric, str | None, Any]] = [
    # --- JSON, pairwise
    (
        "json",
        PAIR,
        '{"reasoning": "A is right.", "verdict": "A"}',
        {"label": "A", "reasoning": "A is right.", "parsed_from": "json"},
    ),
    (
        "json-tie",
        PAIR,
        '{"reasoning": "Same.", "verdict": "tie"}',
        {"label": "tie", "parsed_from": "json"},
    ),
    (
        "json-fenced",
        PAIR,
        FENCED,
        {"label": "B", "reasoning": "B is exact.", "parsed_from": "json"},
    ),
    (
        "json-in-prose-last-wins",
        PAIR,
        PROSE_JSON,
        {"label": "A", "reasoning": "A cites the law correctly."},
    ),
    ("json-synonym", PAIR, '{"reasoning": "r", "verdict": "Assistant B"}', {"label": "B"}),
    ("json-brackets", PAIR, '{"reasoning": "r", "verdict": "[[A]]"}', {"label": "A"}),
    ("json-draw", PAIR, '{"reasoning": "r", "verdict": "Draw"}', {"label": "tie"}),
    (
        "json-uppercase-keys",
        PAIR,
        '{"Reasoning": "r", "Verdict": "b"}',
        {"label": "B", "reasoning": "r"},
    ),
    (
        "json-raw-newline",
        PAIR,
        '{"reasoning": "line 1\nline 2", "verdict": "A"}',
        {"label": "A", "reasoning": "line 1\nline 2"},
    ),
    (
        "json-bad-verdict",
        PAIR,
        '{"reasoning": "r", "verdict": "both are bad"}',
        "fail:unrecognised verdict 'both are bad'",
    ),
    (
        "json-no-verdict",
        PAIR,
        '{"reasoning": "I compared them."}',
        "fail:JSON reply has no 'verdict' field",
    ),
    (
        "json-tie-not-in-scale",
        NO_TIE,
        '{"reasoning": "r", "verdict": "tie"}',
        "fail:label 'tie' is not in this rubric's scale (A, B)",
    ),
    ("json-rubric-label", NUMBERED, '{"reasoning": "r", "verdict": "Output (2)"}', {"label": "B"}),
    (
        "truncated-json",
        PAIR,
        '{"reasoning": "Response A explains the proof, while Response B',
        "fail:truncated JSON",
    ),
    (
        "truncated-after-verdict",
        PAIR,
        '{"reasoning": "r", "verdict": "B"',
        {"label": "B", "parsed_from": "text"},
    ),
    # --- free text, pairwise
    (
        "mt-bench-A",
        PAIR,
        "Assistant A is more accurate.\n\n[[A]]",
        {"label": "A", "reasoning": "Assistant A is more accurate.", "parsed_from": "text"},
    ),
    ("mt-bench-B", PAIR, "B handles the edge case. [[B]]", {"label": "B"}),
    ("mt-bench-C-tie", PAIR, "Both are equally good. [[C]]", {"label": "tie"}),
    ("double-bracket-tie", PAIR, "[[tie]]", {"label": "tie", "reasoning": ""}),
    (
        "verdict-colon",
        PAIR,
        "B is more complete.\nVerdict: B",
        {"label": "B", "reasoning": "B is more complete."},
    ),
    ("final-verdict-tie", PAIR, "Final verdict: tie", {"label": "tie"}),
    (
        "final-verdict-bold-brackets",
        PAIR,
        "Reasons...\n**Final Verdict:** [[A]]",
        {"label": "A", "reasoning": "Reasons..."},
    ),
    ("lowercase", PAIR, "verdict: response a", {"label": "A"}),
    ("synonym-assistant", PAIR, "Winner: Assistant B", {"label": "B"}),
    ("synonym-equal", PAIR, "Decision: equal", {"label": "tie"}),
    ("synonym-a-tie", PAIR, "My verdict: it's a tie.", {"label": "tie"}),
    ("article-not-label", PAIR, "Verdict: a close call, but [[B]]", {"label": "B"}),
    ("repeated-same", PAIR, "Verdict: [[A]]. Again, [[A]].", {"label": "A"}),
    ("ambiguous", PAIR, "At first [[A]] ... on reflection [[B]]", "fail:ambiguous"),
    ("ambiguous-mixed-forms", PAIR, "Verdict: A\nFinal verdict: tie", "fail:ambiguous"),
    (
        "text-tie-not-in-scale",
        NO_TIE,
        "[[C]]",
        "fail:label 'tie' is not in this rubric's scale (A, B)",
    ),
    ("text-rubric-label", NUMBERED, "Output (1) is better. [[Output (1)]]", {"label": "A"}),
    ("no-verdict", PAIR, "Response A is better.", "fail:no verdict found"),
    (
        "refusal",
        PAIR,
        "I'm sorry, but I can't help with comparing these responses.",
        "fail:refusal",
    ),
    ("refusal-curly", PAIR, "I can’t assist with that request.", "fail:refusal"),
    ("empty", PAIR, "", "fail:empty reply"),
    ("whitespace", PAIR, "  \n\t ", "fail:empty reply"),
    ("none", PAIR, None, "fail:empty reply"),
    # --- absolute, one score
    (
        "score-json",
        ABS,
        '{"reasoning": "Solid.", "score": 4}',
        {"score": 4.0, "reasoning": "Solid.", "parsed_from": "json"},
    ),
    ("score-json-string", ABS, '{"reasoning": "ok", "score": "4/5"}', {"score": 4.0}),
    (
        "score-json-out-of-range",
        ABS,
        '{"reasoning": "ok", "score": 6}',
        "fail:score 6 is outside the scale 1-5",
    ),
    (
        "score-json-zero",
        ABS,
        '{"reasoning": "ok", "score": 0}',
        "fail:score 0 is outside the scale 1-5",
    ),
    ("score-json-bool", ABS, '{"reasoning": "ok", "score": true}', "fail:score must be a number"),
    (
        "score-json-nan",
        ABS,
        '{"reasoning": "ok", "score": NaN}',
        "fail:score must be a finite number",
    ),
    (
        "score-colon-slash",
        ABS,
        "Clear and correct.\nScore: 4/5",
        {"score": 4.0, "reasoning": "Clear and correct.", "parsed_from": "text"},
    ),
    ("rating-brackets", ABS, "Rating: [[4]]", {"score": 4.0}),
    ("bare-brackets", ABS, "Good overall. [[5]]", {"score": 5.0}),
    ("trailing-fraction", ABS, "Mostly right, one slip. I'd give it 3/5.", {"score": 3.0}),
    ("out-of", ABS, "Overall score: 2 out of 5", {"score": 2.0}),
    ("score-out-of-range-text", ABS, "Score: 7", "fail:score 7 is outside the scale 1-5"),
    ("score-other-scale", ABS, "Score: 8/10", "fail:score 8/10 is not on the scale 1-5"),
    ("score-ambiguous", ABS, "Score: 3 at first, but Score: 4 after rereading.", "fail:ambiguous"),
    ("score-none", ABS, "A decent answer.", "fail:no score found"),
    (
        "score-json-missing-field",
        ABS,
        '{"reasoning": "fine"}',
        "fail:JSON reply has no 'score' field",
    ),
    # --- absolute, one score per criterion
    (
        "scores-json",
        SUMMARY,
        '{"reasoning": "r", "scores": ' + ALL_SCORES + "}",
        {
            "scores": {"coherence": 4.0, "consistency": 5.0, "fluency": 5.0, "relevance": 3.0},
            "score": 4.25,
        },
    ),
    (
        "scores-json-flat",
        SUMMARY,
        ALL_SCORES,
        {"scores": {"coherence": 4.0, "consistency": 5.0, "fluency": 5.0, "relevance": 3.0}},
    ),
    (
        "scores-missing",
        SUMMARY,
        '{"reasoning": "r", "scores": {"coherence": 4, "consistency": 5, "fluency": 5}}',
        "fail:missing score for criterion 'relevance'",
    ),
    (
        "scores-out-of-range",
        SUMMARY,
        '{"reasoning": "r", "scores": '
        '{"coherence": 4, "consistency": 9, "fluency": 5, "relevance": 3}}',
        "fail:score for 'consistency' 9 is outside the scale 1-5",
    ),
    (
        "scores-not-object",
        SUMMARY,
        '{"reasoning": "r", "scores": [4, 5, 5, 3]}',
        "fail:'scores' must be an object",
    ),
    (
        "scores-text",
        SUMMARY,
        "Notes.\nCoherence: 4\n**Consistency**: 5/5\nFluency - 5\nRelevance: 2",
        {
            "scores": {"coherence": 4.0, "consistency": 5.0, "fluency": 5.0, "relevance": 2.0},
            "reasoning": "Notes.",
            "parsed_from": "text",
        },
    ),
    (
        "scores-text-missing",
        SUMMARY,
        "Coherence: 4, fluency: 3",
        "fail:missing score for criterion 'consistency'",
    ),
]


@pytest.mark.parametrize(
    ("rubric", "reply", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_parse_reply(rubric: Rubric, reply: str | None, expected: Any) -> None:
    result = parse_reply(reply, rubric)
    if isinstance(expected, str):
        assert isinstance(result, ParseFailure), result
        assert result.reason.startswith(expected.removeprefix("fail:")), result.reason
        assert result.excerpt == (reply or "")[:EXCERPT_CHARS]
    else:
        assert isinstance(result, Verdict), result
        for name, value in expected.items():
            assert getattr(result, name) == value, (name, result)


def test_table_is_large_enough() -> None:
    assert len(CASES) >= 30
    assert len({c[0] for c in CASES}) == len(CASES)


def test_excerpt_is_first_200_characters() -> None:
    reply = "x" * 500
    result = parse_reply(reply, PAIR)
    assert isinstance(result, ParseFailure)
    assert result.excerpt == "x" * 200


def test_nested_answer_object_is_found() -> None:
    reply = json.dumps({"result": {"reasoning": "r", "verdict": "B"}})
    result = parse_reply(reply, PAIR)
    assert isinstance(result, Verdict) and result.label == "B"


def test_json_wins_over_text_forms() -> None:
    reply = 'Earlier I wrote [[A]].\n{"reasoning": "changed my mind", "verdict": "B"}'
    result = parse_reply(reply, PAIR)
    assert isinstance(result, Verdict) and result.label == "B" and result.parsed_from == "json"


def test_large_reply_with_many_braces_parses() -> None:
    code = "def f():\n    return {'a': {'b': [1, 2]}}\n" * 400
    reply = code + '{"reasoning": "ok", "verdict": "A"}'
    result = parse_reply(reply, PAIR)
    assert isinstance(result, Verdict) and result.label == "A"


@pytest.mark.parametrize("rubric", [PAIR, ABS, SUMMARY, NO_TIE])
def test_repair_prompt_asks_for_json_only_and_its_example_parses(rubric: Rubric) -> None:
    prompt = repair_prompt(rubric)
    assert "only a JSON object" in prompt
    assert '"reasoning"' in prompt
    assert f'"{rubric.answer_field}"' in prompt
    example = prompt[prompt.index("{") :]
    parsed = json.loads(example)
    assert list(parsed) == ["reasoning", rubric.answer_field]
    # The example itself is a valid reply under the rubric.
    assert isinstance(parse_reply(example, rubric), Verdict)


def test_repair_prompt_lists_only_the_scale_labels() -> None:
    assert '"A" or "B"' in repair_prompt(NO_TIE)
    assert '"A", "B" or "tie"' in repair_prompt(PAIR)
    assert "an integer from 1 to 5" in repair_prompt(ABS)
    assert "coherence, consistency, fluency, relevance" in repair_prompt(SUMMARY)
