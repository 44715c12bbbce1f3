"""The ``openai-completions`` decoder: legacy ``/v1/completions`` (``text_completion``) SSE.

One recorded capture (gpt-3.5-turbo-instruct, cut by ``max_tokens``); hand-built chunks in
the same shape for what it lacks: logprobs, ``n>1``, a stop, a cut stream. The chat decoder
given such a stream is the "not its format" case.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from openai.types import Completion

import llm_rx
from llm_rx.errors import WireFormatError
from llm_rx.wire.openai_chat import OpenAIChatDecoder
from llm_rx.wire.openai_completions import OpenAICompletionsDecoder
from llm_rx.wire.registry import sniff

from ..captures import CAPTURES, Capture, capture
from ..helpers import outcome, split_at
from ..streams import chat_chunk, sse

NAME = "openai/completions-legacy-text.sse"


def chunk(text: str, finish: str | None = None, *, index: int = 0, logprobs: Any = None,
          **top: Any) -> dict[str, Any]:
    return {"id": "cmpl-1", "object": "text_completion", "created": 7,
            "choices": [{"text": text, "index": index, "logprobs": logprobs,
                         "finish_reason": finish}],
            "model": "instruct-test", **top}


def body(*chunks: dict[str, Any], done: bool = True) -> bytes:
    frames = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks)
    return frames + (b"data: [DONE]\n\n" if done else b"")


def test_openai_completions_capture_reassembles() -> None:
    # bug class: text_completion chunks read by the chat decoder gave an empty reply that
    # claimed to be complete
    response = llm_rx.reassemble(capture(NAME).data)  # sniffed
    assert response.provider == "openai-completions"
    assert response.text == 'The holiday is called "Gratitude Day" and it is a day dedicated to'
    assert (response.complete, response.stop_reason) == (True, "max_tokens")
    assert response.model == "gpt-3.5-turbo-instruct:20230824-v2"
    assert response.id == "cmpl-D8ZFN477TMm6AoQohx2jSTOJMh60M"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (14, 16)


def test_openai_completions_sniffed_not_as_chat() -> None:
    data = capture(NAME).data
    assert sniff(data) == "openai-completions"
    assert sniff(data[: data.index(b"\n") + 1]) == "openai-completions"  # the first line


def test_openai_completions_chat_decoder_refuses_the_first_chunk() -> None:
    # bug class: a decoder reading another format's frames as empty ones of its own
    data = capture(NAME).data
    first = data.index(b"\n\n") + 2
    decoder = OpenAIChatDecoder()
    with pytest.raises(WireFormatError, match="text_completion") as raised:
        decoder.decode(data[:first])
    assert raised.value.raw is not None
    assert "text_completion" in raised.value.raw


def test_openai_completions_forced_chat_fails_at_the_first_frame() -> None:
    data = capture(NAME).data
    with pytest.raises(WireFormatError):
        llm_rx.reassemble(data, "openai-chat")
    with pytest.raises(WireFormatError):  # and the other way round
        llm_rx.reassemble(sse(chat_chunk({"content": "hi"}, "stop")), "openai-completions")


def test_openai_completions_decoder_refuses_a_chat_chunk() -> None:
    with pytest.raises(WireFormatError, match=r"chat\.completion\.chunk"):
        OpenAICompletionsDecoder().decode(sse(chat_chunk({"content": "hi"})))


def test_openai_completions_stop_and_done() -> None:
    response = llm_rx.reassemble(body(chunk("Hi"), chunk(" there", "stop")),
                                 "openai-completions")
    assert (response.text, response.stop_reason, response.complete) == ("Hi there", "end_turn",
                                                                       True)


def test_openai_completions_cut_stream_is_interrupted() -> None:
    response = llm_rx.reassemble(body(chunk("Hi"), done=False), "openai-completions")
    assert (response.text, response.complete, response.stop_reason) == ("Hi", False,
                                                                       "interrupted")


def test_openai_completions_logprobs_kept_as_the_legacy_object() -> None:
    first = {"tokens": ["Hi"], "token_logprobs": [-0.1], "top_logprobs": [{"Hi": -0.1}],
             "text_offset": [0]}
    second = {"tokens": [" there"], "token_logprobs": [-0.2],
              "top_logprobs": [{" there": -0.2}], "text_offset": [2]}
    response = llm_rx.reassemble(
        body(chunk("Hi", logprobs=first), chunk(" there", "stop", logprobs=second)),
        "openai-completions",
    )
    native = llm_rx.to_native(response, "openai-completions")
    assert native["choices"][0]["logprobs"] == {
        key: first[key] + second[key] for key in first
    }
    Completion.model_validate(native)


def test_openai_completions_several_choices() -> None:
    response = llm_rx.reassemble(
        body(chunk("a", index=0), chunk("b", index=1), chunk("!", "stop", index=0),
             chunk("?", "length", index=1)),
        "openai-completions",
    )
    native = llm_rx.to_native(response, "openai-completions")
    assert [(c["index"], c["text"], c["finish_reason"]) for c in native["choices"]] == [
        (0, "a!", "stop"), (1, "b?", "length")
    ]


def test_openai_completions_to_native_is_a_text_completion_body() -> None:
    response = llm_rx.reassemble(capture(NAME).data, "openai-completions")
    native = llm_rx.to_native(response, "openai-completions")
    assert native == {
        "id": "cmpl-D8ZFN477TMm6AoQohx2jSTOJMh60M",
        "object": "text_completion",
        "created": 1770934485,
        "model": "gpt-3.5-turbo-instruct:20230824-v2",
        "choices": [{"text": response.text, "index": 0, "logprobs": None,
                     "finish_reason": "length"}],
        "usage": {"prompt_tokens": 14, "completion_tokens": 16, "total_tokens": 30},
    }
    Completion.model_validate(native)


def test_openai_completions_to_native_from_another_provider() -> None:
    response = llm_rx.reassemble(capture("anthropic/text-basic.sse").data, "anthropic")
    native = llm_rx.to_native(response, "openai-completions")
    assert native["choices"][0]["text"] == response.text
    assert native["choices"][0]["finish_reason"] == "stop"
    Completion.model_validate(native)


@pytest.mark.parametrize("size", [1, 5, 64])
def test_openai_completions_chunk_boundaries_do_not_matter(size: int) -> None:
    data = capture(NAME).data
    assert outcome(split_at(data, range(0, len(data), size)), "openai-completions") == outcome(
        [data], "openai-completions"
    )


@pytest.mark.parametrize("cap", [c for c in CAPTURES if c.name != "ollama/pull-progress.ndjson"],
                         ids=lambda c: c.name)
def test_openai_completions_to_native_of_every_capture(cap: Capture) -> None:
    response = llm_rx.reassemble(cap.data, cap.provider)
    native = llm_rx.to_native(response, "openai-completions")
    Completion.model_validate(native)
    assert native["choices"][0]["text"] == response.text
