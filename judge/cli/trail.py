"""One item's audit trail (`judge show RUN_DIR ITEM_ID`): the question, every system's
response as the judge saw it, each judgment at its line of `judgments.jsonl`, and for each of
its requests the reply and verdict the store holds, whole. The report's examples name the
same lines and request ids; this reads them back without knowing SQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from judge.errors import DataError
from judge.store.run_store import StoredResult
from judge.store.rundir import RunDir
from judge.types import PANEL
from judge.untrusted import inert


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ShownResponse(_Model):
    system: str
    blind_id: str
    """Its row in store.sqlite `blinded_responses`."""
    output: str
    """As the judge saw it: identity markers scrubbed."""
    earlier_turns: int


class RequestTrail(_Model):
    request_id: str
    """Its row in store.sqlite `judge_requests`, and its reply's in `judge_responses` and
    `verdicts`."""
    judge: str
    order: Literal["AB", "BA"] | None
    """None for an absolute rubric's request (one response, no order)."""
    first: str
    """The system shown first ("A"), or the one graded."""
    status: Literal["pending", "error", "verdict", "parse_failure"]
    reply: str | None
    """The reply as received (None: pending, or an error)."""
    label: str | None
    """The verdict in presented-slot terms (A, B, tie)."""
    score: float | None
    """An absolute rubric's score."""
    reasoning: str | None
    failure: str | None
    """The parse failure's reason, or the request's error."""
    provider_request_id: str | None
    cached: bool | None


class JudgmentTrail(_Model):
    file: str
    """`judgments.jsonl`, or `canary_judgments.jsonl` for a canary's."""
    line: int
    """Its line in that file (from 1)."""
    row: dict[str, Any]
    requests: list[RequestTrail]
    """The judgment's requests (none for a panel row: its members' rows have them)."""


class ItemTrail(_Model):
    item_id: str
    question: str
    """The item's prompt (a conversation as role: text lines)."""
    responses: list[ShownResponse]
    judgments: list[JudgmentTrail]


def item_trail(rundir: RunDir, item_id: str, systems: list[str] | None = None) -> ItemTrail:
    """The trail of `item_id` (its judgments of pairs holding all of `systems`, if given).
    A DataError names the fix when the run has no such item or no judgments."""
    from judge.store import lookup as store_lookup

    if not rundir.has_store():  # a read: never create a run dir
        raise DataError("not a run directory (no store.sqlite)", path=str(rundir.path))
    if not rundir.has_judgments():
        raise DataError(
            "no judgments.jsonl yet: finish the run (`judge run`) or write what the store "
            "holds (`judge report`)",
            path=str(rundir.path),
        )
    found = [
        (path.name, line, row)
        for path in (rundir.judgments_jsonl, rundir.canary_judgments_jsonl)
        if path.is_file()
        for line, row in _judgment_rows(path, item_id, set(systems or ()))
    ]
    with rundir.open_store() as store:
        items = store_lookup.items(store, [item_id])
        if item_id not in items:
            raise DataError(f"no item {item_id!r} in this run", path=str(rundir.store_file))
        pairs = store_lookup.pairs(store, {row["pair_id"] for *_, row in found if "pair_id" in row})
        blind_ids = [b for p in pairs.values() for b in (p.slot_a, p.slot_b)]
        blind_ids += [row["blind_id"] for *_, row in found if "blind_id" in row]
        outputs = store_lookup.blinded(store, blind_ids)
        wanted = [
            row.get(key) for *_, row in found for key in ("request_ab", "request_ba", "request_id")
        ]
        results = store_lookup.results(store, [r for r in wanted if r is not None])
    if not found:
        raise DataError(
            f"item {item_id!r} has no judgment"
            + (f" of a pair holding {', '.join(systems)}" if systems else "")
            + ": check the system names (judgments.jsonl holds the judged pairs)",
            path=str(rundir.judgments_jsonl),
        )
    shown: dict[str, ShownResponse] = {}
    for *_, row in found:
        if "pair_id" in row:
            pair = pairs[row["pair_id"]]
            sides = [(row["system_a"], pair.slot_a), (row["system_b"], pair.slot_b)]
        else:
            sides = [(row["system"], row["blind_id"])]
        for system, blind_id in sides:
            response = outputs[blind_id]
            shown[system] = ShownResponse(
                system=system,
                blind_id=blind_id,
                output=response.output,
                earlier_turns=len(response.context),
            )
    return ItemTrail(
        item_id=item_id,
        question=_question(items[item_id].prompt),
        responses=[shown[s] for s in sorted(shown)],
        judgments=[
            JudgmentTrail(file=name, line=line, row=row, requests=_requests(row, results))
            for name, line, row in found
        ],
    )


