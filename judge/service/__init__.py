"""`judge serve`: the pipeline behind an authenticated HTTP API.

The service is the same library behind HTTP: a submitted run is prepared with
`judge.run.prepare_run` (so uploads fail with the CLI's `DataError`s) and executed by a child
process running the `judge run` command function; results are read from the run directory.
Importing this package imports nothing heavy: `create_app` lives in `judge.service.app`.
"""

from __future__ import annotations

from judge.service.settings import ServiceSettings

__all__ = ["ServiceSettings"]
