"""The simulator's batch APIs (OpenAI Files + Batch, Anthropic Message Batches) and its prompt
cache, driven by the real openai and anthropic SDK clients over loopback HTTP.

Clients use `max_retries=0`, as in tests/test_simulator.py, so every refusal surfaces as the
exception the SDK raises. Delays are a fraction of a second: a batch's timeline is a function
of the time since its creation, so nothing waits on a background task.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import anthropic
import openai
import pytest
from anthropic.types.messages import MessageBatch
from openai.types import Batch
from openai.types.chat import ChatCompletion

from judge.simulator import SimulatorConfig, SimulatorHandle, simulator_fixture
from judge.simulator.judging import MALFORMED_TEXT
from tests.test_simulator import (
    _ANTHROPIC_MODEL,
    _OPENAI_MODEL,
    _SYSTEM,
    _anthropic,
    _ask_anthropic,
    _ask_openai,
    _openai,
    _pair,
)

simulator = simulator_fixture(SimulatorConfig(seed=1))

_ENDPOINT = "/v1/chat/completions"
_OPENAI_ENDED = ("completed", "failed", "expired", "cancelled")
# Well past the 1,024-token minimum (characters / 4): a prefix the caches serve.
_LONG_SYSTEM = _SYSTEM + " Weigh accuracy, completeness and clarity." * 120


def _prompts(n: int, tag: str = "") -> list[str]:
    return [
        _pair(f"{tag}Use reversed({i}). ⟦quality={0.2 + (i % 4) / 5:.2f}⟧", f"{tag}Loop {i}.")
        for i in range(n)
    ]


def _openai_body(user: str, system: str = _SYSTEM, **params: Any) -> dict[str, Any]:
    # What tests/test_simulator.py's _ask_openai sends.
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return {"model": params.pop("model", _OPENAI_MODEL), "messages": messages, **params}


def _anthropic_params(user: str, system: Any = _SYSTEM, **params: Any) -> dict[str, Any]:
    # What tests/test_simulator.py's _ask_anthropic sends.
    return {
        "model": _ANTHROPIC_MODEL,
        "max_tokens": 512,
        "system": system,
        "messages": [{"role": "user", "content": user}],
        **params,
    }


def _line(custom_id: str, body: dict[str, Any], **overrides: Any) -> str:
    line = {"custom_id": custom_id, "method": "POST", "url": _ENDPOINT, "body": body}
    return json.dumps({**line, **overrides})


async def _submit(client: openai.AsyncOpenAI, lines: list[str], **metadata: str) -> Batch:
    data = ("\n".join(lines) + "\n").encode()
    uploaded = await client.files.create(
        file=("requests.jsonl", data, "application/jsonl"), purpose="batch"
    )
    return await client.batches.create(
        input_file_id=uploaded.id,
        endpoint=_ENDPOINT,
        completion_window="24h",
        metadata=metadata or None,
    )


async def _ended_openai(client: openai.AsyncOpenAI, batch_id: str) -> tuple[Batch, list[Batch]]:
    """The batch once ended, and what each poll saw on the way."""
    seen = []
    for _ in range(400):
        batch = await client.batches.retrieve(batch_id)
        seen.append(batch)
        if batch.status in _OPENAI_ENDED:
            return batch, seen
        await asyncio.sleep(0.01)
    raise AssertionError(f"batch {batch_id} did not end: {seen[-1].status}")


async def _ended_anthropic(
    client: anthropic.AsyncAnthropic, batch_id: str
) -> tuple[MessageBatch, list[MessageBatch]]:
    seen = []
    for _ in range(400):
        batch = await client.messages.batches.retrieve(batch_id)
        seen.append(batch)
        if batch.processing_status == "ended":
            return batch, seen
        await asyncio.sleep(0.01)
    raise AssertionError(f"batch {batch_id} did not end: {seen[-1].processing_status}")


async def _file_lines(client: openai.AsyncOpenAI, file_id: str | None) -> dict[str, Any]:
    """A results file's lines by custom id ({} for no file)."""
    if file_id is None:
        return {}
    content = await client.files.content(file_id)
    lines = [json.loads(line) for line in content.text.splitlines()]
    return {line["custom_id"]: line for line in lines}


