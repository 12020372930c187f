"""A judge model served on every GPU of a Ray cluster behind one OpenAI-compatible endpoint
(Ray Serve LLM with vLLM), for `configs/ray/vllm-judges.yaml`:

    pip install 'ray[serve,llm]' vllm        # on every node
    serve run configs/ray/serve_judge.py:app

Not part of the `judge` package and not imported by it; untested here (no GPU on this
project's machines): the judge side of the path is tested against the simulator.
"""

from ray.serve.llm import LLMConfig, build_openai_app

GPUS = 8
"""Replicas: one per GPU of the cluster (tensor parallelism 1)."""

judge_model = LLMConfig(
    model_loading_config={"model_id": "qwen-judge", "model_source": "Qwen/Qwen2.5-7B-Instruct"},
    deployment_config={"autoscaling_config": {"min_replicas": GPUS, "max_replicas": GPUS}},
    engine_kwargs={"max_model_len": 8192},
)

app = build_openai_app({"llm_configs": [judge_model]})
