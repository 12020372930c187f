"""How the staging index (`judge.run.staging`) stores the checked rows of the input tables:
as columns, not as serialised records, so a row is stored without building its model (the
input pass is what judging waits for), and read back as the `Item` or `Response` it is."""

from __future__ import annotations

import json
from typing import Any

from judge.inputs.tables import ItemRow, ResponseRow
from judge.types import ChatMessage, Item, Response

ITEM_COLUMNS = "item_id, prompt, chat, reference, strata"
"""The items table's columns an `Item` is made from."""


def item_values(row: ItemRow) -> tuple[object, ...]:
    """A checked item as the items table stores it (`ITEM_COLUMNS`)."""
    chat = not isinstance(row.prompt, str)
    prompt = _messages_json(row.prompt) if chat else row.prompt  # type: ignore[arg-type]
    strata = json.dumps(row.strata) if row.strata else None
    return (row.item_id, prompt, chat, row.reference, strata)


def item_of(row: tuple[Any, ...]) -> Item:
    """An `Item` from the items table's `ITEM_COLUMNS`."""
    item_id, prompt, chat, reference, strata = row
    return Item(
        item_id=item_id,
        prompt=_messages(prompt) if chat else prompt,
        reference=reference,
        strata=json.loads(strata) if strata else {},
    )


def _messages_json(messages: tuple[ChatMessage, ...]) -> str:
    return json.dumps([m.model_dump() for m in messages])


def _messages(text: str) -> tuple[ChatMessage, ...]:
    return tuple(ChatMessage(**m) for m in json.loads(text))


RESPONSE_COLUMNS = "item_id, system, output, context, latency_s, cost_usd, tokens"
"""The responses table's columns a `Response` is made from, in `ResponseRow`'s order."""


def response_values(row: ResponseRow) -> tuple[object, ...]:
    """A checked row as the responses table stores it (`RESPONSE_COLUMNS`, then `empty`)."""
    context = _messages_json(row.context) if row.context else None
    return (*row[:3], context, *row[4:], not row.output.strip())


def response_of(row: tuple[Any, ...]) -> Response:
    """A `Response` from the responses table's `RESPONSE_COLUMNS` (and anything after)."""
    item_id, system, output, context, latency_s, cost_usd, tokens = row[:7]
    return Response(
        item_id=item_id,
        system=system,
        output=output,
        context=_messages(context) if context else (),
        latency_s=latency_s,
        cost_usd=cost_usd,
        tokens=tokens,
    )
