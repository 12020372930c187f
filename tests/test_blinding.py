"""Blinding: opaque ids, blind_responses (scrubbed output and context, seeded order, the scrub
report) and make_pairs (seeded A/B slots). The scrubber's rules are in test_scrubber.py."""

import re
from collections import Counter

import pytest

from judge.blinding.blind import blind_responses, make_pairs, new_secret, opaque_id, pair_id
from judge.blinding.scrubber import DEFAULT_PLACEHOLDER, RULES, Scrubber
from judge.errors import ConfigError, DataError
from judge.types import ChatMessage, Response

R = DEFAULT_PLACEHOLDER
SECRET = "00" * 32


# --- opaque ids ----------------------------------------------------------------------------------


def test_new_secret_is_32_random_bytes_of_hex() -> None:
    a, b = new_secret(), new_secret()
    assert len(bytes.fromhex(a)) == 32
    assert a != b


def test_opaque_id_is_stable_keyed_and_hides_the_system() -> None:
    other = "11" * 32
    rid = opaque_id(SECRET, "q1", "gpt-4")
    assert rid == opaque_id(SECRET, "q1", "gpt-4")
    assert rid != opaque_id(other, "q1", "gpt-4")
    assert rid != opaque_id(SECRET, "q2", "gpt-4")
    assert re.fullmatch(r"r_[0-9a-f]{20}", rid)
    assert "gpt" not in rid


def test_opaque_id_encoding_is_unambiguous() -> None:
    assert opaque_id(SECRET, "a|b", "c") != opaque_id(SECRET, "a", "b|c")
    assert opaque_id(SECRET, "a", "bc") != opaque_id(SECRET, "ab", "c")


def test_pair_id_ignores_system_order() -> None:
    pid = pair_id(SECRET, "q1", ["gpt-4", "claude-v1"])
    assert pid == pair_id(SECRET, "q1", ["claude-v1", "gpt-4"])
    assert re.fullmatch(r"p_[0-9a-f]{20}", pid)
    assert pid != pair_id("11" * 32, "q1", ["gpt-4", "claude-v1"])


def test_bad_secret_names_the_fix() -> None:
    with pytest.raises(ConfigError, match="blinding secret must be hex"):
        opaque_id("not hex!", "q1", "gpt-4")
    with pytest.raises(ConfigError, match="has 2 bytes; use at least 16"):
        opaque_id("abcd", "q1", "gpt-4")


# --- blind_responses -----------------------------------------------------------------------------


def _responses(items: int, systems: list[str]) -> list[Response]:
    return [
        Response(item_id=f"q{i:03d}", system=s, output=f"answer {i} by {s}")
        for i in range(items)
        for s in systems
    ]


def test_blind_responses_ids_key_and_no_system_name() -> None:
    responses = _responses(3, ["gpt-4", "claude-v1"])
    blinded, key, _ = blind_responses(
        responses, secret=SECRET, seed=1, scrubber=Scrubber(["gpt-4", "claude-v1"])
    )
    assert {key.systems[b.blind_id] for b in blinded} == {"gpt-4", "claude-v1"}
    assert key.blinding_secret == SECRET
    for b in blinded:
        system = key.systems[b.blind_id]
        assert b.blind_id == opaque_id(SECRET, b.item_id, system)
        assert b.output == f"answer {b.item_id[1:].lstrip('0') or '0'} by {R}"
        assert system not in b.model_dump_json()


def test_presentation_order_is_seeded_and_independent_of_input_order() -> None:
    responses = _responses(20, ["a-1", "b-1", "c-1"])

    def order(rows: list[Response], seed: int) -> list[str]:
        return [
            b.blind_id for b in blind_responses(rows, secret=SECRET, seed=seed, scrubber=None)[0]
        ]

    first = order(responses, 7)
    assert first == order(list(reversed(responses)), 7)
    assert first != order(responses, 8)
    assert sorted(first) == sorted(order(responses, 8))
    # Not the input order (grouped by item, then system).
    assert first != [opaque_id(SECRET, r.item_id, r.system) for r in responses]


def test_context_assistant_turns_are_scrubbed_user_turns_kept() -> None:
    response = Response(
        item_id="q1",
        system="gpt-4",
        output="As I said, I'm ChatGPT.",
        context=(
            ChatMessage(role="user", content="Are you GPT-4? Answer as ChatGPT would."),
            ChatMessage(role="assistant", content="I am GPT-4, made by OpenAI."),
        ),
    )
    blinded, _, report = blind_responses(
        [response], secret=SECRET, seed=0, scrubber=Scrubber(["gpt-4", "claude-v1"])
    )
    (b,) = blinded
    assert b.output == f"As I said, I'm {R}."
    assert b.context[0].content == "Are you GPT-4? Answer as ChatGPT would."
    assert b.context[1].content == f"I am {R}, made by {R}."
    assert report.by_system_rule["gpt-4"]["system_name"] == 1
    assert report.by_system_rule["gpt-4"]["self_identification"] == 2