async def _results(client: anthropic.AsyncAnthropic, batch_id: str) -> dict[str, Any]:
    return {r.custom_id: r.result async for r in await client.messages.batches.results(batch_id)}


def _batch_stats(sim: SimulatorHandle, *, hashes: bool = False) -> dict[str, Any]:
    return sim.stats(hashes=hashes)["batches"]


# --- the same verdicts as synchronous requests ------------------------------------------------


async def test_openai_batch_answers_as_the_sync_route_does(simulator: SimulatorHandle) -> None:
    # Malformed replies are drawn per content as for a first synchronous attempt: the parse
    # outcome matches too (seed 1 makes 5 of these 12 malformed).
    simulator.update(batch_delay_s=0.3, rate_malformed=0.3, noise=0.3)
    prompts = _prompts(12)
    schema = {"type": "object", "properties": {"winner": {"type": "string"}}}
    structured = {"type": "json_schema", "json_schema": {"name": "v", "schema": schema}}
    async with _openai(simulator) as client:
        sync = [await _ask_openai(client, p) for p in prompts]
        sync.append(await _ask_openai(client, prompts[0], response_format=structured))
        lines = [_line(f"item-{i}", _openai_body(p)) for i, p in enumerate(prompts)]
        lines.append(_line("structured", _openai_body(prompts[0], response_format=structured)))
        created = await _submit(client, lines, run="r1")
        assert created.status == "validating" and created.metadata == {"run": "r1"}
        batch, seen = await _ended_openai(client, created.id)
        output = await _file_lines(client, batch.output_file_id)
        files = [f async for f in client.files.list(purpose="batch_output")]

    assert batch.status == "completed" and batch.error_file_id is None
    assert batch.request_counts is not None and batch.request_counts.completed == 13
    assert batch.model == _OPENAI_MODEL and batch.completed_at and batch.in_progress_at
    assert batch.usage is not None and batch.usage.input_tokens > 0
    statuses = [b.status for b in seen]
    assert "in_progress" in statuses
    # Counts progress while the batch runs.
    progress = [b.request_counts.completed for b in seen if b.request_counts]
    assert progress == sorted(progress) and any(0 < done < 13 for done in progress)
    assert [f.id for f in files] == [batch.output_file_id]

    custom_ids = [f"item-{i}" for i in range(12)] + ["structured"]
    texts = []
    for custom_id in custom_ids:
        line = output[custom_id]
        assert line["error"] is None and line["id"].startswith("batch_req_")
        assert line["response"]["status_code"] == 200
        completion = ChatCompletion.model_validate(line["response"]["body"])
        texts.append(completion.choices[0].message.content)
    assert texts == sync
    assert MALFORMED_TEXT in texts
    # Submitting after a synchronous request is not a double submission (only an earlier
    # batch submission makes one).
    assert _batch_stats(simulator)["double_submissions"] == 0


async def test_anthropic_batch_answers_as_the_sync_route_does(simulator: SimulatorHandle) -> None:
    simulator.update(batch_delay_s=0.2, noise=0.3)
    prompts = _prompts(8)
    schema = {"type": "object", "properties": {"verdict": {"type": "string"}}}
    tool = {"name": "record_verdict", "input_schema": schema}
    choice = {"type": "tool", "name": "record_verdict"}
    async with _anthropic(simulator) as client:
        sync = [await _ask_anthropic(client, p) for p in prompts]
        sync_tool = await client.messages.create(
            **_anthropic_params(prompts[0], tools=[tool], tool_choice=choice)
        )
        requests: list[Any] = [
            {"custom_id": f"item-{i}", "params": _anthropic_params(p)}
            for i, p in enumerate(prompts)
        ]
        requests.append(
            {
                "custom_id": "tool",
                "params": _anthropic_params(prompts[0], tools=[tool], tool_choice=choice),
            }
        )
        created = await client.messages.batches.create(requests=requests)
        batch, seen = await _ended_anthropic(client, created.id)
        results = await _results(client, batch.id)

    assert created.processing_status == "in_progress" and created.results_url is None
    # Requests leave `processing` only once the whole batch has ended.
    for look in [created, *seen[:-1]]:
        assert look.request_counts.processing == 9 and look.request_counts.succeeded == 0
    assert batch.request_counts.succeeded == 9 and batch.request_counts.processing == 0
    assert batch.ended_at is not None and batch.ended_at >= batch.created_at
    assert batch.results_url == f"{simulator.base_url}/v1/messages/batches/{batch.id}/results"

    texts = []
    for i in range(8):
        result = results[f"item-{i}"]
        assert result.type == "succeeded"
        texts.append("".join(b.text for b in result.message.content if b.type == "text"))
        assert result.message.usage.service_tier == "batch"
    assert texts == sync
    tool_result = results["tool"]
    assert tool_result.type == "succeeded"
    (block,) = tool_result.message.content
    assert block.type == "tool_use" and block.name == "record_verdict"
    assert block.input == sync_tool.content[0].input  # type: ignore[union-attr]


