"""Run configuration: the YAML a run is made from, as typed models with their checks
(`run_config`), the limits a render stays within (`limits`), batch settings (`batch`), the local
simulator's knobs (`simulator`, `quality_model`) and the generated reference (`reference`)."""

from judge.exports import lazy_exports

_EXPORTS = {
    "RunConfig": "judge.config.run_config",
    "JudgeSpec": "judge.config.run_config",
    "DataConfig": "judge.config.run_config",
    "load_config": "judge.config.run_config",
    "RenderLimits": "judge.config.limits",
    "BatchSettings": "judge.config.batch",
    "SimulatorConfig": "judge.config.simulator",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
