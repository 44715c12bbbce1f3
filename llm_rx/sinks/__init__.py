"""Sinks: the only code that writes I/O (displays, files, a gateway's streaming response).

The live displays are taps — ``events.pipe(lxs.jupyter_display(), lxo.to_response())`` —
passing every event through while they render, so one subscription drives both.
"""

from ._asgi import sse_response
from ._jupyter import DisplayUnavailableError, ReplyFrame, jupyter_display
from ._live import DEFAULT_REFRESH_PER_SECOND, LiveView, live
from ._plain import PlainPrinter
from ._redis import to_redis
from ._redis_sse import redis_sse_response
from ._terminal import terminal_display

__all__ = [
    "DEFAULT_REFRESH_PER_SECOND",
    "DisplayUnavailableError",
    "LiveView",
    "PlainPrinter",
    "ReplyFrame",
    "jupyter_display",
    "live",
    "redis_sse_response",
    "sse_response",
    "terminal_display",
    "to_redis",
]
