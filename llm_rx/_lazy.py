"""Public names imported on first use: a package's ``__getattr__`` looks them up here."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, MutableMapping
from typing import Any

__all__ = ["load"]


def load(
    package: str, where: Mapping[str, str], name: str, namespace: MutableMapping[str, Any]
) -> Any:
    """The public ``name`` of ``package``, imported from its module (``where[name]``, a
    relative module name) and kept in the package's ``namespace`` (the next access is a
    plain attribute); ``AttributeError`` for a name it does not have."""
    module = where.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, package), name)
    namespace[name] = value
    return value
