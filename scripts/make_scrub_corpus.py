"""Write tests/data/scrub_corpus.jsonl: a labelled corpus for the scrubber, from templates.

Rows with identity markers (plain mentions, self-introductions in eight languages, signatures,
and each disguise: Cyrillic and Greek look-alikes, fullwidth and mathematical letters,
invisible and bidi characters, hyphen variants, accents, spaced-out letters) and rows with
ordinary words that look like names (Claudette, Geminiani, palmistry, "the mistral wind",
"Claude Monet", a llama, Russian and Greek text). Each row: id, kind, text, and `markers`,
the [start, end) spans a scrubber must replace ([] for none).

The names and sentences are written here, independently of the scrubber's lexicon and
phrases, so the corpus measures the scrubber instead of restating it.

    .venv/bin/python scripts/make_scrub_corpus.py   # rewrites the file; seeded, so stable
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "scrub_corpus.jsonl"
SEED = 13

# Model and product names as outputs write them, versions included.
MODELS = [
    *("ChatGPT", "GPT-4", "GPT-4o", "GPT-3.5", "gpt-4-turbo", "GPT-4o mini", "Claude 3.5 Sonnet"),
    *("Claude 2", "Claude-instant", "Claude 3 Opus", "Gemini 1.5 Pro", "Gemini Pro", "PaLM 2"),
    *("Llama 3", "Llama-2-70B", "LLaMA", "Mixtral 8x7B", "Mistral-7B", "Qwen2.5", "Qwen"),
    *("DeepSeek-V3", "DeepSeek", "Grok-2", "Phi-3", "Gemma 2", "Command R+", "Vicuna-13B"),
    *("Falcon-40B", "Yi-34B", "InstructGPT", "Codestral"),
]
# Vendors, as named in "trained by ..." and "the ... team".
VENDORS = [
    *("OpenAI", "Anthropic", "Google DeepMind", "DeepMind", "Meta AI", "Mistral AI"),
    *("Alibaba Cloud", "xAI", "Microsoft Research", "Cohere", "LMSYS", "Zhipu", "01.AI"),
]
# Names that are also ordinary words: markers only in what the sentence says about them.
BARE = ["Claude", "Gemini", "Mistral", "Llama", "Bard", "Grok", "Copilot", "Gemma"]
# Names a sentence can say the writer *is*.
SELVES = [*BARE, *MODELS]

FILLER = [
    "The capital of Australia is Canberra.",
    "Here is a short Python function that reverses a list.",
    "Photosynthesis turns light into chemical energy.",
    "A good cover letter is specific and short.",
    "The derivative of x squared is 2x.",
    "Start with a warm-up, then three sets of ten squats.",
]

# --- templates: {M} a model or self name, {V} a vendor ------------------------------------------

PLAIN = [
    "Sorry, as {M} I cannot help with that request.",
    "{F} Note that {M} can make mistakes, so check the numbers.",
    "Unlike {M}, I will answer directly. {F}",
    "{F} This matches what {M} usually says.",
    "As an {V} model, I do not have personal opinions.",
    "{F} The {V} usage policy does not allow this.",
    "I was fine-tuned from {M}. {F}",
    "{F}\n\nDisclaimer: this answer was produced by {M}.",
]
SELF_EN = [
    "I am {S}, an AI assistant. {F}",
    "Hello! I'm {S}. {F}",
    "My name is {S} and I'm happy to help. {F}",
    "As {S}, I don't browse the web. {F}",
    "I am a large language model trained by {V}. {F}",
    "I'm an AI assistant created by {V}. {F}",
    "You're talking to {S}. {F}",
]
SIGNATURES = [
    "{F}\n\nBest regards,\n{S}",
    "{F}\n- {S}",
    "{F} — {S}",
    "{F}\n\n-- Sent from {S}",
    "{F} (written by {S})",
    "Model: {S}\n\n{F}",
    "{S} here: {F}",
    "{S} here. {F}",
    "{F}\n\nCheers,\n{S}",
    "{F}\n\nRegards,\nThe {V} Team",
]
MULTILINGUAL = {
    "fr": [
        "Je suis {S}, un modèle de langage. La capitale est Canberra.",
        "Bonjour, je m'appelle {S}. Voici la réponse.",
        "Je suis un assistant développé par {V}. Voici un résumé.",
        "En tant que {S}, je ne peux pas naviguer sur Internet.",
    ],
    "de": [
        "Ich bin {S}, ein KI-Assistent. Hier ist die Antwort.",
        "Hallo! Ich heiße {S}. Gern helfe ich.",
        "Ich bin ein Sprachmodell, das von {V} entwickelt wurde.",
        "Als {S}, kann ich keine Webseiten öffnen.",
    ],
    "es": [
        "Soy {S}, un modelo de lenguaje. La respuesta es 4.",
        "Hola, me llamo {S}. Con gusto te ayudo.",
        "Fui entrenado por {V}. Aquí está el resumen.",
        "Como {S}, no tengo opiniones personales.",
    ],
    "pt": [
        "Sou o {S}, um assistente de IA. Aqui está a resposta.",
        "Olá! Eu sou {S}. Posso ajudar.",
        "Fui treinado pela {V}. Segue o resumo.",
        "Meu nome é {S} e estou aqui para ajudar.",
    ],
    "it": [
        "Sono {S}, un assistente virtuale. Ecco la risposta.",
        "Ciao, mi chiamo {S}. Posso aiutarti.",
        "Sono stato addestrato da {V}. Ecco il riassunto.",
        "Il mio nome è {S}. Ecco cosa penso.",
    ],
    "zh": [
        "我是{S}，一个人工智能助手。答案是四。",
        "你好，我是{S}。很高兴帮助你。",
        "我是由{V}开发的大型语言模型。",
        "我叫{S}，请问有什么可以帮你？",
    ],
    "ja": [
        "私は{S}です。ご質問にお答えします。",
        "こんにちは、私は{S}です。",
        "私は{V}によって開発されたAIアシスタントです。",
        "わたしは{S}と申します。よろしくお願いします。",
    ],
}

# --- disguises of one marker --------------------------------------------------------------------

_CYRILLIC = dict(zip("aceopxyACEHKMOPTXBI", "асеорхуАСЕНКМОРТХВІ", strict=True))
_GREEK = dict(zip("ABEHIKMNOPTXYZov", "ΑΒΕΗΙΚΜΝΟΡΤΧΥΖον", strict=True))
_INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
_BIDI = ["\u200e", "\u200f", "\u202a", "\u202c", "\u2066", "\u2069"]
_HYPHENS = ["\u2011", "\u2010", "\u2212", "\u2013", "\ufe63", "\uff0d"]


def _swap(table: dict[str, str]) -> Callable[[str, random.Random], str | None]:
    def disguise(name: str, rng: random.Random) -> str | None:
        spots = [i for i, c in enumerate(name) if c in table]
        if not spots:
            return None
        chosen = set(rng.sample(spots, rng.randint(1, min(3, len(spots)))))
        return "".join(table[c] if i in chosen else c for i, c in enumerate(name))

    return disguise


def _insert(chars: list[str]) -> Callable[[str, random.Random], str | None]:
    def disguise(name: str, rng: random.Random) -> str | None:
        letters = [i for i in range(1, len(name)) if name[i - 1].isalnum()]
        if not letters:
            return None
        at = rng.choice(letters)
        return name[:at] + rng.choice(chars) + name[at:]

    return disguise


def _fullwidth(name: str, rng: random.Random) -> str | None:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" for c in name)


def _mathematical(name: str, rng: random.Random) -> str | None:
    # MATHEMATICAL BOLD capitals start at U+1D400, small letters at U+1D41A, digits at U+1D7CE.
    out = []
    for c in name:
        if "A" <= c <= "Z":
            out.append(chr(0x1D400 + ord(c) - ord("A")))
        elif "a" <= c <= "z":
            out.append(chr(0x1D41A + ord(c) - ord("a")))
        elif "0" <= c <= "9":
            out.append(chr(0x1D7CE + ord(c) - ord("0")))
        else:
            out.append(c)
    return "".join(out)


def _hyphen(name: str, rng: random.Random) -> str | None:
    if "-" not in name:
        return None
    return name.replace("-", rng.choice(_HYPHENS))


def _accent(name: str, rng: random.Random) -> str | None:
    vowels = [i for i, c in enumerate(name) if c in "aeiouAEIOU"]
    if not vowels:
        return None
    at = rng.choice(vowels)
    return name[: at + 1] + rng.choice(["\u0301", "\u0300", "\u0308"]) + name[at + 1 :]


def _spaced(name: str, rng: random.Random) -> str | None:
    if not name.isalpha():
        return None
    sep = rng.choice([" ", ".", "-", " "])
    return sep.join(name.lower() if rng.random() < 0.5 else name)


DISGUISES: dict[str, Callable[[str, random.Random], str | None]] = {
    "cyrillic": _swap(_CYRILLIC),
    "greek": _swap(_GREEK),
    "fullwidth": _fullwidth,
    "mathematical": _mathematical,
    "zero_width": _insert(_INVISIBLE),
    "bidi": _insert(_BIDI),
    "hyphen": _hyphen,
    "accent": _accent,
    "spaced": _spaced,
}

# --- rows without markers -----------------------------------------------------------------------

LOOKALIKE = [
    "Claudette baked bread for the whole street.",
    "The violinist Francesco Geminiani wrote a treatise on playing.",
    "Palmistry claims to read the future from the lines of a hand.",
    "In Provence the mistral wind can blow for days.",
    "Water Lilies is a series of paintings by Claude Monet.",
    "Claude Debussy composed Clair de lune.",
    "Claude Shannon founded information theory.",
    "My uncle Claude loves fishing on Sundays.",
    "Jean-Claude Van Damme starred in the film.",
    "People born under Gemini are said to be curious.",
    "Project Gemini flew ten crewed missions.",
    "The Gemini constellation is easy to find in winter.",
    "The twins Castor and Pollux give Gemini its name.",
    "A llama can carry about a quarter of its weight.",
    "Llamas and alpacas are South American camelids.",
    "The Dalai Lama is not a llama.",
    "Shakespeare is often called the Bard of Avon.",
    "The bard sang of old battles in the hall.",
    "Swaying palm trees lined the beach.",
    "Palm oil is used in many foods.",
    "We spent a weekend in Palm Springs.",
    "The copilot took over the landing.",
    "To grok a system you have to build one.",
    "A meta-analysis pools the results of many studies.",
    "Add a meta description tag to every page.",
    "Check the metadata before uploading the photo.",
    "Just google the opening hours.",
    "Google Maps shows three routes.",
    "Open the AI lab notebook and run the cells.",
    "The anthropic principle says we observe a universe compatible with observers.",
    "Anthropic reasoning is used in cosmology.",
    "Falcon 9 landed on the drone ship.",
    "The phi coefficient measures association between two binary variables.",
    "Saturn's moon Titan has lakes of methane.",
    "Jurassic rocks hold many fossils.",
    "Orcas hunt in family groups.",
    "Dolly the sheep was the first cloned mammal.",
    "The Pythia was the priestess of the oracle at Delphi.",
    "Bloom's taxonomy orders learning objectives.",
    "Kimi Räikkönen won the 2007 championship.",
    "The GPT partition table replaced MBR.",
    "Convert the model to GPTQ for faster inference.",
    "Mistral is the name of a strong, cold wind.",
    "The Mistral class ships are amphibious assault ships.",
    "Claudia and Claudio are cousins.",
    "Gemma is a common first name in Britain.",
    "The metaphor was lost on the audience.",
    "Grok is a word coined by Robert Heinlein.",
    "A gentle breeze, not a mistral, cooled the terrace.",
    "The Gemini and Apollo programs trained astronauts.",
]
LOOKALIKE_MULTILINGUAL = [
    "Je suis allé voir Claude hier soir.",
    "Mon ami Claude est très gentil.",
    "Le mistral souffle fort sur la Provence.",
    "Je suis Gémeaux, né en juin.",
    "Ich bin ein Zwilling und im Juni geboren.",
    "Soy Géminis y me gusta viajar.",
    "Soy de Barcelona y me gusta la playa.",
    "Sou de Lisboa e gosto de música.",
    "Sono nato sotto il segno dei Gemelli.",
    "Sono Claudio, piacere di conoscerti.",
    "我是克劳德的朋友。",
    "我是学生，我喜欢数学。",
    "私は学生です。",
    "私はラマが好きです。",
    "Ich heiße Claudia und wohne in Berlin.",
    "Me llamo Claudio y vivo en Madrid.",
    "Mi chiamo Claudia e abito a Roma.",
    "Je m'appelle Claudette.",
    "Eu sou professora de história.",
    "Le peintre Claude Monet vivait à Giverny.",
]
# Known hard cases, kept in so the score does not flatter: a space mission with a number, and a
# person called Claude introducing themselves read exactly like a model doing so.
LOOKALIKE_HARD = [
    "Gemini 7 and Gemini 6A met in orbit in 1965.",
    "Hello, I am Claude, your neighbour from number 12.",
    "The Mistral 2 wind farm opened last year.",
]
LOOKALIKE_SCRIPTS = [
    "Привет! Как дела? Сегодня хорошая погода.",
    "Сорт яблок называется Антоновка.",
    "Καλημέρα, τι κάνεις σήμερα;",
    "Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.",
    "ＨＥＬＬＯ　ＷＯＲＬＤ，ｔｈｉｓ　ｉｓ　ｆｕｌｌｗｉｄｔｈ．",
    "The family emoji 👨\u200d👩\u200d👧 uses zero-width joiners.",
    "A well\u2011known result, stated in the\u00a0appendix.",
    "S O S is the distress signal.",
    "The U.S.A. and the U.K. signed it.",
    "Rotate the matrix: a b c d becomes c a d b.",
    "Naïve café owners love crème brûlée.",
    "مرحبا بالعالم",
    "שלום עולם",
    "안녕하세요, 저는 학생입니다.",
    "Tiếng Việt có nhiều dấu.",
]


def _place(template: str, values: dict[str, str]) -> tuple[str, list[list[int]]]:
    """Fill {M}/{S}/{V} (markers, spans recorded) and {F} (filler) in order."""
    text, spans, i = "", [], 0
    while i < len(template):
        if template[i] == "{" and template[i + 2 : i + 3] == "}":
            key = template[i + 1]
            value = values[key]
            if key in "MSV":
                spans.append([len(text), len(text) + len(value)])
            text += value
            i += 3
        else:
            text += template[i]
            i += 1
    return text, spans


def _rows() -> list[dict[str, object]]:
    rng = random.Random(SEED)
    rows: list[dict[str, object]] = []

    def add(kind: str, template: str, **values: str) -> None:
        values.setdefault("F", rng.choice(FILLER))
        text, spans = _place(template, values)
        rows.append({"id": f"{kind}-{len(rows):04d}", "kind": kind, "text": text, "markers": spans})

    for template in PLAIN:
        for _ in range(5):
            add("plain", template, M=rng.choice(MODELS), V=rng.choice(VENDORS))
    for template in SELF_EN:
        for _ in range(5):
            add("self_introduction", template, S=rng.choice(SELVES), V=rng.choice(VENDORS))
    for template in SIGNATURES:
        for _ in range(5):
            add("signature", template, S=rng.choice(SELVES), V=rng.choice(VENDORS))
    for language, templates in MULTILINGUAL.items():
        for template in templates:
            for _ in range(3):
                add(
                    f"multilingual_{language}",
                    template,
                    S=rng.choice(SELVES),
                    V=rng.choice(VENDORS),
                )
    contexts = [*PLAIN[:4], *SELF_EN[:4], *SIGNATURES[:8]]
    for kind, disguise in DISGUISES.items():
        made = 0
        while made < 18:
            template = rng.choice(contexts)
            key = "M" if "{M}" in template else "S"
            name = rng.choice(SELVES if key == "S" else MODELS)
            disguised = disguise(name, rng)
            if disguised is None:
                continue
            add(f"disguised_{kind}", template, **{key: disguised})
            made += 1
    for kind, sentences in (
        ("lookalike", LOOKALIKE),
        ("lookalike_multilingual", LOOKALIKE_MULTILINGUAL),
        ("lookalike_scripts", LOOKALIKE_SCRIPTS),
    ):
        for sentence in sentences:
            add(kind, sentence)
            add(kind, "{F} " + sentence)
            add(kind, sentence + "\n\n{F}")
            if kind == "lookalike":
                add(kind, "Q: who or what is meant? A: " + sentence)
    for sentence in LOOKALIKE_HARD:
        add("lookalike_hard", sentence)
    return rows


def main() -> None:
    rows = _rows()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    kinds = Counter(str(r["kind"]) for r in rows)
    positives = sum(1 for r in rows if r["markers"])
    print(f"{OUT}: {len(rows)} rows, {positives} with markers, {len(rows) - positives} without")
    for kind, n in sorted(kinds.items()):
        print(f"  {kind:<28}{n:>5}")


if __name__ == "__main__":
    main()
