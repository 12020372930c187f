"""Normalisation for matching (`judge.normalise`) and what it buys the scrubber and `family_of`:
disguised markers are caught, and the judge still sees the writer's characters elsewhere."""

import random
import unicodedata

import pytest

from judge.blinding.scrubber import DEFAULT_PLACEHOLDER, Scrubber
from judge.families import family_of
from judge.normalise import disguised, normalise
from tests.helpers import assert_marks_rebuild

R = DEFAULT_PLACEHOLDER


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("\u0421laude", "Claude"),  # CYRILLIC CAPITAL LETTER ES
        ("Open\u0410I", "OpenAI"),  # CYRILLIC CAPITAL LETTER A
        ("\u039fpen\u0391\u0399", "OpenAI"),  # Greek capitals omicron, alpha, iota
        ("\uff23\uff2c\uff21\uff35\uff24\uff25", "CLAUDE"),  # fullwidth
        ("\U0001d402\U0001d425\U0001d41a\U0001d42e\U0001d41d\U0001d41e", "Claude"),  # math bold
        ("Clau\u200bde", "Claude"),  # ZERO WIDTH SPACE
        ("Cl\u202eaude\u202c", "Claude"),  # bidi override and pop
        ("GPT\u20114", "GPT-4"),  # NON-BREAKING HYPHEN
        ("GPT\u22124", "GPT-4"),  # MINUS SIGN
        ("Cla\u0301ude", "Claude"),  # combining acute accent
        ("g e m i n i", "gemini"),
        ("C.l.a.u.d.e", "Claude"),
        ("I am a C l a u d e model", "I am a Claude model"),
        ("as q w e n I said", "as qwen I said"),
        ("G.P.T.-4 and G.P.T.4", "GPT-4 and GPT4"),  # the abbreviation's dot, not a separator
        ("The U.S.A. and", "The USA. and"),
        ("plain text, nothing to do", "plain text, nothing to do"),
        ("ellipsis… stays", "ellipsis… stays"),
    ],
)
def test_disguises_fold_to_the_plain_name(text: str, folded: str) -> None:
    assert normalise(text).text == folded


def test_every_cyrillic_and_greek_capital_look_alike_folds_to_its_latin_letter() -> None:
    # Independent of the confusables data: Unicode's character names say which capitals are
    # the same letter as a Latin one (CYRILLIC CAPITAL LETTER A / GREEK CAPITAL LETTER ALPHA).
    pairs = {
        "CYRILLIC CAPITAL LETTER A": "A",
        "CYRILLIC CAPITAL LETTER ES": "C",
        "CYRILLIC CAPITAL LETTER IE": "E",
        "CYRILLIC CAPITAL LETTER O": "O",
        "CYRILLIC CAPITAL LETTER ER": "P",
        "CYRILLIC CAPITAL LETTER HA": "X",
        "CYRILLIC SMALL LETTER A": "a",
        "CYRILLIC SMALL LETTER IE": "e",
        "CYRILLIC SMALL LETTER O": "o",
        "GREEK CAPITAL LETTER ALPHA": "A",
        "GREEK CAPITAL LETTER BETA": "B",
        "GREEK CAPITAL LETTER IOTA": "I",
        "GREEK CAPITAL LETTER OMICRON": "O",
        "GREEK SMALL LETTER OMICRON": "o",
    }
    for name, latin in pairs.items():
        assert normalise(unicodedata.lookup(name)).text == latin, name


def test_the_map_back_points_each_folded_character_at_its_source() -> None:
    text = "x\u200b\uff21 b\u0301c g e m"
    norm = normalise(text)
    assert norm.text == "xA bc gem"
    # x, A (fullwidth), space, b (its accent dropped), c, space, g, e, m (separators dropped)
    assert norm.positions() == [0, 2, 3, 4, 6, 7, 8, 10, 12]


