"""Sinks: the only code that writes I/O (displays, files)."""

from ._plain import PlainPrinter

__all__ = ["PlainPrinter"]
