"""The `recorded` provider replays published verdicts through the same parse/store path."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from judge import JudgeSpec, load_rubric, parse_reply
from judge.errors import ConfigError
from judge.providers.base import ProviderCall
from judge.providers.factory import make_provider
from judge.providers.recorded import NoRecording, RecordedProvider
from judge.types import BlindingKey, ChatMessage, JudgeRequest

KEY = BlindingKey(
    blinding_secret="00" * 32,
    systems={},
    pairs={"p1": ("gpt-4", "claude-v1"), "p2": ("llama-13b", "alpaca-13b")},
)


def request(pair: str, order: str, item: str = "81-t1") -> JudgeRequest:
    return JudgeRequest(
        request_id=f"{pair}{order}",
        judge="recorded/gpt-4",
        rubric_id="pairwise_general",
        rubric_version=1,
        rubric_hash="sha256:0",
        kind="pairwise",
        item_id=item,
        pair_id=pair,
        order=order,  # type: ignore[arg-type]
        messages=(ChatMessage(role="user", content="x"),),
        cache_key="sha256:" + pair + order,
    )


def provider(tmp_path: Path, rows: list[dict]) -> RecordedProvider:
    path = tmp_path / "rec.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    made = make_provider(JudgeSpec(model="recorded/gpt-4", recorded=path))
    assert isinstance(made, RecordedProvider)
    made.attach(lambda: KEY)
    return made


def labels(p: RecordedProvider, pair: str) -> tuple[str, str]:
    rubric = load_rubric("pairwise_general")
    out = []
    for order in ("AB", "BA"):
        reply = asyncio.run(p.complete(ProviderCall(request=request(pair, order), messages=())))
        verdict = parse_reply(reply.text, rubric)
        out.append(verdict.label)  # type: ignore[union-attr]
    return out[0], out[1]


def test_recorded_winner_maps_to_presented_slots(tmp_path: Path) -> None:
    # The recording names claude-v1 as system_a; in the run, p1's slot A is gpt-4.
    p = provider(
        tmp_path,
        [{"item_id": "81-t1", "system_a": "claude-v1", "system_b": "gpt-4", "winner": "system_b"}],
    )
    # gpt-4 won: shown first in AB -> "A"; shown second in BA -> "B".
    assert labels(p, "p1") == ("A", "B")


def test_tie_and_inconsistent(tmp_path: Path) -> None:
    rows = [
        {"item_id": "81-t1", "system_a": "gpt-4", "system_b": "claude-v1", "winner": "tie"},
        {
            "item_id": "81-t1",
            "system_a": "alpaca-13b",
            "system_b": "llama-13b",
            "winner": "inconsistent",
        },
    ]
    p = provider(tmp_path, rows)
    assert labels(p, "p1") == ("tie", "tie")
    # Inconsistent: the first-shown wins in both orders, so the orders disagree (as recorded).
    assert labels(p, "p2") == ("A", "A")
    assert p.assumed_direction == 2


def test_missing_recording_is_final_error(tmp_path: Path) -> None:
    p = provider(tmp_path, [])
    with pytest.raises(NoRecording, match="no recorded verdict for item '81-t1'"):
        asyncio.run(p.complete(ProviderCall(request=request("p1", "AB"), messages=())))
    assert p.classify_error(NoRecording("x")) is None


def test_bad_recording_names_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_text('{"item_id": "1", "system_a": "a", "system_b": "b", "winner": "model_a"}\n')
    with pytest.raises(ConfigError, match=r"rec.jsonl, line 1, field 'winner': expected one of"):
        RecordedProvider(JudgeSpec(model="recorded/x", recorded=path))
    with pytest.raises(ConfigError, match=r"set `recorded: <file\.jsonl>`"):
        RecordedProvider(JudgeSpec(model="recorded/x"))


def test_demo_replays_gpt4_through_the_runner(demo: Path) -> None:
    """The recorded GPT-4 verdicts go through run -> parse -> store -> aggregate (the session's
    `judge run configs/demo.yaml`): every request answered, and the order-inconsistent share
    equals the published 380 of 2,400 verdicts on the pairs whose both answers are bundled."""
    from tests.helpers import REPO

    counts = json.loads((demo / "summary.json").read_text(encoding="utf-8"))["counts"]
    assert counts["requests"] == 4508 and counts["pending"] == 0
    assert counts["errors"] == 0 and counts["parse_failures"] == 0
    rows = [json.loads(line) for line in (demo / "judgments.jsonl").open()]
    assert len(rows) == 2254
    recorded = [
        json.loads(line)
        for line in (REPO / "data" / "mt_bench" / "gpt4_pair_recorded.jsonl").open()
    ]
    bundled = {(r["item_id"], frozenset((r["system_a"], r["system_b"]))) for r in rows}
    expected = sum(
        r["winner"] == "inconsistent"
        for r in recorded
        if (r["item_id"], frozenset((r["system_a"], r["system_b"]))) in bundled
    )
    assert sum(r["consistent"] is False for r in rows) == expected


def test_a_pair_stored_after_the_key_was_read_is_looked_up_again(tmp_path: Path) -> None:
    """Judging while a prepare runs: the key read when the provider started lacks the pairs of
    later chunks, so a request naming one reads the key again (once per miss, not per request)."""
    rows = [
        {"item_id": "81-t1", "system_a": "claude-v1", "system_b": "gpt-4", "winner": "system_b"}
    ]
    path = tmp_path / "rec.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    made = make_provider(JudgeSpec(model="recorded/gpt-4", recorded=path))
    assert isinstance(made, RecordedProvider)
    early = BlindingKey(blinding_secret=KEY.blinding_secret, systems={}, pairs={})
    reads: list[BlindingKey] = []

    def read() -> BlindingKey:
        reads.append(early if not reads else KEY)
        return reads[-1]

    made.attach(read)
    assert labels(made, "p1") == ("A", "B")
    assert len(reads) == 2  # at attach, and at the first request naming p1
    with pytest.raises(NoRecording, match="names no pair 'p9'"):
        asyncio.run(made.complete(ProviderCall(request=request("p9", "AB"), messages=())))
