"""Sinks: the only code that writes I/O (displays, files, a gateway's streaming response).

The live displays are taps — ``events.pipe(lxs.jupyter_display(), lxo.to_response())`` —
passing every event through while they render, so one subscription drives both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._lazy import load

__all__ = [
    "DEFAULT_REFRESH_PER_SECOND",
    "DisplayUnavailableError",
    "LiveView",
    "PlainPrinter",
    "ReplyFrame",
    "durable_sse_response",
    "jupyter_display",
    "live",
    "redis_sse_response",
    "sse_response",
    "terminal_display",
    "to_durable_stream",
    "to_redis",
]

#: Where each name lives: imported on first use (a program loads only what it uses).
_WHERE = {
    "DEFAULT_REFRESH_PER_SECOND": "._live",
    "DisplayUnavailableError": "._jupyter",
    "LiveView": "._live",
    "PlainPrinter": "._plain",
    "ReplyFrame": "._jupyter",
    "durable_sse_response": "._durable_sse",
    "jupyter_display": "._jupyter",
    "live": "._live",
    "redis_sse_response": "._redis_sse",
    "sse_response": "._asgi",
    "terminal_display": "._terminal",
    "to_durable_stream": "._durable",
    "to_redis": "._redis",
}


def __getattr__(name: str) -> Any:
    return load(__name__, _WHERE, name, globals())


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from ._asgi import sse_response
    from ._durable import to_durable_stream
    from ._durable_sse import durable_sse_response
    from ._jupyter import DisplayUnavailableError, ReplyFrame, jupyter_display
    from ._live import DEFAULT_REFRESH_PER_SECOND, LiveView, live
    from ._plain import PlainPrinter
    from ._redis import to_redis
    from ._redis_sse import redis_sse_response
    from ._terminal import terminal_display
