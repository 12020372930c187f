"""judge: a blinded LLM-as-judge pipeline."""

from judge.errors import ConfigError, DataError, JudgeError, ParseError, ProviderError

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "DataError",
    "JudgeError",
    "ParseError",
    "ProviderError",
    "__version__",
]
