"""A few rows of a run's store by id, for the audit (`judge.run.analyse_audit`, `judge show`): the
items, pairs, blinded responses and results an example quotes, without reading the store
whole. Reads only, through the store's own connection (`RunStore.connection`)."""

from __future__ import annotations

from collections.abc import Collection

from judge.sqlite import select_in
from judge.store.rows import (
    BLINDED_FIELDS,
    ITEM_FIELDS,
    PAIR_FIELDS,
    RESULTS_SELECT,
    blinded_from_row,
    column_list,
    item_from_row,
    pair_from_row,
    result_from_row,
)
from judge.store.run_store import RunStore, StoredResult
from judge.types import BlindedPair, BlindedResponse, Item


def items(store: RunStore, ids: Collection[str]) -> dict[str, Item]:
    select = f"SELECT {column_list(ITEM_FIELDS)} FROM items"
    found = map(item_from_row, select_in(store.connection, select, "item_id", sorted(set(ids))))
    return {item.item_id: item for item in found}


def pairs(store: RunStore, ids: Collection[str]) -> dict[str, BlindedPair]:
    select = f"SELECT {column_list(PAIR_FIELDS)} FROM pairs"
    found = map(pair_from_row, select_in(store.connection, select, "pair_id", sorted(set(ids))))
    return {pair.pair_id: pair for pair in found}


def blinded(store: RunStore, ids: Collection[str]) -> dict[str, BlindedResponse]:
    select = f"SELECT {column_list(BLINDED_FIELDS)} FROM blinded_responses"
    rows = select_in(store.connection, select, "blind_id", sorted(set(ids)))
    return {b.blind_id: b for b in map(blinded_from_row, rows)}


def results(store: RunStore, request_ids: Collection[str]) -> dict[str, StoredResult]:
    """Requests with their response and verdict or parse failure, by request id."""
    rows = select_in(store.connection, RESULTS_SELECT, "q.request_id", sorted(set(request_ids)))
    return {r.request.request_id: r for r in map(_result, rows)}


def _result(row: tuple) -> StoredResult:
    # RESULTS_SELECT starts with the request's rowid (for paging): not part of the record.
    request, response, verdict, failure = result_from_row(row[1:])
    return StoredResult(request=request, response=response, verdict=verdict, failure=failure)
