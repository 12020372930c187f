"""Write tests/data/scrub_corpus.jsonl: a labelled corpus for the scrubber, from templates.

Rows with identity markers (plain mentions, self-introductions in eight languages, signatures,
and each disguise: Cyrillic and Greek look-alikes, fullwidth and mathematical letters,
invisible and bidi characters, hyphen variants, accents, spaced-out letters, digits and
symbols for letters, dotted abbreviations; names in Chinese, Japanese and Korean; frames, the
sentence a model describes itself and its maker with, in nine languages) and rows with
ordinary words that look like names (Claudette, Geminiani, palmistry, "the mistral wind",
"Claude Monet", a llama, Russian and Greek text, "mp3" and "C#", 月 and 智能 and 豆包 in
Chinese, a research assistant trained by a professor). Each row: id, kind, text, and
`markers`, the [start, end) spans a scrubber must replace ([] for none).

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


# --- digits and symbols for letters, dotted abbreviations ----------------------------------------

# Leetspeak as it is written: the letters a digit or symbol commonly replaces.
_LEET = {"o": "0", "l": "1", "i": "1!", "e": "3", "a": "4@", "s": "5$", "t": "7", "h": "#"}


def _lead(name: str) -> int:
    """Where the name's first word of letters ends ("Claude" of "Claude 3.5 Sonnet")."""
    end = 0
    while end < len(name) and name[end].isalpha():
        end += 1
    return end


def _digits(name: str, rng: random.Random) -> str | None:
    end = _lead(name)
    spots = [i for i in range(end) if name[i].lower() in _LEET]
    if end < 3 or not spots:
        return None
    chosen = set(rng.sample(spots, 1 if end < 6 else rng.randint(1, 2)))
    return "".join(rng.choice(_LEET[c.lower()]) if i in chosen else c for i, c in enumerate(name))


def _dotted(name: str, rng: random.Random) -> str | None:
    # "G.P.T.-4", "G-P-T-4o", "Q.w.e.n 2.5", "L.L.a.M.A"
    end = _lead(name)
    if end < 3:
        return None
    sep = rng.choice([".", "-"])
    rest = name[end:]
    closing = "." if sep == "." and (not rest or rest.startswith("-")) else ""
    return sep.join(name[:end]) + closing + rest


LETTER_DISGUISES: dict[str, Callable[[str, random.Random], str | None]] = {
    "digits": _digits,
    "dotted": _dotted,
}

# --- Chinese, Japanese and Korean names ---------------------------------------------------------

ZH_SELVES = ["通义千问", "文心一言", "智谱清言", "讯飞星火", "腾讯混元", "豆包", "Kimi", "千问"]
ZH_MODELS = ["通义千问", "文心一言", "智谱清言", "讯飞星火", "腾讯混元", "ChatGLM", "Qwen2.5"]
ZH_VENDORS = ["阿里云", "百度", "智谱", "深度求索", "字节跳动", "科大讯飞", "零一万物", "百川智能"]
ZH_VENDORS += ["稀宇科技", "商汤科技"]
# Vendors whose name is also an ordinary word (the dark side of the moon, Ali Baba): a maker in a
# frame, but a plain mention of one is a known miss (LOOKALIKE_HARD's counterpart, HARD_CJK).
ZH_AMBIGUOUS_VENDORS = ["月之暗面", "阿里巴巴", "腾讯"]
# Words that are also ordinary Chinese, in a model's context.
ZH_IN_CONTEXT = ["豆包", "文心", "混元", "百川", "通义", "星火"]
ZH_FILLER = ["答案是四。", "光合作用把光能转化为化学能。", "下面是一个反转列表的函数。"]
CJK = {
    "zh": [
        "我是{S}，很高兴为你服务。{F}",
        "你好！我是{S}，有什么可以帮你？",
        "{F}以上内容由{M}生成，仅供参考。",
        "{M}和{W}都是常见的大模型。{F}",
        "这段代码是用{M}写的。",
        "{V}发布了新的模型。{F}",
        "{F}这个问题可以问问{M}。",
    ],
    "ja": [
        "私は{S}です。ご質問にお答えします。",
        "この回答は{M}が作成しました。",
        "{M}と{W}を比べてみましょう。",
        "{V}が新しいモデルを発表しました。",
        "こんにちは、{M}です。",
    ],
    "ko": [
        "안녕하세요, 저는 {S}입니다.",
        "이 답변은 {M}가 작성했습니다.",
        "{M}와 {W}를 비교해 보겠습니다.",
        "{V}는 새로운 모델을 발표했습니다.",
        "저는 {S}예요. 무엇을 도와드릴까요?",
    ],
}
CJK_NAMES = {
    "zh": (ZH_SELVES, ZH_MODELS, ZH_VENDORS),
    "ja": (
        ["クロード", "ジェミニ", "チャットGPT", "ディープシーク", "ラマ3"],
        ["チャットGPT", "チャットGPT-4o", "ディープシーク", "クロード3", "ジェミニ1.5"],
        ["オープンAI", "アンソロピック", "オープンエーアイ"],
    ),
    "ko": (
        ["클로드", "제미나이", "챗GPT", "딥시크"],
        ["챗GPT", "제미나이", "딥시크", "라마 3", "클로드 3"],
        ["오픈AI", "앤트로픽"],
    ),
}

