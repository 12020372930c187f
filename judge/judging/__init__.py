"""Sending the judges their requests: the async runner with retries, rate limits and the
cache (`runner`, `calls`, `ratelimit`), progress (`tally`), prices and what a run will cost
(`pricing`, `cost_estimate`, `budget`)."""

from judge.exports import lazy_exports

_EXPORTS = {
    "Runner": "judge.judging.runner",
    "RunStats": "judge.judging.runner",
    "estimate_run": "judge.judging.cost_estimate",
    "rate_card": "judge.judging.pricing",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
