"""Model name -> family, and which judges may grade which pairs.

A judge never grades a pair in which either system shares its family (self-preference bias),
unless the run config allows it, and then every such verdict is flagged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from judge.errors import ConfigError
from judge.normalise import fold

if TYPE_CHECKING:
    from judge.config.run_config import JudgeSpec

# Ordered: the first pattern that matches the (provider-stripped, lower-cased) name wins.
# Fine-tunes named after their base (vicuna, alpaca) are their own family: they were trained
# on other models' outputs, but their makers and markers differ.
_PATTERNS: tuple[tuple[str, str], ...] = (
    ("openai", r"(^|[^a-z])(gpt|chatgpt|o1|o3|o4|text-davinci|davinci|openai)([^a-z]|$)"),
    ("anthropic", r"claude|anthropic"),
    ("google", r"gemini|gemma|bard|palm|t5|flan|google"),
    ("lmsys", r"vicuna|lmsys|fastchat"),
    ("stanford", r"alpaca"),
    ("meta", r"llama|meta-|opt-|galactica"),
    ("mistral", r"mistral|mixtral|codestral|ministral|pixtral"),
    ("alibaba", r"qwen|qwq"),
    ("deepseek", r"deepseek"),
    ("microsoft", r"(^|[^a-z])phi-?\d|orca|wizardlm"),
    ("cohere", r"command-r|cohere|aya"),
    ("xai", r"grok"),
    ("tii", r"falcon"),
    ("01ai", r"(^|[^a-z])yi-"),
    ("nvidia", r"nemotron"),
    ("databricks", r"dbrx|dolly"),
    ("mosaicml", r"(^|[^a-z])mpt-"),
    ("eleutherai", r"pythia|gpt-j|gpt-neo"),
    ("bigscience", r"bloom"),
    ("tsinghua", r"chatglm|glm-"),
    ("baichuan", r"baichuan"),
    ("moonshot", r"moonshot|kimi"),
)
# EleutherAI's gpt-j / gpt-neo would otherwise match the openai pattern.
_BEFORE_OPENAI = ("eleutherai",)

KNOWN_FAMILIES: tuple[str, ...] = tuple(name for name, _ in _PATTERNS)


def family_of(model: str, overrides: Mapping[str, str] | None = None) -> str:
    """Family of a model or system name: config override, else pattern, else the name itself.

    `model` may carry a provider prefix (`openai/gpt-4o`, `litellm/bedrock/...`); overrides are
    looked up with and without it. The name is matched as the scrubber matches text
    (`judge.normalise`), so "Сlaude" with a Cyrillic С is anthropic.
    """
    overrides = overrides or {}
    if model in overrides:
        return overrides[model]
    bare = model.split("/")[-1]
    if bare in overrides:
        return overrides[bare]
    name = fold(bare).lower()
    ordered = sorted(_PATTERNS, key=lambda p: p[0] not in _BEFORE_OPENAI)
    for family, pattern in ordered:
        if re.search(pattern, name):
            return family
    return name


def eligible_judges(
    pair: tuple[str, str],
    judges: Sequence[JudgeSpec],
    overrides: Mapping[str, str] | None = None,
) -> list[JudgeSpec]:
    """Judges whose family differs from both systems of `pair`."""
    families = {family_of(system, overrides) for system in pair}
    return [j for j in judges if judge_family(j, overrides) not in families]


def judge_family(judge: JudgeSpec, overrides: Mapping[str, str] | None = None) -> str:
    return judge.family or family_of(judge.model, overrides)


def check_pairs_judgeable(
    pairs: Iterable[tuple[str, str]],
    judges: Sequence[JudgeSpec],
    *,
    allow_same_family: bool,
    overrides: Mapping[str, str] | None = None,
) -> dict[tuple[str, str], list[JudgeSpec]]:
    """Judges that will grade each system pair.

    Without `allow_same_family`, only cross-family judges grade a pair, and a pair with none is
    a ConfigError. With it, every judge grades every pair (same-family verdicts are flagged by
    the caller via `is_same_family`).
    """
    plan: dict[tuple[str, str], list[JudgeSpec]] = {}
    orphans = []
    for pair in sorted({tuple(sorted(p)) for p in pairs}):
        eligible = eligible_judges(pair, judges, overrides)
        if allow_same_family:
            plan[pair] = list(judges)
        elif not eligible:
            orphans.append(pair)
        else:
            plan[pair] = eligible
    if orphans and judges:
        shown = ", ".join(f"{a} vs {b}" for a, b in orphans[:3])
        more = f" (and {len(orphans) - 3} more)" if len(orphans) > 3 else ""
        names = ", ".join(f"{j.model} [{judge_family(j, overrides)}]" for j in judges)
        raise ConfigError(
            f"no judge of a different family for {shown}{more}; judges: {names}. "
            "Add a judge from another family, or set `allow_same_family: true` to let "
            "same-family judges grade them (their verdicts are then flagged)."
        )
    return plan


def is_same_family(
    judge: JudgeSpec, pair: tuple[str, str], overrides: Mapping[str, str] | None = None
) -> bool:
    fam = judge_family(judge, overrides)
    return any(family_of(s, overrides) == fam for s in pair)
