"""Defence in depth for secrets in text the service emits (problem details, stored run errors,
log lines): values of secret-looking environment variables and URL passwords are masked.

The pipeline already keeps keys out of its messages; this catches what a third-party exception
might still carry.
"""

from __future__ import annotations

import os
import re

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^:/@\s]+):[^@/\s]+@")
_MIN_SECRET_LEN = 8
"""Shorter values ("1", "true") would mask ordinary words."""
MASK = "[redacted]"


def secret_values() -> list[str]:
    values = {
        value
        for name, value in os.environ.items()
        if _SECRET_NAME.search(name) and len(value.strip()) >= _MIN_SECRET_LEN
    }
    # Longest first, so a secret containing another is masked whole.
    return sorted(values, key=len, reverse=True)


def redact(message: str) -> str:
    for value in secret_values():
        message = message.replace(value, MASK)
    return _URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", message)
