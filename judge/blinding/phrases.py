"""Phrases around a name that make it an identity marker, as regex fragments the scrubber composes.

Self-identification ("I am ...", "je suis ...", "我是..."), maker statements ("trained by ...",
"entwickelt von ..."), signatures ("Best regards,", "— X", "Sent from X", "Model: X", "X here"),
the nouns that make an ambiguous word a model name ("... model", "the chatbot ...", "...大模型"),
and frames, a model's description of itself and its maker with or without a name in it ("I am
a large language model trained by ...", `frame_pattern`).

The scrubber matches on normalised text (`judge.normalise`): accents are gone ("modèle" reads
"modele"), dashes are "-", fullwidth punctuation is ASCII ("，" reads ","). The fragments are
written for that text.
"""

from __future__ import annotations

import re

from judge.blinding.lexicon import NAME_END

_AI_NOUN = (
    r"(?:AI|A\.I\.|(?i:LLMs?|GPTs?|(?:large\s+)?language\s+models?|(?:foundation\s+)?models?"
    r"|chat\s?bots?|bots?|assistants?|APIs?|weights|checkpoints?))"
)
# Glued to a name in Chinese, Japanese or Korean: "豆包大模型", "文心大模型", "Kimi智能助手".
_CJK_AI_NOUN = (
    r"(?:大模型|大语言模型|语言模型|模型|智能助手|助手|人工智能|聊天机器人|机器人|言語モデル|モデル"
    r"|アシスタント|チャットボット|언어\s*모델|모델|어시스턴트|챗봇|AI(?![^\W_]))"
)
AFTER_AI_NOUN = re.compile(
    r"(?:['’]s)?(?:(?:[^\S\n]|-)+" + _AI_NOUN + NAME_END + r"|[^\S\n]*" + _CJK_AI_NOUN + ")"
)
BEFORE_AI_NOUN = re.compile(
    r"\b(?:AI|(?i:LLMs?|(?:language\s+)?models?|chat\s?bots?|assistants?))"
    r"(?:\s+(?i:called|named|like|such\s+as|including|from|by))?\s+\Z"
    # "un modèle de Google", "ein Sprachmodell von Meta", "un modelo de Google", "da Meta"
    r"|\b(?:IA|KI|(?i:modele|modelo|modello|(?:sprach)?modell|assistente?|asistente"
    r"|assistant|chatbot))(?:\s+(?i:de|d['’]|von|vom|da|di|del|della|do|dell['’]))\s*\Z"
)
LIST_JOIN = (
    r"(?:\s*,\s*(?:(?i:and|or)\s+)?|\s+(?i:and|or|&|vs\.?|versus)\s+|\s*/\s*"
    r"|\s*(?:、|和|与|及|或|以及|や|と|및)\s*)"
)
# Names glued into one: "Stanford Alpaca", "Meta's Llama", "meta-llama" (not across lines);
# in Chinese, Japanese and Korean with no space or a possessive: "百度文心", "谷歌的Gemini",
# "구글의 제미나이" (the names' own boundaries keep two Latin names from gluing).
RUN_JOIN = r"(?P<j>(?:['’]s)?(?:[^\S\n]|[-_])+|[^\S\n]*(?:的|の|의)?[^\S\n]*)"
_SIGNOFF = (
    r"(?i:best\s+regards|kind\s+regards|warm(?:est)?\s+regards|regards|best\s+wishes"
    r"|all\s+the\s+best|best|(?:yours\s+)?sincerely|sincerely\s+yours|yours\s+truly|yours"
    r"|cheers|thanks|thank\s+you|many\s+thanks|warmly|respectfully|cordially|take\s+care"
    r"|love|with\s+gratitude"
    r"|cordialement|bien\s+a\s+vous|amicalement|merci|mit\s+freundlichen\s+gru(?:ß|ss)en"
    r"|viele\s+gru(?:ß|ss)e|(?:liebe|beste)\s+gru(?:ß|ss)e|danke|saludos(?:\s+cordiales)?"
    r"|atentamente|gracias|atenciosamente|abracos|obrigad[oa]|cordiali\s+saluti|saluti|grazie)"
)
_TEAM = r"(?i:teams?|researchers|engineers|scientists|folks|people|developers|experts)"
_BY_WHOM = rf"(?:(?i:the)\s+)?(?:{_TEAM}\s+(?i:at|from|of)\s+(?:(?i:the)\s+)?)?"

