"""What one frame of the live displays costs, for replies of growing size.

    python -m benchmarks.displays            # 1,000 and 10,000 cited sources; 0.3 and 3 MB
    python -m benchmarks.displays --quick    # 1,000 sources; 0.3 MB

A reply whose answer cites a source per sentence (Anthropic's web-search citations), and a
reply whose answer is one long line with inline Markdown. Each is rendered as one notebook
frame (``render_frame``, final) and one terminal frame (rich, into a string: streaming, what
the ``Live`` region draws, and final), CPU seconds, the best of three (``--quick``) or one round.
"""

from __future__ import annotations

import argparse
import io
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import orjson
from rich.console import Console

import llm_rx
from llm_rx.sinks._jupyter import render_frame
from llm_rx.sinks._rich import _Tail, render_reply

__all__ = ["cited", "long_line", "main"]


def _sse(events: list[dict[str, Any]]) -> bytes:
    start: dict[str, Any] = {"type": "message_start", "message": {
        "id": "m", "type": "message", "role": "assistant", "model": "bench", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}}
    end: list[dict[str, Any]] = [{"type": "message_delta", "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 5}}, {"type": "message_stop"}]
    return b"".join(b"event: " + event["type"].encode() + b"\ndata: " + orjson.dumps(event)
                    + b"\n\n" for event in [start, *events, *end])


def _text(index: int, text: str, *citations: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "content_block_start", "index": index,
             "content_block": {"type": "text", "text": "", "citations": []}},
            {"type": "content_block_delta", "index": index,
             "delta": {"type": "text_delta", "text": text}},
            *({"type": "content_block_delta", "index": index,
               "delta": {"type": "citations_delta", "citation": citation}}
              for citation in citations),
            {"type": "content_block_stop", "index": index}]


def cited(sources: int) -> llm_rx.Response:
    """An answer of ``sources`` sentences, each citing a source of its own."""
    events: list[dict[str, Any]] = []
    for n in range(sources):
        events += _text(n, f"Sentence {n} says **so**. ", {
            "type": "web_search_result_location", "cited_text": f"snippet {n}",
            "url": f"https://example.com/{n}", "title": f"Title {n}", "encrypted_index": "x"})
    return llm_rx.reassemble(_sse(events))


def long_line(size: int) -> llm_rx.Response:
    """An answer of one line of ``size`` characters, with inline Markdown."""
    return llm_rx.reassemble(_sse(_text(0, ("ab*c `d` e_f " * (size // 13 + 1))[:size])))


def _best(work: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)


def _terminal(response: llm_rx.Response, final: bool) -> Callable[[], object]:
    def draw() -> None:
        console = Console(file=io.StringIO(), width=100, height=40, force_terminal=True)
        reply = render_reply(response, final)
        console.print(reply if final else _Tail(reply))
    return draw


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the small sizes only")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 1  # (a 3 MB final frame takes half a minute)
    cases = [("sources", cited, (1_000,) if args.quick else (1_000, 10_000)),
             ("one line, chars", long_line, (300_000,) if args.quick else (300_000, 3_000_000))]
    print(f"{'reply':<26}{'notebook':>10}{'terminal (streaming)':>22}{'terminal (final)':>18}")
    for label, make, sizes in cases:
        for size in sizes:
            response = make(size)
            notebook = _best(partial(render_frame, response, True), rounds)
            streaming = _best(_terminal(response, False), rounds)
            final = _best(_terminal(response, True), rounds)
            print(f"{f'{label} {size:,}':<26}{notebook:>9.3f}s{streaming:>21.3f}s"
                  f"{final:>17.3f}s", flush=True)


if __name__ == "__main__":
    main()
