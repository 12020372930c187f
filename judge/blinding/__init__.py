"""Blinding: opaque ids, shuffled presentation orders and pairs (`blind`), the unblinding key
kept apart (`key`), identity markers scrubbed however disguised (`scrubber`, `lexicon`,
`phrases`, `triggers`), outputs that address the judge flagged (`injection`, with its
wordings per language in `wordings` and the encodings it reads through in `decoding`), and
the canary responses that test a judge (`canaries`)."""

from judge.exports import lazy_exports

_EXPORTS = {
    "blind_responses": "judge.blinding.blind",
    "make_pairs": "judge.blinding.blind",
    "new_secret": "judge.blinding.blind",
    "Scrubber": "judge.blinding.scrubber",
    "detect": "judge.blinding.injection",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
