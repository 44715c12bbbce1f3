"""The limits on what a request may send the emulator: its body's size (``--max-body``) and
the time between its bytes; every route that reads a body reads it through ``read_body``."""

from __future__ import annotations

import asyncio

from starlette.requests import Request

__all__ = ["BODY_TIMEOUT", "Refused", "read_body"]

#: Seconds a request body may go without a byte before it is answered 408.
BODY_TIMEOUT = 10.0
#: The header of an answer given before the request was read whole: the connection ends.
_CLOSE = {"connection": "close"}


class Refused(Exception):
    """A request answered with an HTTP error in the endpoint's shape."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused (413) as soon as it is known to pass ``limit`` bytes (its
    ``Content-Length``, or what arrived), and (408) when it stops arriving for
    ``BODY_TIMEOUT`` seconds: never more than ``limit`` bytes are held."""
    declared = request.headers.get("content-length", "")
    too_large = Refused(413, f"the request body is larger than {limit} bytes (--max-body)",
                        _CLOSE)
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    pieces: list[bytes] = []
    size = 0
    reads = request.stream().__aiter__()
    while True:
        try:
            async with asyncio.timeout(BODY_TIMEOUT):
                piece = await reads.__anext__()
        except StopAsyncIteration:
            return b"".join(pieces)
        except TimeoutError:
            raise Refused(408, f"no byte of the request body for {BODY_TIMEOUT:g} s",
                          _CLOSE) from None
        size += len(piece)
        if size > limit:
            raise too_large
        pieces.append(piece)