# --- frames: a model describing itself and its maker -------------------------------------------

# Makers that name no vendor the scrubber knows: generic, in-house, or already replaced.
GENERIC = {
    "en": ["a team of researchers", "Acme Labs", "[redacted]", "a small research lab"],
    "fr": ["une équipe de chercheurs", "[redacted]", "Acme Labs"],
    "de": ["einem Forschungsteam", "[redacted]", "Acme Labs"],
    "es": ["un equipo de investigadores", "[redacted]", "Acme Labs"],
    "pt": ["uma equipe de pesquisadores", "[redacted]", "Acme Labs"],
    "it": ["un gruppo di ricercatori", "[redacted]", "Acme Labs"],
    "zh": ["一家科技公司", "[redacted]", "某研究团队"],
    "ja": ["ある研究チーム", "[redacted]", "アクメ社"],
    "ko": ["한 연구팀", "[redacted]", "아크메"],
}
FRAMES = {
    "en": [
        "I am {[}a large language model developed by {V}{]}. {F}",
        "I'm {[}an AI assistant built by {G}{]}, and I'm glad to help. {F}",
        "As {[}a language model trained by {V}{]}, I don't have opinions. {F}",
        "Hello! I am {[}{S}, an AI model created by {V}{]}. {F}",
        "I am {[}a large language model, trained by {G}{]}. {F}",
        "I was {[}an AI system designed by {V}{]} to answer questions. {F}",
    ],
    "fr": [
        "Je suis {[}un modèle de langage développé par {V}{]}. Voici la réponse.",
        "Je suis {[}un modèle de [redacted]{]}. La capitale est Canberra.",
        "En tant que {[}modèle de langage entraîné par {G}{]}, je n'ai pas d'opinion.",
        "Bonjour, je suis {[}une IA conçue par {V}{]}.",
    ],
    "de": [
        "Ich bin {[}ein großes Sprachmodell, das von {V} trainiert wurde{]}. Hier ist die Antwort.",
        "Ich bin {[}ein von {G} entwickeltes Sprachmodell{]}.",
        "Als {[}KI-Assistent, der von {V} entwickelt wurde{]}, habe ich keine Meinung.",
        "Ich bin {[}ein Sprachmodell von [redacted]{]}. Gern helfe ich.",
    ],
    "es": [
        "Soy {[}un modelo de lenguaje entrenado por {V}{]}. La respuesta es 4.",
        "Soy {[}un asistente de IA creado por {V}{]}. Con gusto te ayudo.",
        "Como {[}modelo de lenguaje desarrollado por {G}{]}, no tengo opiniones.",
        "Hola, soy {[}una inteligencia artificial creada por {G}{]}.",
    ],
    "pt": [
        "Sou {[}um modelo de linguagem treinado pela {V}{]}. Segue o resumo.",
        "Eu sou {[}uma inteligência artificial criada por {G}{]}.",
        "Olá! Sou {[}um assistente virtual desenvolvido pela {V}{]}.",
    ],
    "it": [
        "Sono {[}un modello linguistico addestrato da {V}{]}. Ecco la risposta.",
        "Sono {[}un assistente virtuale sviluppato da {V}{]}.",
        "Come {[}modello di linguaggio creato da {G}{]}, non ho opinioni personali.",
    ],
    "zh": [
        "我是{[}一个由{V}开发的大型语言模型{]}。{F}",
        "我是{[}由{G}训练的人工智能助手{]}，很高兴为你服务。",
        "我是{[}一个大型语言模型，由{V}开发{]}。",
        "作为{[}一个由{V}开发的AI助手{]}，我没有个人观点。",
        "你好，我是{[}{S}，一个由{V}研发的语言模型{]}。",
    ],
    "ja": [
        "私は{[}{V}によって訓練された大規模言語モデル{]}です。",
        "私は{[}{V}が開発したAIアシスタント{]}です。",
        "わたしは{[}{G}によって開発された言語モデル{]}です。",
    ],
    "ko": [
        "저는 {[}{V}에서 개발한 대규모 언어 모델{]}입니다.",
        "저는 {[}{V}가 훈련시킨 AI 어시스턴트{]}입니다.",
        "저는 {[}{G}에 의해 개발된 인공지능{]}입니다.",
    ],
}
FRAME_VENDORS = {
    "zh": [*ZH_VENDORS, *ZH_AMBIGUOUS_VENDORS],
    "ja": [*CJK_NAMES["ja"][2], "グーグル", "メタ"],
    "ko": [*CJK_NAMES["ko"][2], "구글", "메타"],
}
# Known misses, kept in so the score does not flatter: a vendor whose name is also an ordinary
# word, mentioned outside a model's context (as "The Cohere usage policy" in English).
HARD_CJK = ["{V}发布了新的模型。", "{V}が新しいモデルを発表しました。"]
HARD_CJK_VENDORS = ["月之暗面", "メタ"]

