"""Canonical content hashes: sorted-key compact JSON, algorithm-prefixed, so keys never
depend on dict order or whitespace."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no insignificant whitespace, and non-ASCII kept as is."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_default
    )


def content_hash(value: Any) -> str:
    """`sha256:<hex>` of the canonical JSON of `value`."""
    return "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def _default(value: Any) -> Any:
    # pydantic models hash by their JSON form so a model and its dict hash alike.
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    raise TypeError(f"cannot hash value of type {type(value).__name__}")
