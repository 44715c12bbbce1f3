"""A malformed stream's error does not depend on how its bytes were split into reads: the
same error class, message and raw frame for the body whole, read byte by byte and in random
reads, on every capture of every wire, each broken in the ways a body breaks (a frame cut
short, a byte changed, a frame's field of the wrong type)."""

from __future__ import annotations

import random

import pytest

from llm_rx import speed
from llm_rx.errors import LlmRxError
from llm_rx.wire.eventstream import EventStreamDecoder, encode_message
from llm_rx.wire.registry import make_decoder

from ..captures import CAPTURES, Capture

STREAMS = [c for c in CAPTURES if not c.name.endswith(".json")]


def _outcome(provider: str, reads: list[bytes], fast: bool = False) -> tuple[object, ...]:
    decoder = make_decoder(provider, decoders=speed.decoders() if fast else None)
    try:
        for read in reads:
            decoder.decode(read)
        decoder.flush()
    except LlmRxError as error:
        return type(error), str(error), error.raw
    return (None,)


def _splits(body: bytes, rng: random.Random) -> list[list[bytes]]:
    cuts = sorted(rng.sample(range(1, len(body)), min(12, len(body) - 1)))
    random_reads = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)])]
    return [[body[i : i + 1] for i in range(len(body))], random_reads]


def _broken(body: bytes, rng: random.Random) -> list[bytes]:
    """The body cut inside a frame, with a byte changed, with a value's type changed."""
    middle = rng.randrange(len(body) // 4, 3 * len(body) // 4)
    changed = bytearray(body)
    changed[middle] = ord(rng.choice('{}[]":,x0'))
    out = [body[:middle], bytes(changed)]
    for old, new in ((b'"text":"', b'"text":['), (b'"index":', b'"index":"'),
                     (b'"type":"', b'"type":{"'), (b'"delta":', b'"delta":7,"x":')):
        at = body.find(old, middle)
        if at >= 0:
            out.append(body[:at] + new + body[at + len(old):])
    return out


def _broken_messages(body: bytes, rng: random.Random) -> list[bytes]:
    """An event stream (Bedrock's) with one message's JSON payload broken as above, each
    message framed again with its checksums (so only the payload is wrong)."""
    messages = EventStreamDecoder().decode(body)
    at = rng.randrange(len(messages) // 2, len(messages))
    headers = {k: v for k, v in messages[at].headers.items() if isinstance(v, str)}
    framed = [encode_message({k: v for k, v in m.headers.items() if isinstance(v, str)},
                             bytes(m.payload)) for m in messages]
    thrown = {**headers, ":message-type": "exception", ":exception-type": "throttlingException"}
    variants = [(headers, payload) for payload in _broken(bytes(messages[at].payload), rng)]
    variants += [({**headers, ":event-type": "unknownEvent"}, bytes(messages[at].payload)),
                 (thrown, b'{"message":"Too many requests"}'), (headers, b"[1, 2]")]
    return [b"".join([*framed[:at], encode_message(h, p), *framed[at + 1:]])
            for h, p in variants]


@pytest.mark.parametrize("fast", [False, True], ids=["plain", "shortcuts"])
@pytest.mark.parametrize("case", STREAMS, ids=lambda c: c.name)
def test_the_error_is_the_same_however_the_bytes_were_read(case: Capture, fast: bool) -> None:
    rng = random.Random(case.name)
    body = case.data
    body = body[:30_000]  # (a longer one only costs more reads of one byte)
    bodies = (_broken_messages(body, rng) if case.provider == "bedrock-converse"
              else _broken(body, rng))
    for broken in bodies:
        whole = _outcome(case.provider, [broken])  # (the plain decoder, read whole)
        for reads in _splits(broken, rng):
            assert _outcome(case.provider, reads, fast) == whole