# --- rows without markers, for the new kinds -----------------------------------------------------

LOOKALIKE_DIGITS = [
    "Convert the file to mp3 and check the H2O levels.",
    "It was the 4th time; the 1st and 3rd went fine.",
    "Write it in C# or F#, then email me@example.com.",
    "Mark it P1 and assign it to the Y1 class.",
    "The R2D2 toy costs $5 at the 7-Eleven.",
    "Run it on x86 and ARM64, with 3D acceleration on.",
    "The password must contain @, # and $ signs.",
    "Vitamin B12 and D3 supplements are common.",
    "Win10 and IPv6 work fine with utf8 and base64.",
    "C1 and C2 are levels of language proficiency.",
    "Elevated GPT and AST levels can point to liver damage.",
    "GPT (glutamic pyruvic transaminase) is a liver enzyme.",
    "Use l33t speak sparingly, 4ever and always.",
    "Th1s t3st has s0me numb3rs in it.",
    "The B2B market grew 5% in Q3.",
]
LOOKALIKE_CJK = [
    "今晚的月亮很圆，月光洒满了院子。",
    "人工智能和智能手机改变了我们的生活。",
    "他精通数学，也通晓历史。",
    "《文心雕龙》是中国古代的文学理论著作。",
    "海纳百川，有容乃大。",
    "早餐我吃了两个豆包和一杯豆浆。",
    "道家讲混元一气，太极生两仪。",
    "《白虎通义》记录了汉代的经学讨论。",
    "商汤灭夏，建立了商朝。",
    "苟日新，日日新，又日新。",
    "平克·弗洛伊德的专辑《月之暗面》非常有名。",
    "星火燎原，不可阻挡。",
    "这是阿里巴巴与四十大盗的故事。",
    "腾讯视频上有很多电视剧。",
    "我是克劳德·莫奈的粉丝。",
    "ラマはアンデス地方の動物です。",
    "写真のメタデータを確認してください。",
    "ジェミニ計画は1960年代の宇宙計画です。",
    "バードウォッチングが趣味です。",
    "クロード・モネの睡蓮が好きです。",
    "月がとてもきれいですね。",
    "라마단 기간에는 해가 진 뒤에 식사를 합니다.",
    "달라이 라마는 티베트의 지도자입니다.",
    "메타버스는 가상 세계입니다.",
    "구글에서 맛집을 검색했어요.",
    "저는 클로드 모네의 그림을 좋아해요.",
    "저는 클로드를 좋아해요.",
]
LOOKALIKE_FRAMES = [
    "As an AI language model, I cannot browse the internet.",
    "I am a large language model, so I may make mistakes.",
    "I am a research assistant trained by Professor Lee in statistics.",
    "I am a big fan of the model trained by my colleague.",
    "The model was developed by a team of researchers at the university.",
    "I am writing about a model trained by researchers in 2019.",
    "As a teacher trained by the state, I follow the curriculum.",
    "I am a fashion model represented by an agency in Paris.",
    "Je suis un étudiant formé par mes professeurs.",
    "Ich bin ein Lehrer, der von vielen Schülern geschätzt wird.",
    "Como modelo de negocio, esto funciona bien.",
    "Sono un ingegnere formato dalla mia università.",
    "这个模型是由研究人员开发的。",
    "我是一个学生，由父母抚养长大。",
    "この言語モデルは研究チームが開発しました。",
    "이 모델은 연구팀이 개발했습니다.",
    "Tell me about a language model developed by a university.",
    "Such a model trained by students can still be useful.",
]


