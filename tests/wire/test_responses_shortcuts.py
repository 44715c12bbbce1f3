"""The Responses decoder with shortcuts (``llm_rx/speed/responses.py``): text delta frames
read as a pattern learnt from the last one (sequence number, obfuscation and the string left
free). That it gives what the plain decoder gives is held by ``test_fast_paths.py`` (every
capture, mutated captures, live reads); here, that the shortcut is taken at all, and what a
pattern accepts."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from llm_rx import speed
from llm_rx.wire._responses_items import Part
from llm_rx.wire.openai_responses import OpenAIResponsesDecoder
from llm_rx.wire.registry import make_decoder

from ..captures import capture

CASES = ["openai/responses-web-search.sse", "deepseek/responses-text-reasoning.sse",
         "xai/responses-reasoning.sse", "openai/responses-reasoning-summary.sse"]


def _reads(body: bytes, live: bool) -> list[bytes]:
    return [e + b"\n\n" for e in body.split(b"\n\n") if e] if live else [body]


@pytest.mark.parametrize("live", [False, True], ids=["whole", "a frame per read"])
@pytest.mark.parametrize("name", CASES)
def test_text_deltas_take_the_shortcut(name: str, live: bool,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # bug class: a shortcut never taken (the equivalence tests then compare the plain
    # decoder with itself)
    body = capture(name).data
    deltas = body.count(b'"type":"response.output_text.delta"')
    plain = 0
    original = OpenAIResponsesDecoder._text_delta

    def counted(self: Any, *args: Any) -> None:
        nonlocal plain
        plain += 1
        original(self, *args)

    monkeypatch.setattr(OpenAIResponsesDecoder, "_text_delta", counted)
    decoder = make_decoder("openai-responses", decoders=speed.decoders())
    events = [e for read in _reads(body, live) for e in decoder.decode(read)]
    events += decoder.flush()
    assert deltas > 5
    assert plain <= 2 + deltas // 4  # (the first of each part, and a few)


def _frame(**fields: Any) -> bytes:
    return orjson.dumps({"type": "response.output_text.delta", **fields})


@pytest.mark.parametrize("fields", [
    {"sequence_number": 4, "item_id": "msg_1", "output_index": 0, "content_index": 0,
     "delta": "Hi", "logprobs": [], "obfuscation": "aZ09"},
    {"content_index": 0, "delta": "Hi", "item_id": "msg_1", "logprobs": [],
     "obfuscation": "q", "output_index": 1, "sequence_number": 12},
    {"delta": "Hi", "item_id": "msg_1", "output_index": 0, "content_index": 0},
])
def test_a_pattern_leaves_free_the_string_the_number_the_padding_and_the_id(
        fields: dict[str, Any]) -> None:
    pattern = speed_learn(_frame(**fields), "Hi")
    assert pattern is not None
    other = {**fields, "delta": 'a "quoted" \\ \u00e9 \U0001f600 line\nend'}
    if "sequence_number" in fields:
        other["sequence_number"] = 123456789
    if "obfuscation" in fields:
        other["obfuscation"] = "x"
    other["item_id"] = "msg_of_another_reply"  # (the part is the one at the indexes)
    found = pattern.frame.fullmatch(_frame(**other))
    assert found is not None
    assert orjson.loads(b'"' + found[1] + b'"') == other["delta"]
    for changed in ({"output_index": 3}, {"content_index": 1},
                    {"logprobs": [{"token": "x"}]}, {"extra": True}):
        assert pattern.frame.fullmatch(_frame(**{**fields, **changed})) is None


@pytest.mark.parametrize("data", [
    b'{"type":"response.output_text.delta","delta":"Hi","x":{"delta":"Hi"}}',  # twice
    b'{"type":"response.output_text.delta","delta":"Ho"}',  # not the string decoded
])
def test_no_pattern_for_a_frame_it_cannot_read_again(data: bytes) -> None:
    assert speed_learn(data, "Hi") is None


def speed_learn(data: bytes, value: str) -> Any:
    from llm_rx.speed.responses import learn

    return learn(data, value, Part(0, "text"))


def _alternating(parts: int) -> bytes:
    """A reply whose text deltas go to two parts in turn (each frame a new pattern)."""
    def event(frame: dict[str, Any]) -> bytes:
        return b"event: " + frame["type"].encode() + b"\ndata: " + orjson.dumps(frame) + b"\n\n"

    head = [event({"type": "response.created", "sequence_number": 0,
                   "response": {"id": "r", "status": "in_progress", "output": []}})]
    for index in (0, 1):
        head.append(event({"type": "response.output_item.added", "output_index": index,
                           "item": {"id": f"m{index}", "type": "message", "content": []}}))
    body = [event({"type": "response.output_text.delta", "item_id": f"m{n % 2}",
                   "output_index": n % 2, "content_index": 0, "delta": "x",
                   "sequence_number": n + 3}) for n in range(parts)]
    return b"".join(head + body)


def test_a_read_of_frames_that_change_the_pattern_costs_linear_work(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # bug class: each new pattern scanning every frame left in the read: quadratic in a
    # huge read whose frames alternate between parts
    from llm_rx.speed.responses import ResponsesShortcuts

    scanned = 0
    batch = ResponsesShortcuts._batch

    def counted(self: Any, frames: list[Any], start: int, out: list[Any]) -> int:
        nonlocal scanned
        scanned += len(frames) - start
        return batch(self, frames, start, out)

    monkeypatch.setattr(ResponsesShortcuts, "_batch", counted)
    for parts in (2_000, 8_000):
        scanned = 0
        decoder = make_decoder("openai-responses", decoders=speed.decoders())
        events = decoder.decode(_alternating(parts))
        assert sum(type(e).__name__ == "TextDelta" for e in events) == parts
        assert scanned <= 12 * parts