# --- refusals --------------------------------------------------------------------------------


async def test_an_invalid_input_file_fails_the_openai_batch(simulator: SimulatorHandle) -> None:
    good = _openai_body(_prompts(1)[0])
    lines = [
        _line("a", good),
        _line("a", good),  # 2: duplicate custom_id
        _line("b", good, url="/v1/embeddings"),  # 3
        "{not json",  # 4
        _line("c", {"model": _OPENAI_MODEL}),  # 5: no messages
        _line("d", {**good, "model": "gpt-4o"}),  # 6: a second model
        _line("e", good, method="GET"),  # 7
    ]
    async with _openai(simulator) as client:
        created = await _submit(client, lines)
        assert created.status == "validating"
        batch = await client.batches.retrieve(created.id)
        text = await client.files.create(file=("notes.txt", b"x"), purpose="user_data")
        with pytest.raises(openai.BadRequestError, match="purpose"):
            await client.batches.create(
                input_file_id=text.id, endpoint=_ENDPOINT, completion_window="24h"
            )
        with pytest.raises(openai.NotFoundError):
            await client.batches.create(
                input_file_id="file-nope", endpoint=_ENDPOINT, completion_window="24h"
            )
        with pytest.raises(openai.BadRequestError, match="jsonl"):
            await client.files.create(file=("requests.txt", b"{}"), purpose="batch")
        with pytest.raises(openai.ConflictError, match="failed"):
            await client.batches.cancel(batch.id)

    assert batch.status == "failed" and batch.failed_at is not None
    assert batch.output_file_id is None and batch.error_file_id is None
    assert batch.errors is not None and batch.errors.data is not None
    codes = [(e.code, e.line) for e in batch.errors.data]
    assert codes == [
        ("duplicate_custom_id", 2),
        ("url_mismatch", 3),
        ("invalid_json_line", 4),
        ("invalid_request", 5),
        ("model_mismatch", 6),
        ("invalid_method", 7),
    ]
    assert batch.errors.data[3].param == "body.messages"
    stats = _batch_stats(simulator)
    assert stats["by_state"] == {"/v1/batches": {"failed": 1}} and stats["requests"] == 0


async def test_an_invalid_request_refuses_the_whole_anthropic_create(
    simulator: SimulatorHandle,
) -> None:
    good = {"custom_id": "ok", "params": _anthropic_params(_prompts(1)[0])}
    async with _anthropic(simulator) as client:
        no_max_tokens = {"custom_id": "x", "params": {**good["params"], "max_tokens": None}}
        with pytest.raises(anthropic.BadRequestError, match=r"requests\.1\.params: max_tokens"):
            await client.messages.batches.create(requests=[good, no_max_tokens])  # type: ignore[list-item]
        with pytest.raises(anthropic.BadRequestError, match="custom_id"):
            await client.messages.batches.create(requests=[{**good, "custom_id": "no spaces"}])  # type: ignore[list-item]
        with pytest.raises(anthropic.BadRequestError, match="unique"):
            await client.messages.batches.create(requests=[good, good])  # type: ignore[list-item]
        with pytest.raises(anthropic.BadRequestError, match="at least 1"):
            await client.messages.batches.create(requests=[])
        with pytest.raises(anthropic.NotFoundError):
            await client.messages.batches.retrieve("msgbatch_nope")
    assert _batch_stats(simulator)["created"] == 0 and simulator.stats()["requests"] == 0