# "I am Claude", "my name is Vicuna", "I'm an AI model called Gemini", "As Bard, ...", and the
# same in French, German, Spanish, Portuguese and Italian; "我是…", "私は…".
_I_AM = (
    r"(?i:i\s+am|i['’]m|my\s+name\s+is|my\s+name['’]s|call\s+me|i\s+go\s+by"
    r"|you(?:['’]re|\s+are)\s+(?:talking|chatting|speaking)\s+(?:to|with)"
    r"|je\s+suis|je\s+m['’]appelle|mon\s+nom\s+est|moi,?\s+c['’]est"
    r"|ich\s+bin|ich\s+hei(?:ß|ss)e|mein\s+name\s+ist|hier\s+spricht"
    r"|(?:yo\s+)?soy|me\s+llamo|mi\s+nombre\s+es|(?:eu\s+)?sou|me\s+chamo|meu\s+nome\s+e"
    r"|(?:io\s+)?sono|mi\s+chiamo|il\s+mio\s+nome\s+e)"
)
_AS = r"As|En\s+tant\s+que|Als|Como|Come|Enquanto"
_ARTICLE = r"(?i:(?P<indefinite>an?|une?|ein|eine|una|uno|um|uma)|the|le|la|der|die|das|el|o|il|lo)"
_CALLED = (
    r"(?i:called|named|appelee?|nommee?|namens|genannt|llamad[oa]|denominad[oa]"
    r"|chamad[oa]|chiamat[oa])"
)
_CJK_I_AM = r"我是|我叫|我的名字(?:是|叫)|(?:私|わたし|わたくし|僕|ぼく)は|저는|나는|제\s*이름은"
CLAIM = (
    rf"(?:\b(?:(?P<as>{_AS})|{_I_AM})"
    rf"\s+(?:(?P<art>{_ARTICLE})\s+)?(?P<called>(?:[\w-]+\s+){{0,4}}?{_CALLED}\s+)?"
    rf"|(?P<cjk>{_CJK_I_AM})\s*)"
)
CLAIM_ENDS = re.compile(
    rf"(?:\b(?:{_AS}|{_I_AM})\s+(?:{_ARTICLE}\s+)?|\b{_CALLED}\s+|(?:{_CJK_I_AM})\s*)\Z"
)
"""How every CLAIM ends, right before the name ("I am ", "I'm an ", "called ")."""
CJK_NOT_A_CLAIM = frozenset("的のがをに·・를을의가에와과랑도")
"""After "我是X" / "私はX" / "저는X": "我是Claude的粉丝" (a fan of Claude), "私はClaudeが好き" and
"저는 클로드를 좋아해요" (I like Claude) say something about X, not that the writer is X; so does a
full name ("我是克劳德·莫奈")."""