def _judgment_rows(path: Path, item_id: str, systems: set[str]) -> list[tuple[int, dict[str, Any]]]:
    """(line, row) of the item's judgments in a judgments file (pairs, or an absolute rubric's
    scores), streamed: the file is never held whole."""
    found = []
    # The id as the file spells it (escapes and all): a cheap test before parsing a line.
    needle = json.dumps(item_id, ensure_ascii=False)[1:-1].encode("utf-8")
    with path.open("rb") as fh:
        for number, line in enumerate(fh, 1):
            if needle not in line:
                continue
            row = json.loads(line)
            if row.get("item_id") != item_id:
                continue
            held = {row["system_a"], row["system_b"]} if "pair_id" in row else {row.get("system")}
            if systems <= held:
                found.append((number, row))
    return found


def _requests(row: dict[str, Any], results: dict[str, StoredResult]) -> list[RequestTrail]:
    if row["judge"] == PANEL:
        return []
    out = []
    if "pair_id" in row:
        sides: list[tuple[str | None, str, str]] = [
            ("AB", row["system_a"], "_ab"),
            ("BA", row["system_b"], "_ba"),
        ]
    else:
        sides = [(None, row["system"], "_id")]
    for order, first, side in sides:
        request_id = row.get(f"request{side}")
        if request_id is None or request_id not in results:
            continue
        result = results[request_id]
        response, verdict = result.response, result.verdict
        failure = row.get("failure" if side == "_id" else f"failure{side}")
        out.append(
            RequestTrail(
                request_id=request_id,
                judge=result.request.judge,
                order=order,  # type: ignore[arg-type]
                first=first,
                status=result.status,
                reply=None if response is None else response.text,
                label=None if verdict is None else verdict.label,
                score=None if verdict is None else verdict.score,
                reasoning=None if verdict is None else verdict.reasoning,
                failure=failure,
                provider_request_id=None if response is None else response.provider_request_id,
                cached=None if response is None else response.cached,
            )
        )
    return out


def _question(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    return "\n".join(f"{m.role}: {m.content}" for m in prompt)


def render_trail(trail: ItemTrail) -> str:
    """The trail as text for a terminal: every text whole, indented under its label."""
    out = [f"item {trail.item_id}", "question:", _indent(trail.question)]
    for r in trail.responses:
        turns = f", after {r.earlier_turns} earlier messages" if r.earlier_turns else ""
        out += [
            f"{r.system}: response {r.blind_id} (store.sqlite blinded_responses{turns}):",
            _indent(r.output),
        ]
    for j in trail.judgments:
        row = j.row
        if "pair_id" in row:
            winner = row.get("winner")
            said = (
                "no verdict" if winner is None else "a tie" if winner == "tie" else f"{winner} won"
            )
            what = f"{row['system_a']} vs {row['system_b']}: {said}"
        else:
            score = row.get("score")
            what = f"{row['system']}: " + ("no score" if score is None else f"score {score:g}")
        out.append(f"judgment by {row['judge']}, {what} ({j.file} line {j.line})")
        for q in j.requests:
            if q.order is None:
                said = f"score {q.score:g}" if q.score is not None else q.status
            else:
                second = row["system_b"] if q.first == row["system_a"] else row["system_a"]
                named = {"A": q.first, "B": second, "tie": "a tie"}
                said = f"verdict {q.label} = {named[q.label]}" if q.label else q.status
            shown = f"{q.order} ({q.first} shown first)" if q.order else f"{q.first} graded"
            out.append(
                f"  {shown}: request {q.request_id} "
                f"(store.sqlite judge_requests, judge_responses, verdicts); {said}"
                + (f"; provider id {q.provider_request_id}" if q.provider_request_id else "")
            )
            if q.reasoning:
                out += ["    reasoning:", _indent(q.reasoning, 6)]
            if q.failure:
                out.append(f"    {q.failure}")
            if q.reply is not None:
                out += ["    reply:", _indent(q.reply, 6)]
    # Names and error texts too, not only the indented texts: nothing may drive the terminal.
    return inert("\n".join(out))


def _indent(text: str, by: int = 2) -> str:
    """`text` indented, with control characters written as escapes: a candidate's output
    must not drive the terminal (colours, cursor moves, a cleared screen)."""
    pad = " " * by
    text = inert(text.replace("\r\n", "\n"))
    return "\n".join(pad + line for line in (text.split("\n") or [""]))
