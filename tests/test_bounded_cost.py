"""Bounded cost: memory and work grow linearly with the input, whatever its shape.

Memory is the peak ``tracemalloc`` traces, relative to the input's size; work is counted
(Python calls, characters copied by string concatenation), never timed: speed is measured
in ``benchmarks/`` only.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from typing import Any

import orjson

import llm_rx
from llm_rx.builder import ResponseBuilder
from llm_rx.sources._engine import decode_all, new_decoder

from .helpers import reads_of

_CHUNK = {"id": "chatcmpl-cost", "object": "chat.completion.chunk", "created": 1727346168,
          "model": "gpt-4o-2024-08-06", "system_fingerprint": "fp_5050236cbd"}


def _peak(run: Callable[[], object]) -> int:
    """The peak of traced memory while ``run`` runs (what existed before it not counted)."""
    gc.collect()
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _sse(payload: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + orjson.dumps(payload) + b"\n\n"


def _openai(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(_sse({**_CHUNK, **chunk}) for chunk in chunks) + b"data: [DONE]\n\n"


def _many_choices(n: int) -> bytes:
    return _openai([{"choices": [{"index": i, "delta": {"role": "assistant", "content": "hi"},
                                  "logprobs": None, "finish_reason": "stop"}]}
                    for i in range(n)])


def _usage_on_every_chunk(n: int) -> bytes:
    return _openai([
        {"system_fingerprint": f"fp_{i}",
         "choices": [{"index": 0, "delta": {"content": " word"}, "logprobs": None,
                      "finish_reason": "stop" if i == n - 1 else None}],
         "usage": {"prompt_tokens": 14, "completion_tokens": i + 1, "total_tokens": i + 15}}
        for i in range(n)
    ])


# -- the builder keeps only the latest of what is replaced (no history) ---------------------


def test_reassemble_many_choices_memory_bounded() -> None:
    # bug class: every choice's end copied the map of all earlier ends, and a builder without
    # history kept each copy (10k choices from 1 MiB took 1.9 GiB)
    body = _many_choices(3_000)
    reads = reads_of(body, 64 * 1024)
    response: list[llm_rx.Response] = []
    peak = _peak(lambda: response.append(llm_rx.reassemble(reads, "openai-chat")))
    assert len(response[0].choices) == 3_000
    assert response[0].complete
    assert peak < 20 * len(body)


def test_builder_with_history_many_choices_memory_bounded() -> None:
    # bug class: the same copies kept as history by accumulate()'s builder
    body = _many_choices(3_000)
    builder = ResponseBuilder()

    def run() -> None:
        decode_all(new_decoder("openai-chat"), reads_of(body, 64 * 1024),
                   lambda events: builder.advance_all(events))

    peak = _peak(run)
    assert len(builder.build().choices) == 3_000
    assert peak < 20 * len(body)


def test_reassemble_usage_and_metadata_on_every_chunk_memory_bounded() -> None:
    # bug class: a builder without history kept every usage snapshot and every copy of the
    # metadata (usage on every chunk cost 8x the input, where the reply holds a few words)
    body = _usage_on_every_chunk(10_000)
    reads = reads_of(body, 64 * 1024)
    response: list[llm_rx.Response] = []
    peak = _peak(lambda: response.append(llm_rx.reassemble(reads, "openai-chat")))
    assert response[0].usage.output_tokens == 10_000
    assert response[0].extra["system_fingerprint"] == "fp_9999"
    assert peak < 2 * len(body)