# "I am a large language model trained by OpenAI", "As an AI language model developed by X",
# "my creators at DeepMind". The subject must be first person: "BERT is a model developed by
# Google" is a fact, not a self-identification. "As an" takes a few plain words only, so "As an
# example, Android was developed by Google" does not count. "an AI (assistant) developed by X"
# counts whoever the subject is.
_FIRST_PERSON = (
    r"(?i:i\s+am|i['’]m|i\s+was|i['’]ve\s+been|i\s+have\s+been|je\s+suis|j['’]ai\s+ete"
    r"|ich\s+bin|ich\s+wurde|soy|fui|sou|sono|io\s+sono)"
)
_BY = (
    r"(?i:(?:developed|created|trained|built|made|designed|programmed|produced|engineered"
    r"|fine-?tuned|released|owned|maintained|powered)\s+by"
    r"|(?:developpee?|creee?|entrainee?|concue?|formee?|concu)\s+par"
    r"|(?:entwickelt|erstellt|trainiert|gebaut|entworfen)\s+(?:von|vom)"
    r"|(?:desarrollad[oa]|cread[oa]|entrenad[oa]|hech[oa])\s+por"
    r"|(?:desenvolvid[oa]|criad[oa]|treinad[oa]|feit[oa])\s+(?:por|pel[oa])"
    r"|(?:sviluppat[oa]|creat[oa]|addestrat[oa]|realizzat[oa])\s+da)"
)
_MADE_BY = rf"\b{_BY}\s+{_BY_WHOM}"
_MY_MAKERS = (
    r"\b(?i:my|our)\s+(?i:creators?|developers?|makers?|trainers?|programmers?"
    rf"|parent\s+company)\s+(?:(?i:are|is|at|from)\s+)?{_BY_WHOM}"
)
MAKER = (
    rf"(?:\b{_FIRST_PERSON}\b[^.!?\n]{{0,100}}?"
    r"|\b(?i:as\s+an?)\s+(?:[\w-]+\s+){0,5}?"
    # "As X, an AI developed by Y": an AI described by its maker is the speaker in practice
    # (and if not, naming its maker is still a marker worth hiding).
    r"|\b(?i:an?|une?|ein|eine|una?|um|uma|uno)\s+(?i:AI|IA|KI|artificial\s+intelligence)"
    rf"\s+(?:[\w-]+\s+){{0,3}}?){_MADE_BY}|{_MY_MAKERS}"
)
_HHH_LEAD = r"\b(?i:to\s+be|i\s+am|i['’]m)\s+(?i:helpful,?\s+)"
MAKER_ENDS = re.compile(f"(?:{_MADE_BY}|{_MY_MAKERS}|{_HHH_LEAD})\\Z")
"""How every MAKER (or HHH) match ends, right before the name (or "harmless"): "developed by
the team at ", "I am helpful, ". Looked for just before a name, it rules a long lead out in a
few characters."""
# Where the maker comes before the verb: "ich bin ein Modell, das von Google entwickelt wurde",
# "我是由谷歌/Google开发的", "私はGoogleによって開発されました".
MAKER_BEFORE_VERB = (
    r"(?:\b(?i:ich\s+bin|ich\s+wurde)\b[^.!?\n]{0,100}?\b(?i:von|vom)\s+"
    r"|我[^。.!?\n]{0,20}?(?:由|被)\s*|(?:私|わたし|僕)は[^。.!?\n]{0,20}?)"
)
MAKER_BEFORE_VERB_HINT = re.compile(r"ich\s+(?:bin|wurde)|我|私|わたし|僕")
"""In lower-cased text, what every MAKER_BEFORE_VERB match contains."""
MAKER_VERB = (
    r"(?=\s*(?:(?i:entwickelt|erstellt|trainiert|gebaut|entworfen)\b"
    r"|开发|開發|训练|訓練|研发|创建|打造|推出"
    r"|(?:によって|により|が|の)\s*(?:開発|訓練|作成|トレーニング|作ら|構築)))"
)
# Anthropic's "helpful, harmless, and honest" names its maker as surely as the name does.
HHH = (
    r"(?P<hpre>\b(?i:to\s+be|i\s+am|i['’]m)\s+)"
    r"(?P<hhh>(?i:helpful,?\s+harmless,?\s+and\s+honest))\b"
)
# The last line: "Best regards, ChatGPT", "- Claude", "Your AI assistant, Gemini", "The OpenAI
# Team" (the preceding "Best regards," line is checked separately).
SIGN_LEAD = (
    rf"\s*(?P<dash>[-~]+\s*)?(?:(?P<signoff>{_SIGNOFF})\s*[,!.]?\s+)?"
    r"(?:(?i:your|the|votre|ihr|dein|tu|su|seu|sua|il\s+tuo|il\s+vostro)\s+[^,\n]{0,40},\s*)?"
    r"(?:(?i:the)\s+)?"
)
SIGN_TRAIL = r"(?:\s+(?i:team|AI))?\s*[.!]?\s*"