def _more_rows(add: Callable[..., None], rng: random.Random) -> None:
    """The kinds added for disguised letters, CJK names and frames (issue 31)."""
    contexts = [*PLAIN[:4], *SELF_EN[:4], *SIGNATURES[:8]]
    for kind, disguise in LETTER_DISGUISES.items():
        made = 0
        while made < 18:
            template = rng.choice(contexts)
            key = "M" if "{M}" in template else "S"
            disguised = disguise(rng.choice(SELVES if key == "S" else MODELS), rng)
            if disguised is not None:
                add(f"disguised_{kind}", template, **{key: disguised})
                made += 1
    for language, templates in CJK.items():
        selves, models, vendors = CJK_NAMES[language]
        for template in templates:
            for _ in range(3):
                pick = rng.sample(models, 2)
                filler = rng.choice(ZH_FILLER)
                add(
                    f"cjk_{language}",
                    template,
                    S=rng.choice(selves),
                    M=pick[0],
                    W=pick[1],
                    V=rng.choice(vendors),
                    F=filler,
                )
    for name in ZH_IN_CONTEXT:
        add("cjk_zh", "{M}大模型可以回答这个问题。", M=name)
    for template, vendor in zip(HARD_CJK, HARD_CJK_VENDORS, strict=True):
        add("hard_cjk", template, V=vendor)
    add("cjk_zh", "不懂的地方可以{V}一下。", V="百度")
    for language, templates in FRAMES.items():
        vendors = FRAME_VENDORS.get(language, VENDORS)
        selves = CJK_NAMES["zh"][0] if language == "zh" else SELVES
        for template in templates:
            for _ in range(3):
                add(
                    f"frame_{language}",
                    template,
                    V=rng.choice(vendors),
                    S=rng.choice(selves),
                    G=rng.choice(GENERIC[language]),
                )
    for kind, sentences in (
        ("lookalike_digits", LOOKALIKE_DIGITS),
        ("lookalike_cjk", LOOKALIKE_CJK),
        ("lookalike_frames", LOOKALIKE_FRAMES),
    ):
        for sentence in sentences:
            add(kind, sentence)
            add(kind, "{F} " + sentence)
            add(kind, sentence + "\n\n{F}")


def _place(template: str, values: dict[str, str]) -> tuple[str, list[list[int]]]:
    """Fill {M}/{S}/{V}/{W} (markers, spans recorded) and {F}/{G} (filler, a generic maker) in
    order; {[} ... {]} is one marker, whatever it holds (a frame)."""
    text, spans, i = "", [], 0
    frame: int | None = None
    while i < len(template):
        if template[i] == "{" and template[i + 2 : i + 3] == "}":
            key = template[i + 1]
            if key in "[]":
                if key == "]" and frame is not None:
                    spans.append([frame, len(text)])
                frame = len(text) if key == "[" else None
                i += 3
                continue
            value = values[key]
            if key in "MSVW" and frame is None:
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
    _more_rows(add, rng)
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