def test_scrub_report_counts_match_the_scrubber() -> None:
    scrubber = Scrubber(["gpt-4", "claude-v1"])
    texts = {
        ("q1", "gpt-4"): "I'm ChatGPT, by OpenAI.",
        ("q1", "claude-v1"): "I am Claude.\nBest,\nClaude",
        ("q2", "gpt-4"): "Nothing to hide.",
        ("q2", "claude-v1"): "GPT-4 and gpt-4.",
    }
    responses = [Response(item_id=i, system=s, output=t) for (i, s), t in texts.items()]
    _, _, report = blind_responses(responses, secret=SECRET, seed=0, scrubber=scrubber)
    expected: dict[str, Counter[str]] = {"gpt-4": Counter(), "claude-v1": Counter()}
    for (_, system), text in texts.items():
        expected[system].update(scrubber.scrub(text)[1])
    assert report.by_system == {"gpt-4": 2, "claude-v1": 4}
    assert report.by_system_rule["claude-v1"] == {
        rule: expected["claude-v1"][rule] for rule in RULES
    }
    assert report.by_system_rule["claude-v1"]["signature"] == 1
    assert report.by_rule == {
        rule: expected["gpt-4"][rule] + expected["claude-v1"][rule] for rule in RULES
    }
    assert (report.total, report.responses_changed, report.responses) == (6, 3, 4)
    assert "ChatGPT" not in report.model_dump_json()


def test_duplicate_responses_are_a_data_error() -> None:
    rows = _responses(1, ["gpt-4"]) * 2
    with pytest.raises(DataError, match="two responses for item 'q000' from system 'gpt-4'"):
        blind_responses(rows, secret=SECRET, seed=0, scrubber=None)


# --- make_pairs ----------------------------------------------------------------------------------


def _blind(items: int, systems: list[str], drop: frozenset[tuple[str, str]] = frozenset()):
    rows = [r for r in _responses(items, systems) if (r.item_id, r.system) not in drop]
    blinded, key, _ = blind_responses(rows, secret=SECRET, seed=3, scrubber=None)
    return blinded, key


def test_all_pairs_with_skipped_pairs_reported() -> None:
    blinded, key = _blind(2, ["a-1", "b-1", "c-1"], frozenset({("q001", "b-1")}))
    pairs, key2, skipped = make_pairs(blinded, key, mode="all", baseline=None, seed=0)
    assert len(pairs) == 3 + 1
    assert skipped == [("q001", "a-1", "b-1"), ("q001", "b-1", "c-1")]
    assert [p.item_id for p in pairs] == ["q000"] * 3 + ["q001"]
    assert pairs == sorted(pairs, key=lambda p: (p.item_id, p.pair_id))
    for p in pairs:
        a, b = key2.pairs[p.pair_id]
        assert (key2.systems[p.slot_a], key2.systems[p.slot_b]) == (a, b)
        assert p.pair_id == pair_id(SECRET, p.item_id, (a, b))
    assert key2.systems == key.systems


def test_baseline_pairs_and_unknown_baseline() -> None:
    blinded, key = _blind(2, ["base-1", "x-1", "y-1"], frozenset({("q000", "base-1")}))
    pairs, key2, skipped = make_pairs(blinded, key, mode="baseline", baseline="base-1", seed=0)
    assert sorted(sorted(key2.pairs[p.pair_id]) for p in pairs) == [
        ["base-1", "x-1"],
        ["base-1", "y-1"],
    ]
    assert skipped == [("q000", "base-1", "x-1"), ("q000", "base-1", "y-1")]
    with pytest.raises(
        ConfigError, match=r"'gpt-5' is not a system.*known systems: base-1, x-1, y-1"
    ):
        make_pairs(blinded, key, mode="baseline", baseline="gpt-5", seed=0)
    with pytest.raises(ConfigError, match="baseline missing; known systems: base-1, x-1, y-1"):
        make_pairs(blinded, key, mode="baseline", baseline=None, seed=0)


def test_slot_assignment_is_reproducible_order_independent_and_balanced() -> None:
    blinded, key = _blind(1000, ["sys-1", "sys-2"])
    pairs, key2, _ = make_pairs(blinded, key, mode="all", baseline=None, seed=5)
    again, key3, _ = make_pairs(list(reversed(blinded)), key, mode="all", baseline=None, seed=5)
    assert pairs == again
    assert key2.pairs == key3.pairs
    first = sum(key2.pairs[p.pair_id][0] == "sys-1" for p in pairs) / len(pairs)
    assert 0.40 <= first <= 0.60
    other, key4, _ = make_pairs(blinded, key, mode="all", baseline=None, seed=6)
    assert [key4.pairs[p.pair_id] for p in other] != [key2.pairs[p.pair_id] for p in pairs]


def test_pairs_need_the_matching_key() -> None:
    blinded, _ = _blind(1, ["a-1", "b-1"])
    _, other_key = _blind(1, ["c-1", "d-1"])
    with pytest.raises(ConfigError, match="is not in the blinding key"):
        make_pairs(blinded, other_key, mode="all", baseline=None, seed=0)
