"""partial_json's cost: a 100 KB JSON answer (and a tool call's 100 KB of arguments) in
5-character deltas, against ``reassemble`` of the same bytes.

    python -m benchmarks.partial_json            # 100 KB, 15 rounds
    python -m benchmarks.partial_json --quick    # 20 KB, 5 rounds

``partial_json`` is the whole pipeline (the source, decoding, the operator and its every
emission); its time is given as the median over rounds of its ratio to ``reassemble``'s time
in the same round. The goal is at most 3x: the text is re-parsed only once it grew by
``GROWTH`` (a quarter) since the last parse, a bounded number of passes over the answer.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

import orjson
from reactivex import operators as ops

import llm_rx
from llm_rx import operators as lxo
from llm_rx.operators import PartialValue

from .streams import chunked

__all__ = ["answer", "document", "main", "partial", "tool_call"]

_BASE = {"id": "chatcmpl-json", "object": "chat.completion.chunk", "created": 1,
         "model": "gpt-4o-2024-08-06"}


def document(size: int) -> str:
    """A JSON object of about ``size`` characters: records of strings, numbers and lists."""
    records: list[dict[str, Any]] = []
    text = ""
    while len(text) < size:
        i = len(records)
        records.append({"id": i, "name": f"item {i} é", "score": i * 1.5, "tags": ["a", "b"],
                        "ok": i % 2 == 0, "note": None})
        if i % 64 == 63:
            text = orjson.dumps({"records": records}).decode()
    return orjson.dumps({"records": records}).decode()


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return b"data: " + orjson.dumps({**_BASE, "choices": [choice]}) + b"\n\n"


def answer(text: str, step: int = 5) -> bytes:
    """An OpenAI chat stream whose answer (``response_format`` json) is ``text``."""
    parts = [_chunk({"role": "assistant", "content": ""})]
    parts += [_chunk({"content": text[i:i + step]}) for i in range(0, len(text), step)]
    return b"".join([*parts, _chunk({}, "stop"), b"data: [DONE]\n\n"])


def tool_call(text: str, step: int = 5) -> bytes:
    """An OpenAI chat stream of one tool call whose arguments are ``text``."""
    call = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "save", "arguments": ""}}
    parts = [_chunk({"role": "assistant", "content": None, "tool_calls": [call]})]
    parts += [_chunk({"tool_calls": [{"index": 0, "function": {"arguments": text[i:i + step]}}]})
              for i in range(0, len(text), step)]
    return b"".join([*parts, _chunk({}, "tool_calls"), b"data: [DONE]\n\n"])


def partial(chunks: list[bytes]) -> list[PartialValue]:
    values: list[PartialValue] = llm_rx.from_bytes(chunks, provider="openai-chat").pipe(
        lxo.partial_json(), ops.to_list()
    ).run()
    return values


def _reassemble(chunks: list[bytes]) -> object:
    return llm_rx.reassemble(chunks, provider="openai-chat")


def _rounds(chunks: list[bytes], rounds: int) -> dict[str, list[float]]:
    contenders: dict[str, Callable[[list[bytes]], object]] = {
        "reassemble": _reassemble, "partial_json": partial,
    }
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, run in contenders.items():
            gc.collect()
            start = time.perf_counter()
            run(chunks)
            times[name].append(time.perf_counter() - start)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    size, rounds = (20_000, 5) if args.quick else (100_000, 15)
    text = document(size)
    print(f"a {len(text):,}-character JSON value in 5-character deltas, {rounds} rounds")
    print(f"{'stream':<24}{'reassemble':>12}{'partial_json':>14}{'ratio':>8}{'values':>8}")
    for title, body in (("JSON answer", answer(text)), ("tool call arguments", tool_call(text))):
        chunks = chunked(body)
        values = partial(chunks)
        assert values[-1].value == orjson.loads(text), title
        times = _rounds(chunks, rounds)
        ratio = statistics.median(
            a / b for a, b in zip(times["partial_json"], times["reassemble"], strict=True)
        )
        print(f"{title:<24}{statistics.median(times['reassemble']) * 1e3:>10.1f}ms"
              f"{statistics.median(times['partial_json']) * 1e3:>12.1f}ms{ratio:>7.2f}x"
              f"{len(values):>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
