"""Operators to compose over event streams, one per module, each a factory for ``.pipe()``."""

from ._decode import decode
from ._text_only import text_only
from ._to_response import to_response

__all__ = ["decode", "text_only", "to_response"]
