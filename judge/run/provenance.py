"""What a run records so it can be reproduced: package versions, interpreter, platform."""

from __future__ import annotations

import platform
import sys
from datetime import UTC, datetime
from importlib import metadata

from judge import DISTRIBUTION

# The packages whose versions change results or prompts.
_PACKAGES = (
    DISTRIBUTION,
    "openai",
    "anthropic",
    "litellm",
    "pydantic",
    "numpy",
    "scipy",
    "pandas",
    "krippendorff",
    "jinja2",
    "tenacity",
    "pyarrow",
    "matplotlib",
)


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def environment() -> dict[str, object]:
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