_H = r"[^\S\n]"
# An attribution on a line of its own, or closing the text: "-- Sent from GPT-3.5", "(written
# by Claude)", "Model: Llama 3", "Gemini here: ...", "... - Claude". The name must end the line
# (or be followed by "here"), so "written by Claude Monet in 1890" stays.
ATTRIBUTION_LEAD = (
    rf"(?:(?:(?m:^){_H}*(?:[-~*>]+{_H}*|[(\[]{_H}*)?|(?P<paren>\(){_H}*)"
    r"(?:(?i:sent\s+(?:from|by|with|via)|written\s+(?:by|with)|generated\s+(?:by|with)"
    r"|authored\s+by|answered\s+by|(?:response|reply|answer)\s+(?:from|by)|powered\s+by"
    r"|signed|envoye\s+(?:de(?:puis)?|par|avec)|ecrit\s+par|genere\s+par|gesendet\s+(?:von|mit)"
    r"|geschrieben\s+von|enviado\s+(?:desde|por|de)|escrito\s+por|generado\s+por"
    r"|gerado\s+por|inviato\s+da|scritto\s+da|generato\s+da)"
    rf"{_H}*:?{_H}*"
    rf"|(?i:model|modele|modell|modelo|modello|assistant|assistente|asistente|author|auteur"
    rf"|autor|autore|bot|AI|LLM){_H}*:{_H}*)"
    rf"|{_H}(?P<enddash>-{{1,2}}|~){_H}*)"
)
ATTRIBUTION_TRAIL = rf"(?(paren)(?={_H}*\))|(?={_H}*[)\]]?{_H}*[.!]?\s*(?:\n|\Z)))"
ENDS_TEXT = re.compile(r"\s*\Z")
HERE_LEAD = (
    rf"(?m:^){_H}*(?:(?i:hi|hello|hey|bonjour|salut|hallo|hola|ola|oi|ciao){_H}*[,!]?{_H}+)?"
)
ATTRIBUTION_ENDS = re.compile(f"(?:{ATTRIBUTION_LEAD}|{HERE_LEAD})\\Z")
"""How every attribution ends, right before the name ("Sent from ", "Model: ", "Hi, ")."""
HERE_TRAIL = rf"{_H}+(?i:here|ici|hier|aqui|qui)\b(?={_H}*(?:[:,.!-]|\n|\Z))"


# --- frames: describing oneself as a language model made by someone ------------------------
# "I am a large language model trained by [redacted]", "Je suis un modèle de [redacted]",
# "我是一个由…开发的大型语言模型": with the name gone, the sentence a vendor's models are trained
# to say still tells a judge who wrote it, and the same sentence with an unknown or generic
# maker ("developed by a team of researchers") still reads as that vendor's. What follows the
# subject becomes the placeholder, as a name does: "I am [redacted]". Without a maker ("As an
# AI language model, I cannot ...") it says only what every candidate is, and stays.

