"""A Responses part is the pair (``output_index``, ``content_index``), whatever the numbers
are: a host that numbers an item's parts from 1 (seen on an OpenAI-compatible Responses
endpoint) gives the same reply, once, as the API's own numbering; and the terminal
response's ``output`` is checked against what streamed (a disagreement is never complete)."""

from __future__ import annotations

import orjson
import pytest

import llm_rx

from ..captures import CAPTURES, Capture

RESPONSES = [c for c in CAPTURES if c.provider == "openai-responses"]


def _renumbered(body: bytes, shift: int) -> bytes:
    """Every frame's ``content_index`` moved by ``shift`` (as such a host sends them)."""
    out = []
    for line in body.split(b"\n"):
        if line.startswith(b"data: ") and b'"content_index"' in line:
            frame = orjson.loads(line[6:])
            if isinstance(frame.get("content_index"), int):
                frame["content_index"] += shift
            line = b"data: " + orjson.dumps(frame)
        out.append(line)
    return b"\n".join(out)


def _texts(response: llm_rx.Response) -> list[str]:
    return [getattr(block, "text", "") for block in response.content]


def test_captures_with_numbered_parts_are_there() -> None:
    # (else the renumbering below would skip every case and prove nothing)
    assert sum(b'"content_index"' in case.data for case in RESPONSES) >= 10


@pytest.mark.parametrize("case", RESPONSES, ids=lambda c: c.name)
@pytest.mark.parametrize("shift", [1, 7])
def test_parts_numbered_from_elsewhere_read_as_the_same_reply(case: Capture, shift: int) -> None:
    body = case.data
    if b'"content_index"' not in body:
        pytest.skip("no numbered part")
    plain = llm_rx.reassemble(body, "openai-responses")
    moved = llm_rx.reassemble(_renumbered(body, shift), "openai-responses")
    assert _texts(moved) == _texts(plain)
    assert [b.type for b in moved.content] == [b.type for b in plain.content]
    assert moved.complete == plain.complete
    assert moved.stop_reason == plain.stop_reason


def _frames(*frames: dict[str, object]) -> bytes:
    return b"".join(b"data: " + orjson.dumps(f) + b"\n\n" for f in frames)


def _reply(text_done: str, output_text: str, index: int = 1) -> bytes:
    item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed"}
    part = {"type": "output_text", "text": output_text, "annotations": []}
    return _frames(
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress",
                                                  "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item,
                                                                           "content": []}},
        {"type": "response.content_part.added", "output_index": 0, "item_id": "msg_1",
         "content_index": index, "part": {**part, "text": ""}},
        {"type": "response.output_text.delta", "output_index": 0, "item_id": "msg_1",
         "content_index": index, "delta": "Hello"},
        {"type": "response.output_text.delta", "output_index": 0, "item_id": "msg_1",
         "content_index": index, "delta": " world"},
        {"type": "response.output_text.done", "output_index": 0, "item_id": "msg_1",
         "content_index": index, "text": text_done},
        {"type": "response.content_part.done", "output_index": 0, "item_id": "msg_1",
         "content_index": index, "part": {**part, "text": text_done}},
        {"type": "response.output_item.done", "output_index": 0,
         "item": {**item, "content": [{**part, "text": text_done}]}},
        {"type": "response.completed", "response": {
            "id": "resp_1", "status": "completed",
            "output": [{**item, "content": [{**part, "text": output_text}]}]}},
    )


@pytest.mark.parametrize("index", [0, 1, 2])
def test_one_part_numbered_anyhow_is_emitted_once(index: int) -> None:
    response = llm_rx.reassemble(_reply("Hello world", "Hello world", index),
                                 "openai-responses")
    assert response.text == "Hello world"
    assert len(response.content) == 1
    assert response.complete


def test_a_final_output_that_disagrees_with_the_stream_is_not_complete() -> None:
    response = llm_rx.reassemble(_reply("Hello world", "Hello world, and more"),
                                 "openai-responses")
    assert response.text == "Hello world"  # what streamed is kept
    assert not response.complete
    assert response.error is not None
    assert response.error.kind == "protocol"
    assert "final output" in response.error.message


def test_a_message_the_stream_never_brought_is_not_complete() -> None:
    body = _reply("Hello world", "Hello world").replace(
        b'"output":[{"id":"msg_1"', b'"output":[{"id":"msg_0","type":"message","content":'
        b'[{"type":"output_text","text":"lost"}]},{"id":"msg_1"')
    response = llm_rx.reassemble(body, "openai-responses")
    assert not response.complete
