import pytest

from judge import JudgeSpec
from judge.errors import ConfigError
from judge.families import check_pairs_judgeable, eligible_judges, family_of, is_same_family


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("gpt-4", "openai"),
        ("gpt-3.5-turbo", "openai"),
        ("openai/gpt-4.1-mini", "openai"),
        ("o3-mini", "openai"),
        ("claude-v1", "anthropic"),
        ("anthropic/claude-sonnet-4-5", "anthropic"),
        ("llama-13b", "meta"),
        ("meta-llama/Llama-3.1-8B-Instruct", "meta"),
        ("vicuna-13b-v1.2", "lmsys"),
        ("alpaca-13b", "stanford"),
        ("gemini-1.5-pro", "google"),
        ("gemma-2-9b-it", "google"),
        ("mistral-7b-instruct", "mistral"),
        ("Mixtral-8x7B", "mistral"),
        ("Qwen2.5-72B-Instruct", "alibaba"),
        ("deepseek-v3", "deepseek"),
        ("gpt-j-6b", "eleutherai"),  # not OpenAI despite the "gpt" prefix
        ("litellm/bedrock/anthropic.claude-3-haiku", "anthropic"),
        ("acme-support-bot", "acme-support-bot"),  # unknown: its own family
    ],
)
def test_family_of(model: str, family: str) -> None:
    assert family_of(model) == family


def test_overrides_win_with_or_without_provider_prefix() -> None:
    assert family_of("acme-bot", {"acme-bot": "openai"}) == "openai"
    assert family_of("vllm/acme-bot", {"acme-bot": "openai"}) == "openai"
    assert family_of("gpt-4", {"gpt-4": "custom"}) == "custom"


GPT = JudgeSpec(model="openai/gpt-4.1-mini")
CLAUDE = JudgeSpec(model="anthropic/claude-sonnet-4-5")
QWEN = JudgeSpec(model="openai/qwen2.5-72b", base_url="http://localhost:8000/v1", family="alibaba")


def test_eligible_judges_exclude_either_systems_family() -> None:
    assert eligible_judges(("gpt-4", "llama-13b"), [GPT, CLAUDE]) == [CLAUDE]
    assert eligible_judges(("claude-v1", "gpt-4"), [GPT, CLAUDE, QWEN]) == [QWEN]
    assert eligible_judges(("vicuna-13b", "llama-13b"), [GPT, CLAUDE]) == [GPT, CLAUDE]


def test_explicit_judge_family_beats_inference() -> None:
    # QWEN is served through the openai provider but is an alibaba model.
    assert eligible_judges(("gpt-4", "gpt-3.5-turbo"), [QWEN]) == [QWEN]


def test_pair_without_eligible_judge_is_config_error_naming_fix() -> None:
    with pytest.raises(ConfigError) as err:
        check_pairs_judgeable(
            [("gpt-4", "claude-v1"), ("gpt-4", "llama-13b")], [GPT, CLAUDE], allow_same_family=False
        )
    msg = str(err.value)
    assert "claude-v1 vs gpt-4" in msg
    assert "allow_same_family: true" in msg
    assert "openai/gpt-4.1-mini [openai]" in msg


def test_allow_same_family_keeps_all_judges_and_flags() -> None:
    plan = check_pairs_judgeable([("gpt-4", "claude-v1")], [GPT, CLAUDE], allow_same_family=True)
    assert plan[("claude-v1", "gpt-4")] == [GPT, CLAUDE]
    assert is_same_family(GPT, ("claude-v1", "gpt-4"))
    assert not is_same_family(QWEN, ("claude-v1", "gpt-4"))


def test_plan_uses_only_cross_family_judges() -> None:
    plan = check_pairs_judgeable(
        [("gpt-4", "llama-13b"), ("vicuna-13b", "alpaca-13b")],
        [GPT, CLAUDE],
        allow_same_family=False,
    )
    assert plan[("gpt-4", "llama-13b")] == [CLAUDE]
    assert plan[("alpaca-13b", "vicuna-13b")] == [GPT, CLAUDE]