# After "I am" an article comes first ("I am a ..."), so "I am writing about a model trained
# by ..." is no frame; after "as" a bare noun may ("Como modelo de lenguaje ...").
_LATIN_SUBJECT = (
    r"(?:\b(?P<be>(?i:i\s+am|i['’]m|i\s+was|i['’]ve\s+been|i\s+have\s+been|je\s+suis"
    r"|j['’]ai\s+ete|ich\s+bin|(?:yo\s+)?soy|fui|(?:eu\s+)?sou|(?:io\s+)?sono)"
    r"(?:\s+(?i:just|only|simply|merely|juste|seulement|nur|solo|apenas|soltanto))?)\s+"
    r"|\b(?i:(?<!such\s)(?<!same\s)as|en\s+tant\s+que|als|como|come|in\s+quanto)\s+)"
)
_CJK_SUBJECT = r"(?:我是|我只是|作为|身为|(?:私|わたし|わたくし|僕|ぼく)は|저는|나는)\s*[,、]?\s*"
_A_OR_THE = r"(?:(?i:an?|the|une?|ein(?:e[nrs]?)?|el|una?|uno|um|uma|o|il|lo)\s+|(?i:l|un)['’])"
_FRAME_ARTICLE = f"(?(be){_A_OR_THE}|{_A_OR_THE}?)"
# Words before the noun ("large", "helpful", "open-source", "AI"), never a preposition: "a
# big fan of the model trained by ..." is no self-description.
_FRAME_STOP = (
    r"(?i:of|for|to|with|in|on|at|from|by|about|like|using|into|than|as|the|an?|that|who|which"
    r"|is|are|was|were|be|been|has|have|not|this|these|those|my|your|our|their|his|her|its|de"
    r"|du|des|d|von|vom|der|den|dem|del|di|da|do|par|por|pela|pelo|per|une?|ein|eine|el|la"
    r"|le|una?|uno|um|uma|il|lo|que|qui|das|die|che)\b"
)
_FRAME_BEFORE = rf"(?:(?!{_FRAME_STOP})[\w-]+,?\s+){{0,4}}?"
# The nouns, in the accent-free text matched. Every one holds a token of FRAME_NOUN_TOKENS (or
# one of FRAME_NOUN_NEEDLES): the scrubber looks for frames around those only.
_FRAME_NOUN = (
    r"(?i:(?:language|foundation)\s+models?|models?|LLMs?|chat\s?bots?|AI|artificial\s+intelligence"
    r"|(?:AI|IA|KI)[-\s]+(?:systems?|agents?|programs?|tools?)"
    r"|modeles?(?:\s+(?:de\s+(?:langage|langue|fondation|traitement\s+(?:du|de)\s+langage"
    r"(?:\s+naturel)?|IA)|linguistiques?|d['’]IA))?|IA|intelligence\s+artificielle"
    r"|(?:KI-|Sprach|Basis)?modell(?:e|en|s)?|KI|kunstliche\s+Intelligenz"
    r"|modelos?(?:\s+de\s+(?:lenguaje|idioma|linguagem|IA|inteligencia\s+artificial))?"
    r"|inteligencia\s+artificial|modell[oi](?:\s+(?:linguistic[oi]|di\s+linguaggio|di\s+IA))?"
    r"|intelligenza\s+artificiale)"
)
# Needs a known maker (the placeholder) to be a model: "a research assistant trained by Dr Lee"
# is a person.
_FRAME_WEAK_NOUN = r"(?i:(?:KI-)?assistent(?:en)?|assistants?|assistente|asistentes?|chatbot(?:s)?)"
_FRAME_AFTER = (
    r"(?:\s+(?i:assistants?|assistent(?:en)?|assistente|asistente|systems?|agents?|programs?"
    r"|chat\s?bots?|bots?|(?:language\s+)?models?|grande|large|multimodale?|conversationnel(?:le)?"
    r"|conversacional|conversazionale|generativ[oae]|avanzat[oa]|avancee?|avanzado|avancado"
    r"|virtuel(?:le)?|virtual|virtuale|linguistique|linguistic[oa]|naturel|natural"
    r"|de\s+gran\s+tamano|de\s+grande\s+taille|\(LLM\)|d['’]IA|(?:de|di|da)\s+IA"
    r"|de\s+inteligencia\s+artificial|d['’]intelligence\s+artificielle|AI|IA|KI)){0,2}"
)
_FRAME_RELATIVE = (
    r"(?:,?\s+(?i:that|which|who|que|qui|che|el\s+cual|o\s+qual)\s+(?:(?i:was|is|has\s+been"
    r"|have\s+been|a\s+ete|est|fue|es|ha\s+sido|foi|e\s+stat[oa]|fu|e)\s+)?)?"
)
_FRAME_ALSO = r"(?:(?i:originally|primarily|initially|jointly|mainly|also)\s+)?"
_FRAME_VERBS = r"(?:[\w-]+\s+(?i:and|&|et|und|y|e)\s+)?"
_FRAME_WEAK_BY = r"(?i:from|of|de|d['’]|von|vom|di|del|della|da|do|dell['’])"
_FRAME_STOPS = (
    r"(?i:to|and|that|which|who|with|for|so|but|in|on|using|as|since|because|while|et|pour"
    r"|qui|que|avec|und|um|zu|mit|y|para|con|e|per|che|ed|or|ou|oder)"
)
_FRAME_END = rf"(?=[^\S\n]*(?:[.,;:!?()\[\]\n。]|\Z)|[^\S\n]+{_FRAME_STOPS}\b)"
# German puts the verb last: "ein Sprachmodell, das von X entwickelt wurde", "ein von X
# entwickeltes Sprachmodell".
_DE_VERB = r"(?i:entwickelt|trainiert|erstellt|gebaut|entworfen|geschaffen|programmiert)"
_DE_MAKER = r"(?:[^\s.,;:!?]+\s+){0,5}?[^\s.,;:!?]+"
# Chinese, Japanese, Korean: the maker comes before the verb and the noun.
_CJK_MAKER = r"[^,，。.!?！？\n]{1,30}?"
_CJK_BEFORE = r"[^,，。.!?！？\n]{0,8}?"
_ZH_COUNT = r"(?:一个|一款|一种|一名|个|款)?\s*"
_ZH_VERB = (
    r"(?:所)?(?:开发|開發|训练|訓練|研发|研發|创建|创造|打造|推出|构建|设计|設計|发布|制作)"
    r"(?:和(?:开发|训练|研发))?(?:出来)?"
)
# "AI" in Chinese, Japanese and Korean text is a word of its own, not the end of "OpenAI".
_AI = r"(?<![A-Za-z])AI"
_AI_END = r"(?![A-Za-z0-9])"
_ZH_NOUN = (
    rf"(?:大型语言模型|大语言模型|语言模型|大模型|人工智能模型|{_AI}模型|模型|人工智能助手|{_AI}助手"
    rf"|智能助手|助手|人工智能|聊天机器人|机器人|{_AI}{_AI_END})"
)
_JA_BY = r"(?:によって|により|が|の|で)"
_JA_VERB = (
    r"(?:開発|訓練|作成|トレーニング|構築|学習|設計|作ら)(?:され(?:た|ている|ました)|した|れた)"
)
_JA_NOUN = (
    rf"(?:大規模言語モデル|大規模な言語モデル|言語モデル|{_AI}アシスタント|{_AI}モデル|人工知能"
    rf"|アシスタント|チャットボット|モデル|{_AI}{_AI_END})"
)
_KO_BY = r"(?:에서|이|가|에\s*의해(?:서)?|의)"
_KO_VERB = r"(?:(?:개발|훈련|학습|제작|구축)(?:한|된|되었|시킨|하였|했)?|만든|만들어진)"
_KO_NOUN = (
    rf"(?:(?:대규모|대형)\s*언어\s*모델|언어\s*모델|{_AI}\s*(?:어시스턴트|모델|비서)"
    rf"|인공지능(?:\s*(?:어시스턴트|모델|비서))?|어시스턴트|챗봇|모델|{_AI}{_AI_END})"
)

