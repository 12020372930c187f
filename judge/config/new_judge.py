"""The new judge of `judge migrate OLD_RUN NEW.yaml`: one entry of a run config's `judges:`
and, for a simulated judge, the run config's `simulator:` block; nothing else (the rest of
the run is the old run's)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge.config.run_config import JudgeSpec, format_validation_error
from judge.config.simulator import SimulatorConfig
from judge.errors import ConfigError
from judge.yamlfile import read_yaml_mapping


class NewJudgeConfig(BaseModel):
    """NEW.yaml of `judge migrate`: the judge that replaces a run's judge."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    judges: list[JudgeSpec] = Field(min_length=1, max_length=1)
    """Exactly one judge, as in a run config's `judges:` list."""
    simulator: SimulatorConfig | None = None
    """The built-in simulator's knobs, as in a run config (`base_url: simulator` judges)."""

    @property
    def judge(self) -> JudgeSpec:
        return self.judges[0]


def load_new_judge(path: Path) -> NewJudgeConfig:
    """NEW.yaml, strictly: unknown keys, a second judge or a bad field are a ConfigError
    naming the file and the field; a `recorded:` path is resolved against the file's
    directory, as in a run config."""
    raw = read_yaml_mapping(path, "new judge")
    try:
        new = NewJudgeConfig.model_validate(raw)
    except ValidationError as exc:
        detail = format_validation_error(exc, NewJudgeConfig)
        if any(e["type"] in ("too_short", "too_long") for e in exc.errors()):
            detail += " (NEW.yaml names exactly one judge: `judges: [{model: ...}]`)"
        raise ConfigError(f"{path}: {detail}") from None
    recorded = new.judge.recorded
    if recorded is not None and not recorded.is_absolute():
        judge = new.judge.model_copy(update={"recorded": (path.parent / recorded).resolve()})
        new = new.model_copy(update={"judges": [judge]})
    return new