# --- partial failures, expiry, cancel ----------------------------------------------------------


async def test_partial_failures_are_shaped_as_each_api_shapes_them(
    simulator: SimulatorHandle,
) -> None:
    simulator.update(batch_rate_failed=0.3, batch_rate_invalid=0.2)
    prompts = _prompts(30, "pf ")
    requests: Any = [
        {"custom_id": f"i{i}", "params": _anthropic_params(p)} for i, p in enumerate(prompts)
    ]
    async with _openai(simulator) as oc, _anthropic(simulator) as ac:
        lines = [_line(f"i{i}", _openai_body(p)) for i, p in enumerate(prompts)]
        batch, _ = await _ended_openai(oc, (await _submit(oc, lines)).id)
        output = await _file_lines(oc, batch.output_file_id)
        errors = await _file_lines(oc, batch.error_file_id)
        created = await ac.messages.batches.create(requests=requests)
        message_batch, _ = await _ended_anthropic(ac, created.id)
        results = await _results(ac, message_batch.id)
        # Sent again, server errors are drawn afresh (invalid requests would stay invalid).
        statuses = {c: line["response"]["status_code"] for c, line in errors.items()}
        retry = [
            _line(c, _openai_body(prompts[int(c[1:])])) for c, s in statuses.items() if s == 500
        ]
        again, _ = await _ended_openai(oc, (await _submit(oc, retry)).id)

    assert set(statuses.values()) == {400, 500} and set(output).isdisjoint(statuses)
    assert len(output) + len(errors) == 30
    assert batch.request_counts is not None
    counts = (batch.request_counts.completed, batch.request_counts.failed)
    assert counts == (len(output), len(errors))
    for line in errors.values():
        assert line["error"] is None
        error = line["response"]["body"]["error"]
        server = line["response"]["status_code"] == 500
        assert error["type"] == ("server_error" if server else "invalid_request_error")
    assert again.request_counts is not None and again.request_counts.completed > 0

    kinds = [r.error.error.type if r.type == "errored" else r.type for r in results.values()]
    assert set(kinds) == {"succeeded", "api_error", "invalid_request_error"}
    tally = message_batch.request_counts
    assert tally.succeeded == kinds.count("succeeded") and tally.errored == 30 - tally.succeeded


async def test_an_expired_batch_keeps_what_was_done(simulator: SimulatorHandle) -> None:
    simulator.update(batch_rate_expired=1.0, batch_delay_s=0.05)
    prompts = _prompts(20, "ex ")
    async with _openai(simulator) as oc, _anthropic(simulator) as ac:
        lines = [_line(f"i{i}", _openai_body(p)) for i, p in enumerate(prompts)]
        batch, _ = await _ended_openai(oc, (await _submit(oc, lines)).id)
        output = await _file_lines(oc, batch.output_file_id)
        errors = await _file_lines(oc, batch.error_file_id)
        requests: Any = [
            {"custom_id": f"i{i}", "params": _anthropic_params(p)} for i, p in enumerate(prompts)
        ]
        message_batch, _ = await _ended_anthropic(
            ac, (await ac.messages.batches.create(requests=requests)).id
        )
        results = await _results(ac, message_batch.id)

    assert batch.status == "expired" and batch.expired_at is not None
    # A seeded share of the requests was done before the batch expired.
    assert len(output) + len(errors) == 20 and output and errors
    for line in errors.values():
        assert line["response"] is None and line["error"]["code"] == "batch_expired"
    counts = message_batch.request_counts
    assert counts.succeeded and counts.expired and counts.succeeded + counts.expired == 20
    assert [r.type for r in results.values()].count("expired") == counts.expired
    assert _batch_stats(simulator)["by_state"] == {
        "/v1/batches": {"expired": 1},
        "/v1/messages/batches": {"ended": 1},
    }