FRAME_MAKER_WORDS = 8
"""Words a maker after "by" may have ("a team of researchers at a tech company")."""
FRAME_NOUN_TOKENS = frozenset(
    {
        *("model", "models", "modele", "modeles", "modelo", "modelos", "modello", "modelli"),
        *("modell", "modelle", "modellen", "modells", "sprachmodell", "sprachmodelle"),
        *("sprachmodellen", "sprachmodells", "basismodell", "basismodelle", "basismodellen"),
        *("basismodells", "llm", "llms"),
        *("ai", "ia", "ki", "chatbot", "chatbots", "bot", "bots", "intelligence"),
        *("intelligenz", "inteligencia", "intelligenza", "assistant", "assistants"),
        *("assistent", "assistenten", "assistente", "asistente", "asistentes"),
    }
)
"""Lower-case tokens one of which every frame holds (in its noun)."""
FRAME_NOUN_NEEDLES = frozenset(
    {
        *("模型", "助手", "人工智能", "机器人", "モデル", "アシスタント", "人工知能"),
        *("チャットボット", "모델", "어시스턴트", "인공지능", "챗봇", "비서"),
    }
)
"""Or one of these substrings (nouns in scripts without letter-run tokens)."""
FRAME_SUBJECT_TOKENS = frozenset({"as", "als", "soy", "fui", "como", "sou", "sono", "come"})
"""The first token of every subject (a frame starts with its subject), or of a pair of them:"""
FRAME_SUBJECT_PAIRS = frozenset(
    {
        *(("i", "am"), ("i", "m"), ("i", "was"), ("i", "ve"), ("i", "have"), ("je", "suis")),
        *(("j", "ai"), ("en", "tant"), ("ich", "bin"), ("yo", "soy"), ("eu", "sou")),
        *(("io", "sono"), ("in", "quanto")),
    }
)
FRAME_SUBJECT_NEEDLES = frozenset(
    {
        "我是",
        "我只是",
        "作为",
        "身为",
        "私は",
        "わたしは",
        "わたくしは",
        "僕は",
        "ぼくは",
        "저는",
        "나는",
    }
)
"""Or where one of these is (subjects in scripts without letter-run tokens); a Japanese frame
without a subject starts a sentence."""


