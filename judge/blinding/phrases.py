"""Phrases around a name that make it an identity marker, as regex fragments the scrubber composes.

Self-identification ("I am ...", "je suis ...", "我是..."), maker statements ("trained by ...",
"entwickelt von ..."), signatures ("Best regards,", "— X", "Sent from X", "Model: X", "X here")
and the nouns that make an ambiguous word a model name ("... model", "the chatbot ...").

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
AFTER_AI_NOUN = re.compile(r"(?:['’]s)?(?:[^\S\n]|-)+" + _AI_NOUN + NAME_END)
BEFORE_AI_NOUN = re.compile(
    r"\b(?:AI|(?i:LLMs?|(?:language\s+)?models?|chat\s?bots?|assistants?))"
    r"(?:\s+(?i:called|named|like|such\s+as|including|from|by))?\s+\Z"
    # "un modèle de Google", "ein Sprachmodell von Meta", "un modelo de Google", "da Meta"
    r"|\b(?:IA|KI|(?i:modele|modelo|modello|(?:sprach)?modell|assistente?|asistente"
    r"|assistant|chatbot))(?:\s+(?i:de|d['’]|von|vom|da|di|del|della|do|dell['’]))\s*\Z"
)
LIST_JOIN = r"(?:\s*,\s*(?:(?i:and|or)\s+)?|\s+(?i:and|or|&|vs\.?|versus)\s+|\s*/\s*)"
# Names glued into one: "Stanford Alpaca", "Meta's Llama", "meta-llama" (not across lines).
RUN_JOIN = r"(?P<j>(?:['’]s)?(?:[^\S\n]|[-_])+)"
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
_CJK_I_AM = r"我是|我叫|我的名字(?:是|叫)|(?:私|わたし|わたくし|僕|ぼく)は"
CLAIM = (
    rf"(?:\b(?:(?P<as>{_AS})|{_I_AM})"
    rf"\s+(?:(?P<art>{_ARTICLE})\s+)?(?P<called>(?:[\w-]+\s+){{0,4}}?{_CALLED}\s+)?"
    rf"|(?P<cjk>{_CJK_I_AM})\s*)"
)
CLAIM_ENDS = re.compile(
    rf"(?:\b(?:{_AS}|{_I_AM})\s+(?:{_ARTICLE}\s+)?|\b{_CALLED}\s+|(?:{_CJK_I_AM})\s*)\Z"
)
"""How every CLAIM ends, right before the name ("I am ", "I'm an ", "called ")."""
CJK_NOT_A_CLAIM = frozenset("的のがをに")
"""After "我是X" / "私はX": "我是Claude的粉丝" (a fan of Claude) and "私はClaudeが好き" (I like
Claude) say something about X, not that the writer is X."""

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