def test_a_disguise_is_more_than_width_and_accents() -> None:
    assert disguised("\u0421laude", "Claude")
    assert disguised("Clau\u200bde", "Claude")
    assert disguised("g e m i n i", "gemini")
    assert not disguised("\uff23\uff4c\uff41\uff55\uff44\uff45", "Claude")
    assert not disguised("Cl\u00e1ude", "Claude")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Привет! I am \u0421laude.", f"Привет! I am {R}."),
        (
            "Answer\u2026 by Open\u0410I, caf\u00e9 and \u200b.",
            f"Answer\u2026 by {R}, caf\u00e9 and \u200b.",
        ),
        (
            "\uff21\uff4e\uff53\uff57\uff45\uff52\uff1a I am Clau\u200bde.",
            f"\uff21\uff4e\uff53\uff57\uff45\uff52\uff1a I am {R}.",
        ),
        ("Built on GPT\u20114 \u2014 fine.", f"Built on {R} \u2014 fine."),
        ("Hi, I'm g e m i n i.", f"Hi, I'm {R}."),
    ],
)
def test_only_the_marker_is_replaced_and_the_rest_keeps_the_writers_characters(
    text: str, expected: str
) -> None:
    out, counts = Scrubber(["acme-small"]).scrub(text)
    assert out == expected
    assert counts.total() == 1


def test_text_outside_the_marks_is_the_input_verbatim() -> None:
    # Property: for random texts mixing disguises and plain words, stitching the input back
    # from the marks' spans reproduces the scrubbed output, and marks never overlap.
    rng = random.Random(7)
    pieces = [
        *("I am ", "\u0421laude", "Clau\u200bde", "GPT\u20114", "g e m i n i", " Open\u0410I "),
        *("caf\u00e9 ", "\u2026", "\uff21\uff22 ", "Привет ", "\u200d", " a ", "Claude Monet "),
        *("\n- ", "Best regards,\n", "Llama 3", " here", "我是", "Claude", "です", ". "),
    ]
    scrubber = Scrubber(["acme-small"])
    for _ in range(500):
        text = "".join(rng.choices(pieces, k=rng.randint(1, 8)))
        out, marks = scrubber.scrub_marks(text)
        assert_marks_rebuild(text, out, marks, R)
        assert scrubber.scrub(out)[1].total() == 0, "scrubbing twice changed something more"


def test_family_of_reads_disguised_names() -> None:
    assert family_of("\u0421laude-3-opus") == "anthropic"
    assert family_of("\uff27\uff30\uff34-4o") == "openai"
    assert family_of("acme-small") == "acme-small"


NAMES = frozenset({"openai", "claude", "llama", "anthropic", "gemini", "gpt", "microsoft"})


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("0penAI", "OpenAI"),  # a word starts with a capital
        ("C1aude and Cl@ude", "Claude and Claude"),  # inside one, between small letters
        ("ANT#ROPIC and Ant#ropic", "ANTHROPIC and Anthropic"),
        ("L1ama2 and L1ama 3", "Llama2 and Llama 3"),  # a version glued on stays digits
        ("Gem1n1 and GP7-4o", "Gemini and GPT-4o"),  # a stand-in may end the word
        ("Micro$oft", "Microsoft"),
    ],
)
def test_digits_and_symbols_read_as_letters_where_they_spell_a_name(text: str, folded: str) -> None:
    norm = normalise(text, NAMES)
    assert norm.text == folded
    # Letter for character: the map back is the identity.
    assert norm.positions() == list(range(len(text)))
    assert disguised(text, folded)
    # Without names to spell, nothing is read.
    assert normalise(text).text == text


@pytest.mark.parametrize(
    "text",
    [
        "mp3, H2O, the 4th and 1st rows, 3D, GPT-4o, gpt4o, x86, 10px",
        "C# and F#, me@example.com, #hashtag, $HOME, <!DOCTYPE html>, Hi! | x |",
        "P1, Y1, Ph1, l33t, nums1, arr1[i], B12, sha256",
        "0penAIx9 is no name; neither is a" + "1" * 50 + "claude",
    ],
)
def test_digits_that_spell_no_name_stay(text: str) -> None:
    assert normalise(text, NAMES).text == normalise(text).text


def test_reading_stand_ins_is_linear_in_the_text() -> None:
    # One long word of digits and letters is read once, not once per stand-in in it.
    import time

    def seconds(n: int) -> float:
        text = "a1" * n
        start = time.perf_counter()
        normalise(text, NAMES)
        return time.perf_counter() - start

    seconds(1000)
    assert seconds(200_000) < 40 * seconds(20_000) + 0.05