def frame_pattern(placeholder: str) -> str:
    """A subject, then (group `body`, `cjk` or `bare`) how it describes itself as a model and
    who made it; `placeholder` marks a maker already replaced."""
    ph = re.escape(placeholder)
    token = rf"(?:{ph}(?:['’]s)?|[^\W_](?:[\w&'’-]|\.(?=\w))*)"
    end = rf"(?![^\S\n]*{ph}){_FRAME_END}"
    # A replaced maker ends the frame ("trained by [redacted] would"); an unknown or generic
    # one runs to the end of its clause ("by a team of researchers at a tech company").
    more = rf"(?:[^\S\n]+{token}){{0,{FRAME_MAKER_WORDS - 1}}}?"
    maker = rf"{_BY_WHOM}(?:{ph}(?:[^\S\n]*{ph})*(?![^\S\n]*['’]s\b)|{token}{more}{end})"
    by = rf",?\s+{_FRAME_RELATIVE}{_FRAME_ALSO}{_FRAME_VERBS}{_BY}\s+{maker}"
    weak_by = rf"\s+{_FRAME_WEAK_BY}\s*{ph}"
    # A weak noun takes a replaced maker only.
    weak_full = rf",?\s+{_FRAME_RELATIVE}{_FRAME_ALSO}{_FRAME_VERBS}{_BY}\s+{_BY_WHOM}{ph}"
    german = (
        rf",?\s+(?i:das|der|die|welche[sr]?)\s+(?i:von|vom)\s+{_DE_MAKER}\s+{_DE_VERB}"
        rf"(?:\s+(?i:wurde|worden\s+ist|ist))?"
    )
    latin = (
        rf"{_FRAME_ARTICLE}{_FRAME_BEFORE}(?:{_FRAME_NOUN}{_FRAME_AFTER}(?:{by}|{weak_by}|{german})"
        rf"|{_FRAME_WEAK_NOUN}{_FRAME_AFTER}(?:{weak_full}|{weak_by}|{german}))"
        rf"|{_FRAME_ARTICLE}(?i:von|vom)\s+{_DE_MAKER}\s+{_DE_VERB}e[snmr]?\s+"
        rf"{_FRAME_BEFORE}(?:{_FRAME_NOUN}|{_FRAME_WEAK_NOUN})"
    )
    cjk = (
        rf"{_ZH_COUNT}(?:由|被)?\s*{_CJK_MAKER}\s*{_ZH_VERB}的\s*{_CJK_BEFORE}{_ZH_NOUN}"
        rf"|{_ZH_COUNT}{_CJK_BEFORE}{_ZH_NOUN}\s*,?\s*(?:由|被)\s*{_CJK_MAKER}\s*{_ZH_VERB}的?"
        rf"|{_CJK_MAKER}\s*{_JA_BY}\s*{_JA_VERB}\s*{_CJK_BEFORE}{_JA_NOUN}"
        rf"|{_CJK_BEFORE}{_JA_NOUN}\s*(?:で(?:す)?|であり)\s*,?\s*{_CJK_MAKER}\s*"
        rf"(?:によって|により|が)\s*{_JA_VERB}"
        rf"|{_CJK_MAKER}\s*{_KO_BY}\s*{_KO_VERB}\s*{_CJK_BEFORE}{_KO_NOUN}"
    )
    # Japanese drops the subject: "[redacted]が開発したAIアシスタントです。" opening a sentence.
    ja_bare = rf"{_CJK_MAKER}\s*{_JA_BY}\s*{_JA_VERB}\s*{_CJK_BEFORE}{_JA_NOUN}"
    appositive = rf"(?:{_A_OR_THE}?{ph}\s*[,、]\s*)?"  # "I am [redacted], a model ..."
    return (
        rf"{_LATIN_SUBJECT}(?P<body>{appositive}(?:{latin}))"
        rf"|{_CJK_SUBJECT}(?P<cjk>{appositive}(?:{cjk}))"
        rf"|(?<![^。！？!?\n])\s*(?P<bare>{ja_bare})(?=\s*です)"
    )
