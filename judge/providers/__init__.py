"""Judge providers behind one small async interface (see `base.Provider`).

Each adapter imports its SDK lazily; `make_provider` picks one from a judge's `provider/model`
and `transport`.
"""

from judge.providers.base import ErrorKind, Provider, ProviderCall, ProviderReply
from judge.providers.factory import key_problem, make_provider

__all__ = ["ErrorKind", "Provider", "ProviderCall", "ProviderReply", "key_problem", "make_provider"]
