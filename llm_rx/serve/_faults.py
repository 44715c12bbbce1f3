"""The faults a request asks for in its ``x-llm-rx-fault`` header, and its pace override.

``x-llm-rx-fault`` is a comma-separated list of ``name=value``::

    drop-after=N      close the connection after N body bytes (no end of the chunked body)
    drop-after-events=N   the same after N whole events (frames) of the stream
    ids               number an SSE stream's events (``id: 1``, ``id: 2``, ...), so a client
                      can resume with ``Last-Event-ID`` (a request that sends one gets them)
    stall-after=N     after N body bytes, send nothing for ``stall`` seconds (default: until
    stall=SECONDS     the client goes away or the server stops), then go on
    status=CODE       answer with that HTTP status and the provider's JSON error body
    error-after=N     the provider's in-band error frame after the frame that holds byte N,
                      then the end of the body
    malformed[=N]     the frame that holds byte N (alone: the middle frame) replaced by one
                      whose JSON does not parse, the rest sent as recorded
    retry-after=S     the ``Retry-After`` of a ``status`` fault (default 1 second; a 429 or
                      503 always sends one)

``x-llm-rx-pace: TOKENS_PER_S`` overrides the server's pace for the request (``0``: as fast
as it can). A header that does not parse is the client's mistake: HTTP 400.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["MIDDLE", "Fault", "parse_fault", "parse_pace"]

FAULT_HEADER = "x-llm-rx-fault"
PACE_HEADER = "x-llm-rx-pace"
MIDDLE = -1


@dataclass(frozen=True)
class Fault:
    """What one request asked to go wrong (every field ``None``: nothing)."""

    drop_after: int | None = None
    stall_after: int | None = None
    stall: float = math.inf
    status: int | None = None
    error_after: int | None = None
    malformed: int | None = None  # (``MIDDLE``: the middle frame)
    retry_after: float = 1.0
    drop_events: int | None = None
    ids: bool = False


_INTS = {"drop-after": "drop_after", "stall-after": "stall_after", "status": "status",
         "error-after": "error_after", "malformed": "malformed",
         "drop-after-events": "drop_events"}


def parse_fault(value: str | None) -> Fault:
    """The fault a header value names; ``ValueError`` saying what is wrong with it."""
    if not value or not value.strip():
        return Fault()
    counts: dict[str, int] = {}
    stall, retry_after = math.inf, 1.0
    ids = False
    for item in value.split(","):
        name, sep, number = (part.strip() for part in item.partition("="))
        if not name:
            continue
        if not sep and name == "malformed":
            counts["malformed"] = MIDDLE
            continue
        if not sep and name == "ids":
            ids = True
            continue
        if not sep:
            raise ValueError(f"fault {name!r} needs a value ({name}=...)")
        if name == "stall":
            seconds = float(number)
            if not seconds >= 0:
                raise ValueError(f"stall must be a number of seconds >= 0, not {number!r}")
            stall = seconds
        elif name == "retry-after":
            retry_after = float(number)
            if not 0 <= retry_after < math.inf:
                raise ValueError(f"retry-after must be a number of seconds >= 0, not {number!r}")
        elif name in _INTS:
            count = int(number)
            if count < 0:
                raise ValueError(f"{name} must be >= 0, not {count}")
            counts[_INTS[name]] = count
        else:
            raise ValueError(f"unknown fault {name!r}; known: ids, stall, retry-after, "
                             f"{', '.join(_INTS)}")
    fault = Fault(stall=stall, retry_after=retry_after, ids=ids, **counts)
    if fault.status is not None and not 400 <= fault.status <= 599:
        raise ValueError(f"status must be an HTTP error status (400-599), not {fault.status}")
    return fault


def parse_pace(headers: Mapping[str, str], default: float) -> float:
    """The request's pace (tokens per second), or the server's ``default``."""
    value = headers.get(PACE_HEADER)
    if value is None:
        return default
    pace = float(value)
    if not pace >= 0 or math.isinf(pace):
        raise ValueError(f"{PACE_HEADER} must be a number of tokens per second >= 0")
    return pace
