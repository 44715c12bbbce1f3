"""A response factory's call: an SDK's or httpx's own HTTP error it raised (openai's
``RateLimitError``, ``raise_for_status()``'s ``HTTPStatusError``) is the `ProviderError` of
that reply, as an error status read from the response is."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..wire.sdk_errors import sdk_error

__all__ = ["awaited", "opening"]


def _told(error: Exception) -> Exception | None:
    """The `ProviderError` for an SDK's or httpx's own HTTP error a factory raised (openai's
    ``RateLimitError``, ``raise_for_status()``'s ``HTTPStatusError``), else ``None``."""
    told = sdk_error(error, now=time.time())
    return told if told is not error else None


def opening(open_response: Callable[[], Any]) -> Any:
    """What a response factory returns; an HTTP error it raised as the `ProviderError`."""
    try:
        return open_response()
    except Exception as error:
        told = _told(error)
        if told is None:
            raise
        raise told from error


async def awaited(pending: Any) -> Any:
    """`opening` for an async factory's awaitable."""
    try:
        return await pending
    except Exception as error:
        told = _told(error)
        if told is None:
            raise
        raise told from error
