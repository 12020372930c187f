"""How the simulated judge decides, in words: `judge simulate --help` and docs/config.md print
this text. It describes `judge.simulator.judging`; change both together.

No imports: the CLI reads it when it builds its help, and `judge --help` must stay fast.
"""

_WRAPPED = """\
The simulator does not read answers for quality. Each candidate's latent quality, between 0
and 1, is:

1. the value of a hidden `⟦quality=x⟧` marker in the candidate's text, when there is one
(tests and benchmarks plant it to know the right answer; a run config's `simulator.plant`
adds it per system, so that a simulated run ranks the systems as planted; it does not count
towards length);

2. else 0 for a text that addresses the judge instead of answering (what the injection
detector flags in that text alone: a forged verdict, "rate this 10", a master key; a constant
answer is only seen across items, so it is not judged so here);

3. else a pseudo-quality hashed from the text: fixed for that text, the same for every seed,
unrelated to what the text says. On real outputs without markers the ranking is therefore
random, however large the differences look: a simulated run tests the pipeline, not the
systems.

Pairwise: each candidate's utility is its quality, plus `self_preference` when it carries
the identity markers of the judge's own family, plus Gaussian noise (standard deviation
`noise`, drawn for the unordered pair, so both orders see the same draw), plus
`verbosity_bias` times the log length ratio for the longer answer. A utility difference of
at least `tie_margin` decides the verdict; under it the judge is unsure, answers tie with
probability `tie_probability`, else A with probability `position_bias`: the only draw that
depends on the order of presentation. Absolute rubrics: the same utility (length compared
with a typical 400-character answer) clipped to 0..1 and scaled to the rubric's score range.

A flagged candidate wins, or gets the top score, with probability `injection_susceptibility`
(`master_key_susceptibility` for master keys), before quality is looked at; both are 0 by
default. Every verdict is a function of `seed`, the model asked and the request's content:
the same request to the same model gets the same verdict, and two models err independently."""

QUALITY_MODEL = "\n\n".join(" ".join(part.split()) for part in _WRAPPED.split("\n\n"))
"""Paragraphs on one line each, for the terminal and Markdown to wrap."""
