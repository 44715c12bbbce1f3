"""A Responses stream whose deltas disagree with its own ``.done`` texts: a proxy dropped
deltas. The reply is not complete (a protocol error at its terminal event, content and usage
kept); where the deltas brought the part's beginning, its end is kept from the ``.done``."""

from __future__ import annotations

import random

import orjson
import pytest

import llm_rx
from llm_rx.response import TextBlock, ThinkingBlock, ToolCallBlock

from ..captures import capture

DELTA = {
    "text": "response.output_text.delta",
    "summary": "response.reasoning_summary_text.delta",
    "args": "response.function_call_arguments.delta",
}
CASES = {
    "text": "openai/responses-web-search.sse",
    "summary": "openai/responses-reasoning-summary.sse",
    "args": "openai/responses-function-call.sse",
}


def _events(body: bytes) -> list[bytes]:
    return [event + b"\n\n" for event in body.split(b"\n\n") if event.strip()]


def _type(event: bytes) -> str:
    data = event.partition(b"data: ")[2].strip()
    try:
        return str(orjson.loads(data).get("type"))
    except orjson.JSONDecodeError:
        return ""


def _without(body: bytes, kind: str, keep: list[bool]) -> bytes:
    """The stream with the ``kind`` deltas whose ``keep`` flag is false left out."""
    events, flags, out = _events(body), iter(keep), []
    for event in events:
        if _type(event) == DELTA[kind] and not next(flags, True):
            continue
        out.append(event)
    return b"".join(out)


def _count(body: bytes, kind: str) -> int:
    return sum(_type(event) == DELTA[kind] for event in _events(body))


def _blocks(response: llm_rx.Response, kind: str) -> list[str]:
    if kind == "text":
        return [block.text for block in response.content if isinstance(block, TextBlock)]
    if kind == "summary":
        return [block.text for block in response.content if isinstance(block, ThinkingBlock)]
    return [block.raw_arguments for block in response.content
            if isinstance(block, ToolCallBlock)]


@pytest.mark.parametrize("kind", sorted(CASES))
def test_the_whole_capture_is_complete(kind: str) -> None:
    response = llm_rx.reassemble(capture(CASES[kind]).data, "openai-responses")
    assert response.complete


@pytest.mark.parametrize("kind", sorted(CASES))
def test_deltas_lost_at_the_end_keep_the_done_text_and_say_so(kind: str) -> None:
    body = capture(CASES[kind]).data
    whole = llm_rx.reassemble(body, "openai-responses")
    count = _count(body, kind)
    cut = _without(body, kind, [True] * 2 + [False] * (count - 2))
    response = llm_rx.reassemble(cut, "openai-responses")
    assert _blocks(response, kind) == _blocks(whole, kind)  # the complete text
    assert not response.complete
    assert response.error is not None
    assert response.error.kind == "protocol"
    assert "deltas were lost" in response.error.message
    assert "its end is kept from the .done text" in response.error.message
    assert response.usage == whole.usage  # (the terminal event's usage is kept)
    assert len(response.content) == len(whole.content)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", sorted(CASES))
def test_deltas_lost_anywhere_make_the_reply_not_complete(kind: str, seed: int) -> None:
    body = capture(CASES[kind]).data
    whole = llm_rx.reassemble(body, "openai-responses")
    rng = random.Random(seed)
    count = _count(body, kind)
    keep = [True] * count
    for at in rng.sample(range(count), rng.randint(1, max(1, count // 3))):
        keep[at] = False
    if all(keep[: count - 1]) and not keep[-1]:
        keep[0] = False  # (a loss in the middle: the end case is the test above)
    cut = _without(body, kind, keep)
    response = llm_rx.reassemble(cut, "openai-responses")
    assert not response.complete
    assert response.error is not None
    assert response.error.kind == "protocol"
    assert "deltas were lost" in response.error.message
    assert response.error.raw is not None
    # the complete text is in the frame the error carries
    lost = [text for text in _blocks(whole, kind) if text not in _blocks(response, kind)]
    assert lost
    assert any(orjson.dumps(text).decode()[1:-1] in response.error.raw for text in lost)
    # (the same whatever the reads)
    pieces = [cut[i : i + 97] for i in range(0, len(cut), 97)]
    assert llm_rx.reassemble(pieces, "openai-responses") == response
