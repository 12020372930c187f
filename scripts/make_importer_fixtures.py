"""Make the importers' test fixtures (tests/fixtures/importers/) with the tools themselves,
offline: `python scripts/make_importer_fixtures.py inspect|lm-eval|promptfoo|hf [--out DIR]`.

- inspect: Inspect AI (`pip install inspect-ai`, the `inspect` extra) runs a three-sample task
  from a local dataset on two `mockllm` models whose replies are given here (one `.eval` log,
  one `.json` log; one sample of one model fails on purpose).
- lm-eval: lm-evaluation-harness (`pip install lm-eval tenacity`, in any venv: give its
  `lm_eval` with --tool) runs a generation task and a multiple-choice task from local data,
  `--log_samples`, once with its `dummy` model and once with `local-completions` against a
  small completions server started here on 127.0.0.1.
- promptfoo: `promptfoo eval` (give its executable with --tool; promptfoo needs Node >= 22)
  runs promptfooconfig.yaml of the fixture dir (an `echo` provider and a local JS provider,
  one of whose calls fails on purpose) and writes results.json and results.jsonl.
- hf: a dataset repo in the Hugging Face cache layout (`datasets--org--name/snapshots/...`),
  its Parquet written with pyarrow, read offline by `huggingface_hub`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "importers"

QUESTIONS = [
    {"id": "q1", "question": "What is the capital of France?", "answer": "Paris", "topic": "geo"},
    {"id": "q2", "question": "How many legs does a spider have?", "answer": "8", "topic": "bio"},
    {"id": "q3", "question": "What is 12 times 12?", "answer": "144", "topic": "math"},
]
TERSE = {"q1": "Paris.", "q2": "Eight.", "q3": "144."}
VERBOSE = {
    "q1": "The capital of France is Paris, on the Seine.",
    "q2": "A spider has eight legs, which sets it apart from insects (six).",
    "q3": "12 times 12 is 144: twelve twelves make a gross.",
}


def make_inspect(out: Path) -> None:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import json_dataset
    from inspect_ai.model import ChatMessageUser, ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, system_message

    out.mkdir(parents=True, exist_ok=True)
    data = out / "dataset.jsonl"
    data.write_text(
        "".join(
            json.dumps(
                {
                    "id": q["id"],
                    "input": q["question"],
                    "target": q["answer"],
                    "metadata": {"topic": q["topic"]},
                }
            )
            + "\n"
            for q in QUESTIONS
        )
    )

    def replies(table: dict[str, str], fail_on: str | None) -> Any:
        def reply(messages: list[Any], *_: Any) -> ModelOutput:
            question = next(m.text for m in reversed(messages) if isinstance(m, ChatMessageUser))
            qid = next(q["id"] for q in QUESTIONS if q["question"] in question)
            if qid == fail_on:
                raise RuntimeError("planted failure for the importer's skip count")
            output = ModelOutput.from_content(model="mock", content=table[qid])
            # Given, so mockllm counts no tokens itself (that fetches a tokenizer online).
            output.usage = ModelUsage(
                input_tokens=12, output_tokens=len(table[qid].split()), total_tokens=20
            )
            return output

        return reply

    task = Task(
        dataset=json_dataset(str(data)),
        solver=[system_message("Answer the question."), generate()],
        scorer=includes(),
        name="tiny_qa",
    )
    for name, table, fail_on, log_format in (
        ("terse", TERSE, "q3", "eval"),
        ("verbose", VERBOSE, None, "json"),
    ):
        model = get_model(f"mockllm/{name}", custom_outputs=replies(table, fail_on))
        eval(
            task,
            model=model,
            log_dir=str(out / "logs"),
            log_format=log_format,
            fail_on_error=False,
            display="none",
        )


class _Completions(BaseHTTPRequestHandler):
    """An OpenAI-style /v1/completions endpoint answering from VERBOSE."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        choices = []
        for index, prompt in enumerate(prompts):
            qid = next((q["id"] for q in QUESTIONS if q["question"] in prompt), None)
            text = " " + VERBOSE[qid] if qid else " I do not know."
            choices.append(
                {"index": index, "text": text, "finish_reason": "stop", "logprobs": None}
            )
        usage = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        reply = json.dumps(
            {
                "id": "c",
                "object": "text_completion",
                "model": body.get("model"),
                "choices": choices,
                "usage": usage,
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *_: Any) -> None:
        pass


def make_lm_eval(out: Path, tool: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        tasks = Path(scratch) / "tasks"
        tasks.mkdir()
        data = tasks / "tiny_qa.jsonl"
        data.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
        for name in ("tiny_qa.yaml", "tiny_mc.yaml"):
            text = (out / "tasks" / name).read_text().replace("DATA_FILE", str(data))
            (tasks / name).write_text(text)
        env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
        common = [
            "--include_path",
            str(tasks),
            "--output_path",
            str(out / "results"),
            "--log_samples",
        ]
        run = [
            tool,
            "run",
            "--model",
            "dummy",
            "--model_args",
            "pretrained=dummy-lol",
            "--tasks",
            "tiny_qa,tiny_mc",
        ]
        subprocess.run([*run, *common], check=True, env=env)
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Completions)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/v1/completions"
            args = (
                f"model=table-completer,base_url={url},tokenized_requests=False,"
                "tokenizer_backend=None"
            )
            run = [
                tool,
                "run",
                "--model",
                "local-completions",
                "--model_args",
                args,
                "--tasks",
                "tiny_qa",
            ]
            subprocess.run([*run, *common], check=True, env=env)
        finally:
            server.shutdown()


def make_promptfoo(out: Path, tool: str) -> None:
    env = {
        **os.environ,
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_DISABLE_SHARING": "1",
    }
    with tempfile.TemporaryDirectory() as home:
        env["HOME"] = home  # promptfoo keeps its database under ~/.promptfoo
        run = [
            tool,
            "eval",
            "-c",
            "promptfooconfig.yaml",
            "-o",
            "results.json",
            "-o",
            "results.jsonl",
        ]
        # Exit 100: some assertions failed, which the fixture wants (an output is still judged).
        done = subprocess.run(
            [*run, "--no-cache", "--no-progress-bar"], cwd=out, env=env, check=False
        )
        if done.returncode not in (0, 100):
            raise SystemExit(f"promptfoo eval failed (exit {done.returncode})")


def make_hf(out: Path) -> None:
    """A dataset `judge-fixtures/tiny-qa-answers` at one commit, in the hub cache layout that
    `huggingface_hub` reads offline: blobs named by content, snapshots linking to them, and
    refs/main naming the commit."""
    import hashlib

    import pyarrow as pa
    import pyarrow.parquet as pq

    repo = out / "hub" / "datasets--judge-fixtures--tiny-qa-answers"
    shutil.rmtree(repo, ignore_errors=True)
    commit = "0" * 39 + "1"
    rows = [
        {
            "qid": q["id"],
            "question": q["question"],
            "answer": q["answer"],
            "model": model,
            "response": table[q["id"]],
            "topic": q["topic"],
        }
        for model, table in (("terse-model", TERSE), ("verbose-model", VERBOSE))
        for q in QUESTIONS
    ]
    rows.append(
        {
            "qid": "q4",
            "question": "Name a prime number.",
            "answer": None,
            "model": "terse-model",
            "response": None,
            "topic": "math",
        }
    )
    splits = {"train": rows, "test": rows[:2]}
    for split, table in splits.items():
        with tempfile.TemporaryDirectory() as scratch:
            local = Path(scratch) / "part.parquet"
            pq.write_table(pa.Table.from_pylist(table), local)
            blob = hashlib.sha256(local.read_bytes()).hexdigest()
            (repo / "blobs").mkdir(parents=True, exist_ok=True)
            shutil.copy(local, repo / "blobs" / blob)
        link = repo / "snapshots" / commit / "data" / f"{split}-00000-of-00001.parquet"
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(Path("../../..") / "blobs" / blob)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(commit)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["inspect", "lm-eval", "promptfoo", "hf"])
    parser.add_argument("--out", type=Path, help="default: tests/fixtures/importers/<kind>")
    parser.add_argument("--tool", help="lm-eval: the lm_eval executable; promptfoo: promptfoo's")
    args = parser.parse_args()
    out = args.out or FIXTURES / args.kind.replace("-", "_")
    if args.kind == "inspect":
        make_inspect(out)
    elif args.kind == "lm-eval":
        make_lm_eval(out, args.tool or "lm_eval")
    elif args.kind == "promptfoo":
        make_promptfoo(out, args.tool or "promptfoo")
    else:
        make_hf(out)
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