async def test_cancel_ends_a_batch_with_its_requests_canceled(simulator: SimulatorHandle) -> None:
    simulator.update(batch_delay_s=30.0)  # still validating when the cancel arrives
    prompts = _prompts(4, "cx ")
    async with _openai(simulator) as oc, _anthropic(simulator) as ac:
        created = await _submit(
            oc, [_line(f"i{i}", _openai_body(p)) for i, p in enumerate(prompts)]
        )
        cancelling = await oc.batches.cancel(created.id)
        batch, _ = await _ended_openai(oc, created.id)
        errors = await _file_lines(oc, batch.error_file_id)
        requests: Any = [
            {"custom_id": f"i{i}", "params": _anthropic_params(p)} for i, p in enumerate(prompts)
        ]
        message_batch = await ac.messages.batches.create(requests=requests)
        canceling = await ac.messages.batches.cancel(message_batch.id)
        ended, _ = await _ended_anthropic(ac, message_batch.id)
        results = await _results(ac, message_batch.id)
        with pytest.raises(openai.ConflictError, match="cancelled"):
            await oc.batches.cancel(created.id)
        with pytest.raises(anthropic.BadRequestError, match="ended"):
            await ac.messages.batches.cancel(message_batch.id)

    assert cancelling.status == "cancelling" and cancelling.cancelling_at is not None
    assert batch.status == "cancelled" and batch.cancelled_at is not None
    assert batch.output_file_id is None
    assert {line["error"]["code"] for line in errors.values()} == {"batch_cancelled"}
    assert canceling.processing_status == "canceling" and canceling.cancel_initiated_at
    assert ended.request_counts.canceled == 4
    assert {r.type for r in results.values()} == {"canceled"}


async def test_a_batch_canceled_midway_keeps_the_requests_done(
    simulator: SimulatorHandle,
) -> None:
    # Requests are done from 5 % to 95 % of the delay: a cancel at 0.5 s of 2 s finds about a
    # fifth done (anywhere between 0.1 s and 1.9 s finds some, not all).
    simulator.update(batch_delay_s=2.0)
    prompts = _prompts(20, "mid ")
    async with _openai(simulator) as client:
        lines = [_line(f"i{i}", _openai_body(p)) for i, p in enumerate(prompts)]
        created = await _submit(client, lines)
        await asyncio.sleep(0.5)
        cancelling = await client.batches.cancel(created.id)
        batch, _ = await _ended_openai(client, created.id)
        output = await _file_lines(client, batch.output_file_id)
        errors = await _file_lines(client, batch.error_file_id)
    assert cancelling.request_counts is not None
    done = cancelling.request_counts.completed
    assert 0 < done < 20 and len(output) == done and len(errors) == 20 - done
    assert set(output) == {f"i{i}" for i in range(done)}  # done in input order
    assert batch.request_counts is not None and batch.request_counts.completed == done


# --- listing ---------------------------------------------------------------------------------


async def test_lists_are_newest_first_and_paginate(simulator: SimulatorHandle) -> None:
    prompt = _prompts(1)[0]
    async with _openai(simulator) as oc, _anthropic(simulator) as ac:
        openai_ids = [
            (await _submit(oc, [_line("one", _openai_body(prompt))])).id for _ in range(5)
        ]
        anthropic_ids = []
        for _ in range(5):
            created = await ac.messages.batches.create(
                requests=[{"custom_id": "one", "params": _anthropic_params(prompt)}]  # type: ignore[list-item]
            )
            anthropic_ids.append(created.id)
        first = await oc.batches.list(limit=2)
        every = [b.id async for b in oc.batches.list(limit=2)]
        listed = [b.id async for b in ac.messages.batches.list(limit=2)]
        page = await ac.messages.batches.list(limit=2)
        before = await ac.messages.batches.list(limit=2, before_id=anthropic_ids[1])
        inputs = [f.id async for f in oc.files.list(purpose="batch")]
        oldest = await oc.files.retrieve(inputs[-1])
        deleted = await oc.files.delete(inputs[-1])
        with pytest.raises(openai.NotFoundError):
            await oc.files.retrieve(inputs[-1])
        remaining = [f.id async for f in oc.files.list(purpose="batch", limit=2)]

    assert [b.id for b in first.data] == openai_ids[::-1][:2] and first.has_more
    assert every == openai_ids[::-1]
    assert listed == anthropic_ids[::-1]
    assert (page.first_id, page.last_id) == (anthropic_ids[4], anthropic_ids[3])
    # Before the second oldest: the newer ones right before it, newest first.
    assert [b.id for b in before.data] == [anthropic_ids[3], anthropic_ids[2]]
    assert len(inputs) == 5 and oldest.filename == "requests.jsonl" and deleted.deleted
    assert remaining == inputs[:-1]  # newest first, two per page


