"""Judging that stops when another thread says so: the local run's Ctrl-C and budget stop,
and the cluster driver's, both set a `threading.Event` from outside the event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def until_aborted(
    work: Awaitable[T], abort: threading.Event | None, stopped: Callable[[], T], poll_s: float
) -> T:
    """`work`'s result, or `stopped()` once `abort` is set (polled every `poll_s`; `work` is
    cancelled then, and what it stored stays stored). A cancellation not caused by `abort`
    propagates."""
    judging = asyncio.ensure_future(work)
    if abort is None:
        return await judging

    async def watch() -> None:
        while not abort.is_set():
            await asyncio.sleep(poll_s)
        judging.cancel()

    watcher = asyncio.create_task(watch())
    try:
        return await judging
    except asyncio.CancelledError:
        if not abort.is_set():
            raise
        return stopped()
    finally:
        watcher.cancel()
