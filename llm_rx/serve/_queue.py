"""Scripted replies: the next requests answered, in order, with replies a test wrote.

``queue(*replies)`` puts canonical ``Response`` objects (``llm_rx.testing.reply(...)``, or
any reply read back from JSON: a tool call given only ``arguments`` or only ``raw_arguments``
gets the other, and an id) in line; each request to any provider endpoint takes the
first one and gets it in that endpoint's wire, streamed or not, written by llm-rx's own
encoders (``llm_rx.encoders`` for a stream, ``to_native`` for a body), so a client reads
it as it reads the provider. An empty queue leaves the request to the captures.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable

import orjson

from ..encoders import make_encoder
from ..native import to_native
from ..response import Response
from ._defaults import QUEUE_BUDGET
from ._endpoints import Endpoint
from ._frames import split_frames
from ._scripted import response_events, settled

__all__ = ["QUEUE_BUDGET", "ScriptQueue", "scripted_pieces"]



class ScriptQueue:
    """Replies waiting for the next requests, first in first out, from any thread. At most
    ``limit`` wait at once, and at most ``budget`` bytes of them (each counted as its
    canonical JSON): ``queue()`` past either raises ``OverflowError`` and queues none."""

    def __init__(self, limit: int = 10_000, budget: int = QUEUE_BUDGET) -> None:
        self._replies: deque[tuple[Response, int]] = deque()
        self._limit = limit
        self._budget = budget
        self._size = 0
        self._lock = threading.Lock()

    def put(self, replies: Iterable[Response]) -> None:
        replies = list(replies)
        for item in replies:
            if not isinstance(item, Response):
                raise TypeError(f"queue() takes llm_rx.Response objects (llm_rx.testing.reply"
                                f"(...)), not {type(item).__name__}")
        replies = [settled(item) for item in replies]  # (each call's id and arguments whole)
        sized = [(item, len(item.model_dump_json())) for item in replies]
        size = sum(length for _, length in sized)
        with self._lock:
            if len(self._replies) + len(replies) > self._limit:
                raise OverflowError(f"more than {self._limit} scripted replies waiting")
            if self._size + size > self._budget:
                raise OverflowError(f"more than {self._budget} bytes of scripted replies "
                                    f"waiting ({self._size} wait, {size} more asked)")
            self._replies.extend(sized)
            self._size += size

    def take(self) -> Response | None:
        """The next reply (``None``: none waits)."""
        with self._lock:
            if not self._replies:
                return None
            reply, size = self._replies.popleft()
            self._size -= size
            return reply

    def clear(self) -> None:
        with self._lock:
            self._replies.clear()
            self._size = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._replies)


def scripted_pieces(response: Response, endpoint: Endpoint, streamed: bool,
                    target: str | None) -> list[bytes]:
    """``response`` as ``endpoint`` sends it: its stream cut into frames (``target`` is the
    stream encoder's name; ``None``: the endpoint has no encoder, ``ValueError``), or its
    non-stream body as one piece."""
    if not streamed:
        return [orjson.dumps(to_native(response, endpoint.provider))]
    if target is None:
        raise ValueError(f"no stream encoder writes {endpoint.provider} {endpoint.form} "
                         "streams; ask this endpoint for a non-stream reply")
    encoder = make_encoder(target)
    data = encoder.encode(response_events(response)) + encoder.finish(None)
    return split_frames(data, endpoint.form)