# --- double submissions ----------------------------------------------------------------------


async def test_double_submissions_count_what_was_pending_or_answered(
    simulator: SimulatorHandle,
) -> None:
    simulator.update(batch_delay_s=0.3)
    x, y = _prompts(2, "dd ")
    async with _openai(simulator) as client:
        first = await _submit(client, [_line("x", _openai_body(x)), _line("y", _openai_body(y))])
        await _ask_openai(client, x)  # 1: x is pending in `first`
        second = await _submit(client, [_line("y", _openai_body(y))])  # 2: y too
        await _ended_openai(client, first.id)
        await _ended_openai(client, second.id)
        await _ask_openai(client, x)  # 3: x was answered
        assert _batch_stats(simulator)["double_submissions"] == 3

        # After a failed, expired or canceled request, sending it again is what a client
        # should do: none of these count.
        simulator.reset()
        simulator.update(batch_delay_s=0.0, batch_rate_failed=1.0)
        failed = await _submit(client, [_line("x", _openai_body(x))])
        await _ended_openai(client, failed.id)
        simulator.update(batch_rate_failed=0.0, batch_rate_expired=1.0)
        # An expired batch of two does at most the first: y expires.
        doomed = await _submit(client, [_line("x", _openai_body(x)), _line("y", _openai_body(y))])
        expired, _ = await _ended_openai(client, doomed.id)
        simulator.update(batch_rate_expired=0.0, batch_delay_s=30.0)
        pending = await _submit(client, [_line("y", _openai_body(y))])
        await client.batches.cancel(pending.id)
        await _ended_openai(client, pending.id)
        await _ask_openai(client, y)

    assert expired.status == "expired"
    stats = _batch_stats(simulator, hashes=True)
    assert stats["requests"] == 4 and stats["double_submissions"] == 0
    assert stats["double_submissions_by_hash"] == {}


async def test_double_submissions_are_listed_by_content_hash(simulator: SimulatorHandle) -> None:
    simulator.update(batch_delay_s=0.0)
    (x,) = _prompts(1, "dh ")
    async with _openai(simulator) as client:
        first = await _submit(client, [_line("x", _openai_body(x))])
        await _ended_openai(client, first.id)
        for _ in range(2):
            await _ask_openai(client, x)
    stats = simulator.stats(hashes=True)
    (key,) = stats["attempts_by_hash"]  # the synchronous requests' content key
    assert stats["batches"]["double_submissions_by_hash"] == {key: 2}


# --- prompt cache ----------------------------------------------------------------------------


async def test_openai_reports_cached_prefixes_in_whole_blocks(simulator: SimulatorHandle) -> None:
    first, second, third = _prompts(3, "pc ")

    async def cached(client: openai.AsyncOpenAI, user: str, system: str = _LONG_SYSTEM) -> Any:
        reply = await client.chat.completions.create(**_openai_body(user, system))
        assert reply.usage is not None and reply.usage.prompt_tokens_details is not None
        return reply.usage.prompt_tokens_details.cached_tokens, reply.usage.prompt_tokens

    async with _openai(simulator) as client:
        cold, total = await cached(client, first)
        warm, warm_total = await cached(client, second)
        short = [(await cached(client, p, _SYSTEM))[0] for p in (first, second)]
        simulator.update(prompt_cache=False)
        off = (await cached(client, third))[0]
        simulator.update(prompt_cache=True)
        lines = [_line(f"i{i}", _openai_body(p, _LONG_SYSTEM)) for i, p in enumerate(_prompts(2))]
        batch, _ = await _ended_openai(client, (await _submit(client, lines)).id)
        output = await _file_lines(client, batch.output_file_id)

    assert cold == 0 and total > 1024
    # The shared prefix (system message), in whole 128-token blocks of at least 1,024.
    assert warm >= 1024 and warm % 128 == 0 and warm < warm_total
    assert short == [0, 0] and off == 0
    usages = [output[f"i{i}"]["response"]["body"]["usage"] for i in range(2)]
    in_batch = [u["prompt_tokens_details"]["cached_tokens"] for u in usages]
    assert all(c >= 1024 and c % 128 == 0 for c in in_batch)
    assert batch.usage is not None
    assert batch.usage.input_tokens_details.cached_tokens == sum(in_batch)
    assert simulator.stats()["prompt_cache"]["hits"] == 3


async def test_anthropic_caches_only_at_cache_control_breakpoints(
    simulator: SimulatorHandle,
) -> None:
    blocks = [{"type": "text", "text": _LONG_SYSTEM, "cache_control": {"type": "ephemeral"}}]
    first, second = _prompts(2, "ac ")

    async def usage(client: anthropic.AsyncAnthropic, user: str, system: Any) -> Any:
        return (await client.messages.create(**_anthropic_params(user, system))).usage

    async with _anthropic(simulator) as client:
        write = await usage(client, first, blocks)
        read = await usage(client, second, blocks)
        plain = [await usage(client, p, _LONG_SYSTEM) for p in (first, second)]
        short = [await usage(client, p, [{**blocks[0], "text": _SYSTEM}]) for p in (first, second)]
        many = [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}] * 5
        with pytest.raises(anthropic.BadRequestError, match="maximum of 4"):
            await usage(client, first, many)
        simulator.update(cache_ttl_s=0.05)
        await asyncio.sleep(0.1)
        expired = await usage(client, second, blocks)

    assert write.cache_read_input_tokens == 0 and write.cache_creation_input_tokens >= 1024
    assert read.cache_read_input_tokens == write.cache_creation_input_tokens
    assert read.cache_creation_input_tokens == 0
    # input_tokens leaves the cached tokens out: the three add up to the whole prompt.
    total = read.input_tokens + read.cache_read_input_tokens + read.cache_creation_input_tokens
    assert read.input_tokens < 100 < total
    for other in [*plain, *short]:
        assert (other.cache_read_input_tokens, other.cache_creation_input_tokens) == (0, 0)
    assert plain[1].input_tokens == total  # the same prompt, system given as a string
    assert expired.cache_read_input_tokens == 0 and expired.cache_creation_input_tokens > 0
    stats = simulator.stats()
    assert stats["prompt_cache"]["read_tokens"] == read.cache_read_input_tokens
    assert stats["cache_read_tokens"] == read.cache_read_input_tokens


# --- control-route faults --------------------------------------------------------------------


async def test_control_routes_have_faults_of_their_own(simulator: SimulatorHandle) -> None:
    simulator.update(batch_api_rate_429=1.0, retry_after_s=3.0)
    prompt = _prompts(1)[0]
    async with _openai(simulator) as oc, _anthropic(simulator) as ac:
        with pytest.raises(openai.RateLimitError) as limited:
            await oc.batches.list()
        with pytest.raises(anthropic.RateLimitError):
            await ac.messages.batches.list()
        assert json.loads(await _ask_openai(oc, prompt))["verdict"]  # the judge route is spared
        simulator.update(batch_api_rate_429=0.0, batch_api_rate_500=1.0)
        with pytest.raises(anthropic.InternalServerError):
            await ac.messages.batches.create(
                requests=[{"custom_id": "one", "params": _anthropic_params(prompt)}]  # type: ignore[list-item]
            )
        # The judge routes' own faults leave the control routes alone.
        simulator.update(batch_api_rate_500=0.0, rate_500=1.0)
        assert (await oc.batches.list()).data == []
    assert limited.value.response.headers["retry-after"] == "3"
    stats = _batch_stats(simulator)
    assert stats["created"] == 0
    assert stats["api_calls"] == {"429": 2, "500": 1, "ok": 1}
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"{simulator.openai_base_url}/batches") as response,
    ):
        assert response.status == 401  # no API key
