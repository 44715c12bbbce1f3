"""The gemini decoder: both wire forms, every part kind, signatures, usage, the end of a stream.

Hand-made streams are built with :func:`chunk` and sent in either form (:func:`as_sse`,
:func:`as_array`); captures are read as the provider sent them and, to compare the forms,
rewritten into the other form here, without llm-rx.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import llm_rx
from llm_rx.errors import FrameTooLargeError, LlmRxError, WireFormatError
from llm_rx.events import (
    BlockStart,
    ChoiceEnd,
    MessageStart,
    MessageStop,
    SignatureDelta,
    TextDelta,
    ToolArgsDelta,
    UsageUpdate,
)
from llm_rx.response import OpaqueBlock, Response, ThinkingBlock
from llm_rx.sources._engine import decode_all
from llm_rx.wire.gemini import GeminiDecoder
from llm_rx.wire.registry import sniff

from ..captures import CAPTURES, Capture, capture
from ..helpers import decode_events, outcome, split_at

GEMINI = [cap for cap in CAPTURES if cap.provider == "gemini"]
SIG_A = "CiQBjz1rX+z7CAOCNB0aLI7ypObFNPY+MRlb2NP1K12YF4ii184KZgGPPWtf8hWSKLNch1ghUKZUmY=="
SIG_B = "EqsFCqgFAb4+9vvtAF5n87lB4OGDOoTRMOqp35jW65XsYXh6BySMwl9nvrbAvPcl2U0xITaYUyV4Cm/="


# -- building streams ------------------------------------------------------------------------


def chunk(
    *parts: dict[str, Any],
    finish: Any = None,
    usage: dict[str, Any] | None = None,
    index: int | None = 0,
    candidates: Any = ...,
    **top: Any,
) -> dict[str, Any]:
    """One ``GenerateContentResponse`` chunk with one candidate holding ``parts``."""
    out: dict[str, Any] = {}
    if candidates is ...:
        candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}}
        if finish is not None:
            candidate["finishReason"] = finish
        if index is not None:
            candidate["index"] = index
        out["candidates"] = [candidate]
    else:
        out["candidates"] = candidates
    if usage is not None:
        out["usageMetadata"] = usage
    out["modelVersion"] = "gemini-test-001"
    out["responseId"] = "resp-1"
    out.update(top)
    return out


def as_sse(*chunks: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + orjson.dumps(c) + b"\r\n\r\n" for c in chunks)


def as_array(*chunks: dict[str, Any], close: bool = True) -> bytes:
    """The JSON-array form, laid out as Gemini lays it out (``\\n,\\r\\n`` between)."""
    body = b"[" + b"\n,\r\n".join(
        orjson.dumps(c, option=orjson.OPT_INDENT_2) for c in chunks
    )
    return body + (b"\n]" if close else b"")


def both(*chunks: dict[str, Any]) -> Response:
    """The response of the chunks, after checking both forms give the same events."""
    sse_form, array_form = outcome([as_sse(*chunks)]), outcome([as_array(*chunks)])
    assert sse_form[0] == array_form[0]
    assert sse_form[1:2] == array_form[1:2]  # (the error's type)
    return llm_rx.reassemble(as_sse(*chunks), "gemini")


def text(value: str, **fields: Any) -> dict[str, Any]:
    return {"text": value, **fields}


def thought(value: str, **fields: Any) -> dict[str, Any]:
    return {"text": value, "thought": True, **fields}


def call(name: str | None = None, **fields: Any) -> dict[str, Any]:
    body = {"name": name} if name is not None else {}
    return {"functionCall": {**body, **fields}}


def payloads(cap: Capture) -> list[Any]:
    """The capture's chunks, read without llm-rx (SSE ``data:`` lines, or the JSON array)."""
    data = cap.data
    if data.lstrip()[:1] == b"[":
        chunks: list[Any] = json.loads(data)
        return chunks
    lines = data.decode().replace("\r\n", "\n").split("\n")
    return [json.loads(line[5:]) for line in lines if line.startswith("data:")]


def kinds(response: Response) -> list[str]:
    return [block.type for block in response.content]


def blocks(response: Response) -> list[tuple[str, str | None, str | None]]:
    """Each block's type, text and signature."""
    return [(block.type, getattr(block, "text", None), getattr(block, "signature", None))
            for block in response.content]


# -- the two forms ---------------------------------------------------------------------------


@pytest.mark.parametrize("cap", GEMINI, ids=lambda c: c.name)
def test_gemini_capture_in_the_other_form_gives_the_same_events(cap: Capture) -> None:
    chunks = payloads(cap)
    events, error = outcome([cap.data], "gemini")
    assert error is None
    assert outcome([as_sse(*chunks)], "gemini") == (events, None)
    assert outcome([as_array(*chunks)], "gemini") == (events, None)
    assert llm_rx.reassemble(as_array(*chunks), "gemini") == llm_rx.reassemble(cap.data)


def test_gemini_every_capture_reassembles_complete() -> None:
    assert len(GEMINI) >= 15
    assert {cap.data.lstrip()[:1] for cap in GEMINI} == {b"[", b"d"}  # both forms
    for cap in GEMINI:
        response = llm_rx.reassemble(cap.data, "gemini")
        assert (response.complete, response.error) == (True, None), cap.name
        assert response.content or "prompt_feedback" in cap.features, cap.name  # (blocked)
        assert response.model, cap.name


@pytest.mark.parametrize("cap", GEMINI, ids=lambda c: c.name)
def test_gemini_sniff_recognises_every_capture(cap: Capture) -> None:
    assert sniff(cap.data) == "gemini"
    assert llm_rx.reassemble(cap.data) == llm_rx.reassemble(cap.data, "gemini")
    head = cap.data[:3000]
    one_by_one = [head[i : i + 1] for i in range(len(head))]
    assert outcome(one_by_one) == outcome([head], "gemini")  # sniffed byte by byte


@pytest.mark.parametrize("form", [as_sse, as_array], ids=["sse", "array"])
@pytest.mark.parametrize("lead", [b"", b"\r\n\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf\n"],
                         ids=["none", "blank-lines", "bom", "bom-newline"])
def test_gemini_form_told_after_leading_whitespace_and_bom(form: Any, lead: bytes) -> None:
    body = lead + form(chunk(text("Hi"), finish="STOP"))
    for cut in range(len(lead) + 8):
        response = llm_rx.reassemble(split_at(body, [1, 2, cut]), "gemini")
        assert (response.text, response.complete) == ("Hi", True)


# -- parts -----------------------------------------------------------------------------------


def test_pitfall_18_several_parts_in_one_chunk_all_kept_in_order() -> None:
    # rig#947 read only parts[0]: the thought, text and parallel calls after it were dropped
    response = both(
        chunk(
            thought("Plan: look up both."),
            text("Checking two cities."),
            call("weather", args={"city": "Paris"}, id="c1"),
            call("weather", args={"city": "Oslo"}, id="c2"),
            finish="STOP",
        )
    )
    assert kinds(response) == ["thinking", "text", "tool_call", "tool_call"]
    assert [(c.id, c.arguments) for c in response.tool_calls] == [
        ("c1", {"city": "Paris"}), ("c2", {"city": "Oslo"})
    ]
    assert response.stop_reason == "tool_use"


def test_pitfall_18_candidates_null_chunks_are_skipped_not_fatal() -> None:
    usage = {"promptTokenCount": 4, "candidatesTokenCount": 2, "totalTokenCount": 6}
    response = both(
        chunk(candidates=None, usage={"promptTokenCount": 4, "totalTokenCount": 4}),
        chunk(text("Hel")),
        chunk(candidates=None),
        chunk(text("lo"), finish="STOP", usage=usage),
        chunk(candidates=None, usage=usage),
    )
    assert (response.text, response.complete, response.stop_reason) == ("Hello", True, "end_turn")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (4, 2)


def test_gemini_text_parts_merge_across_chunks_while_unsigned() -> None:
    response = both(chunk(text("a")), chunk(text("b"), text("c")), chunk(text("d"), finish="STOP"))
    assert blocks(response) == [("text", "abcd", None)]


def test_gemini_unsigned_empty_text_part_adds_nothing() -> None:
    response = both(chunk(call("f", args={})), chunk(text(""), finish="STOP"))
    assert kinds(response) == ["tool_call"]


def test_gemini_thought_parts_become_one_thinking_block() -> None:
    cap = capture("gemini/sse-thought-parts.sse")
    wire = [p for c in payloads(cap) for p in c["candidates"][0]["content"]["parts"]]
    thinking = "".join(p["text"] for p in wire if p.get("thought"))
    response = llm_rx.reassemble(cap.data)
    blocks = [b for b in response.content if isinstance(b, ThinkingBlock)]
    assert [b.text for b in blocks] == [thinking]
    assert response.text == "".join(p["text"] for p in wire if not p.get("thought"))


def test_gemini_think_text_think_keeps_order() -> None:
    response = both(chunk(thought("a")), chunk(text("b")), chunk(thought("c"), finish="STOP"))
    assert blocks(response) == [("thinking", "a", None), ("text", "b", None),
                                ("thinking", "c", None)]


def test_gemini_part_with_unknown_fields_is_its_own_block_and_keeps_them() -> None:
    meta = {"partMetadata": {"k": "v"}}
    response = both(chunk(text("a")), chunk(text("b", **meta)), chunk(text("c"), finish="STOP"))
    assert blocks(response) == [("text", "a", None), ("text", "b", None), ("text", "c", None)]
    parts = llm_rx.to_native(response, "gemini")["candidates"][0]["content"]["parts"]
    assert parts[1] == {"text": "b", **meta}


# -- signatures (PITFALLS 16) ----------------------------------------------------------------


def test_pitfall_16_signature_on_empty_text_part_is_its_own_block() -> None:
    cap = capture("gemini/sse-gemini3-text-signature-empty-part.sse")
    (signed,) = [p for c in payloads(cap) for p in c["candidates"][0]["content"]["parts"]
                 if "thoughtSignature" in p]
    assert signed["text"] == ""
    response = llm_rx.reassemble(cap.data)
    assert [(kind, bool(value), signature) for kind, value, signature in blocks(response)] == [
        ("text", True, None), ("text", False, signed["thoughtSignature"])
    ]
    parts = llm_rx.to_native(response, "gemini")["candidates"][0]["content"]["parts"]
    assert parts[-1] == {"text": "", "thoughtSignature": signed["thoughtSignature"]}


def test_pitfall_16_signed_part_never_merged_with_a_neighbour() -> None:
    # langchainjs#9624, pydantic-ai#3647: merging across the signature boundary, or moving
    # the signature, gets the next turn rejected
    response = both(
        chunk(thought("think")),
        chunk(text("first", thoughtSignature=SIG_A)),
        chunk(text(" second")),
        chunk(text(" third")),
        chunk(text("", thoughtSignature=SIG_B), finish="STOP"),
    )
    assert blocks(response) == [
        ("thinking", "think", None),
        ("text", "first", SIG_A),
        ("text", " second third", None),
        ("text", "", SIG_B),
    ]
    parts = llm_rx.to_native(response, "gemini")["candidates"][0]["content"]["parts"]
    assert [p.get("thoughtSignature") for p in parts] == [None, SIG_A, None, SIG_B]


def test_pitfall_16_signature_on_function_call_part() -> None:
    cap = capture("gemini/sse-function-call-thought-signature.sse")
    part = payloads(cap)[0]["candidates"][0]["content"]["parts"][0]
    response = llm_rx.reassemble(cap.data)
    (tool,) = response.tool_calls
    assert (tool.name, tool.signature) == ("get_country", part["thoughtSignature"])
    native = llm_rx.to_native(response, "gemini")["candidates"][0]["content"]["parts"]
    assert native == [{"functionCall": {"name": "get_country", "args": {}},
                       "thoughtSignature": part["thoughtSignature"]}]


def test_pitfall_16_parallel_calls_signature_stays_on_the_first() -> None:
    response = both(
        chunk(call("a", args={"x": 1}), call("b", args={"y": 2})),
        chunk(call("c", args={}), finish="STOP"),
    )
    assert [c.signature for c in response.tool_calls] == [None, None, None]
    response = both(
        chunk(
            {"functionCall": {"name": "a", "args": {"x": 1}}, "thoughtSignature": SIG_A},
            call("b", args={"y": 2}),
            finish="STOP",
        )
    )
    assert [(c.name, c.signature) for c in response.tool_calls] == [("a", SIG_A), ("b", None)]


def test_gemini_signature_on_thought_part_stays_on_thinking() -> None:
    response = both(chunk(thought("a", thoughtSignature=SIG_A)), chunk(thought("b"), finish="STOP"))
    assert blocks(response) == [("thinking", "a", SIG_A), ("thinking", "b", None)]


def test_gemini_signed_block_closes_at_once() -> None:
    events, _ = decode_events([as_sse(chunk(text("x", thoughtSignature=SIG_A)))], "gemini")
    names = [type(e).__name__ for e in events]
    assert names[:5] == ["MessageStart", "BlockStart", "TextDelta", "SignatureDelta", "BlockStop"]


# -- function calls --------------------------------------------------------------------------


def test_gemini_function_call_raw_arguments_compact_json_in_key_order() -> None:
    args = {"zeta": 1, "alpha": {"y": [1, 2.5, None], "x": "é \"q\""}, "b": True}
    response = both(chunk(call("f", args=args), finish="STOP"))
    (tool,) = response.tool_calls
    assert tool.raw_arguments == '{"zeta":1,"alpha":{"y":[1,2.5,null],"x":"é \\"q\\""},"b":true}'
    assert list(tool.arguments) == ["zeta", "alpha", "b"]
    assert tool.arguments == args


def test_gemini_function_call_id_kept_and_given_back() -> None:
    response = both(chunk(call("f", args={"a": 1}, id="call-7"), finish="STOP"))
    assert response.tool_calls[0].id == "call-7"
    part = llm_rx.to_native(response, "gemini")["candidates"][0]["content"]["parts"][0]
    assert part == {"functionCall": {"id": "call-7", "name": "f", "args": {"a": 1}}}


def test_gemini_stop_with_function_call_is_tool_use() -> None:
    response = llm_rx.reassemble(capture("gemini/sse-function-call-gemini2.sse").data)
    assert (response.stop_reason, response.complete) == ("tool_use", True)
    assert response.native_stop_reason == "STOP"
    assert response.tool_calls[0].arguments == {"country": "France"}


def test_gemini_partial_args_capture_two_streamed_calls() -> None:
    cap = capture("gemini/sse-streaming-function-call-args-partialargs.sse")
    signature = payloads(cap)[0]["candidates"][0]["content"]["parts"][0]["thoughtSignature"]
    response = llm_rx.reassemble(cap.data)
    assert response.stop_reason == "tool_use"
    assert [(c.name, c.raw_arguments, c.arguments, c.signature) for c in response.tool_calls] == [
        ("getWeather", '{"location":"Boston"}', {"location": "Boston"}, signature),
        ("getWeather", '{"location":"San Francisco"}', {"location": "San Francisco"}, None),
    ]


def test_gemini_partial_args_nested_paths_and_value_kinds() -> None:
    fragments = [
        {"jsonPath": "$.recipe.name", "stringValue": "Lasa", "willContinue": True},
        {"jsonPath": "$.recipe.name", "stringValue": "gna \"al forno\"", "willContinue": True},
        {"jsonPath": "$.recipe.name", "stringValue": ""},
        {"jsonPath": "$.recipe.steps[0]", "stringValue": "boil"},
        {"jsonPath": "$.recipe.steps[1]", "stringValue": "bake"},
        {"jsonPath": "$.recipe.items[0].qty", "numberValue": 2.5},
        {"jsonPath": "$.recipe.items[0].ok", "boolValue": False},
        {"jsonPath": "$.recipe.items[1].qty", "numberValue": 3},
        {"jsonPath": "$.note", "nullValue": "NULL_VALUE"},
        {"jsonPath": "$['odd.key']", "stringValue": "v"},
    ]
    stream = [chunk(call("cook", willContinue=True))]
    stream += [chunk(call(partialArgs=[f], willContinue=True)) for f in fragments]
    stream += [chunk(call(), finish="STOP")]
    response = both(*stream)
    expected = {
        "recipe": {
            "name": 'Lasagna "al forno"',
            "steps": ["boil", "bake"],
            "items": [{"qty": 2.5, "ok": False}, {"qty": 3}],
        },
        "note": None,
        "odd.key": "v",
    }
    (tool,) = response.tool_calls
    assert tool.raw_arguments == orjson.dumps(expected).decode()
    assert tool.arguments == expected


def test_gemini_partial_args_one_event_per_fragment() -> None:
    stream = as_sse(
        chunk(call("f", willContinue=True)),
        chunk(call(partialArgs=[{"jsonPath": "$.q", "stringValue": "ab", "willContinue": True}],
                   willContinue=True)),
        chunk(call(partialArgs=[{"jsonPath": "$.q", "stringValue": "cd", "willContinue": True}],
                   willContinue=True)),
        chunk(call(partialArgs=[{"jsonPath": "$.q", "stringValue": ""}], willContinue=True)),
        chunk(call(), finish="STOP"),
    )
    events, _ = decode_events([stream], "gemini")
    assert [e.fragment for e in events if isinstance(e, ToolArgsDelta)] == [
        '{"q":"ab', "cd", '"', "}"
    ]


def test_gemini_partial_args_cut_before_the_end_is_not_a_finished_call() -> None:
    # PITFALLS 9: '{"location":"Boston"' is all that arrived; the call is not final
    body = as_sse(
        chunk(call("getWeather", willContinue=True)),
        chunk(call(partialArgs=[{"jsonPath": "$.location", "stringValue": "Boston"}],
                   willContinue=True)),
    )
    response = llm_rx.reassemble(body, "gemini")
    assert (response.complete, response.stop_reason) == (False, "interrupted")
    (tool,) = response.tool_calls
    assert (tool.arguments, tool.raw_arguments) == (None, '{"location":"Boston"')


def test_gemini_empty_function_call_with_nothing_streaming_is_ignored() -> None:
    response = both(chunk(text("hi")), chunk(call(), finish="STOP"))
    assert kinds(response) == ["text"]
    assert response.stop_reason == "end_turn"


# -- server-side parts and metadata ----------------------------------------------------------


def test_gemini_code_execution_parts_are_opaque_and_verbatim() -> None:
    cap = capture("gemini/sse-code-execution.sse")
    wire = [p for c in payloads(cap) for p in c["candidates"][0]["content"]["parts"]
            if "executableCode" in p or "codeExecutionResult" in p]
    response = llm_rx.reassemble(cap.data)
    opaque = [b for b in response.content if isinstance(b, OpaqueBlock)]
    assert [b.kind for b in opaque] == ["executableCode", "codeExecutionResult"]
    assert [b.raw for b in opaque] == wire  # thoughtSignature on executableCode included
    assert kinds(response) == ["opaque", "opaque", "text", "text"]


def test_gemini_grounding_metadata_kept_on_the_candidate() -> None:
    cap = capture("gemini/sse-google-search-grounding.sse")
    final = payloads(cap)[-1]["candidates"][0]["groundingMetadata"]
    response = llm_rx.reassemble(cap.data)
    assert response.choice_extra["groundingMetadata"] == final
    native = llm_rx.to_native(response, "gemini")["candidates"][0]
    assert native["groundingMetadata"] == final


def test_gemini_url_context_and_citation_metadata_passed_through() -> None:
    url_context = {"urlMetadata": [{"retrievedUrl": "https://example.com",
                                    "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS"}]}
    citations = {"citationSources": [{"startIndex": 0, "endIndex": 2, "uri": "https://x.y"}]}
    last = {"content": {"parts": [text("!")], "role": "model"}, "finishReason": "STOP",
            "index": 0, "urlContextMetadata": url_context, "citationMetadata": citations}
    response = both(chunk(text("ok")), chunk(candidates=[last]))
    candidate = llm_rx.to_native(response, "gemini")["candidates"][0]
    assert candidate["urlContextMetadata"] == url_context
    assert candidate["citationMetadata"] == citations
    assert response.text == "ok!"


def test_gemini_vertex_fields_kept() -> None:
    response = llm_rx.reassemble(capture("gemini/sse-vertex-flex.sse").data)
    assert response.extra["createTime"] == "2026-03-21T18:11:55.919086Z"
    native = llm_rx.to_native(response, "gemini")
    assert native["usageMetadata"]["trafficType"] == "ON_DEMAND_FLEX"
    assert native["createTime"] == "2026-03-21T18:11:55.919086Z"


def test_gemini_model_version_is_the_served_model() -> None:
    # PITFALLS 26: the served model (modelVersion) wins over the one asked for
    events, _ = decode_events([capture("gemini/sse-thought-parts.sse").data])
    assert events[0] == MessageStart("gemini", "gemini-2.5-pro", "beHBaJfEMIi-qtsP3769-Q8")


# -- usage (PITFALLS 3) ----------------------------------------------------------------------


def test_pitfall_03_cumulative_usage_metadata_is_not_summed() -> None:
    cap = capture("gemini/sse-usage-live.sse")
    snapshots = [c["usageMetadata"] for c in payloads(cap)]
    assert len(snapshots) == 3  # repeated, growing, on every chunk
    response = llm_rx.reassemble(cap.data)
    last = snapshots[-1]
    assert response.usage.input_tokens == last["promptTokenCount"] == 18
    assert response.usage.output_tokens == 80 + 35  # candidates + thoughts, of the last one
    assert response.usage.reasoning_tokens == 35
    events, _ = decode_events([cap.data])
    live = [e.usage.output_tokens for e in events if isinstance(e, UsageUpdate)]
    # The first snapshot at once; the running repeats are held and the latest goes out
    # before the end (overlaying every one would give the same totals).
    assert live == [31 + 35, 80 + 35]
    assert isinstance(events[-1], MessageStop)
    assert events.index(next(e for e in events if isinstance(e, UsageUpdate) and
                             e.usage.output_tokens == 115)) < len(events) - 1


def test_gemini_usage_cached_and_thought_tokens_into_canonical_fields() -> None:
    usage = {"promptTokenCount": 1000, "cachedContentTokenCount": 800,
             "candidatesTokenCount": 40, "thoughtsTokenCount": 60, "totalTokenCount": 1100}
    response = both(chunk(text("x"), finish="STOP", usage=usage))
    assert response.usage.model_dump(mode="json", exclude={"native"}) == {
        "input_tokens": 1000, "output_tokens": 100, "cache_read_tokens": 800,
        "cache_write_tokens": None, "reasoning_tokens": 60,
    }
    assert llm_rx.to_native(response, "gemini")["usageMetadata"] == usage


def test_gemini_usage_absent_stays_none() -> None:
    response = both(chunk(text("x"), finish="STOP"))
    assert not response.usage.reported
    assert "usageMetadata" not in llm_rx.to_native(response, "gemini")


def test_gemini_usage_only_one_of_the_output_counts() -> None:
    response = both(chunk(text("x"), finish="STOP",
                          usage={"promptTokenCount": 3, "thoughtsTokenCount": 9}))
    assert (response.usage.output_tokens, response.usage.reasoning_tokens) == (9, 9)


def test_gemini_usage_repeated_unchanged_is_one_snapshot() -> None:
    usage = {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4}
    events, _ = decode_events([as_sse(chunk(text("a"), usage=usage),
                                      chunk(text("b"), usage=usage, finish="STOP"))], "gemini")
    assert sum(isinstance(e, UsageUpdate) for e in events) == 1


# -- finish reasons and enums ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("finish", "reason"),
    [
        ("STOP", "end_turn"), (1, "end_turn"), ("MAX_TOKENS", "max_tokens"), (2, "max_tokens"),
        ("SAFETY", "content_filter"), (3, "content_filter"), ("RECITATION", "content_filter"),
        ("PROHIBITED_CONTENT", "content_filter"), ("MALFORMED_FUNCTION_CALL", "error"),
        (10, "error"), ("OTHER", "end_turn"), ("SOMETHING_NEW", "end_turn"),
    ],
)
def test_gemini_finish_reason_names_and_numbers(finish: Any, reason: str) -> None:
    response = both(chunk(text("x"), finish=finish))
    assert (response.stop_reason, response.complete) == (reason, True)
    assert response.native_stop_reason == finish


@pytest.mark.parametrize("unspecified", ["FINISH_REASON_UNSPECIFIED", 0])
def test_gemini_finish_reason_unspecified_is_not_an_end(unspecified: Any) -> None:
    response = both(chunk(text("x"), finish=unspecified))
    assert (response.complete, response.stop_reason) == (False, "interrupted")


def test_gemini_enum_int_capture() -> None:
    cap = capture("gemini/json-array-enum-int-story.json")
    response = llm_rx.reassemble(cap.data)
    assert (response.complete, response.stop_reason, response.native_stop_reason) == (
        True, "end_turn", 1
    )
    candidate = llm_rx.to_native(response, "gemini")["candidates"][0]
    assert candidate["finishReason"] == "STOP"
    assert candidate["safetyRatings"][0] == {
        "category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"
    }


def test_gemini_finish_message_is_the_stop_details() -> None:
    response = llm_rx.reassemble(capture("gemini/json-array-function-call.json").data)
    assert response.stop_details == "Model generated function call(s)."
    assert response.stop_reason == "tool_use"


# -- the end of the stream -------------------------------------------------------------------


def test_gemini_sse_eof_after_finish_reason_is_complete() -> None:
    body = as_sse(chunk(text("a")), chunk(text("b"), finish="STOP"))
    assert llm_rx.reassemble(body, "gemini").complete
    body_no_blank_line = body.rstrip(b"\r\n")  # the last event without its blank line
    assert llm_rx.reassemble(body_no_blank_line, "gemini").complete


def test_gemini_sse_eof_without_finish_reason_is_interrupted() -> None:
    response = llm_rx.reassemble(as_sse(chunk(text("The answer is"))), "gemini")
    assert (response.complete, response.stop_reason, response.text) == (
        False, "interrupted", "The answer is"
    )
    assert response.error is not None
    assert response.error.kind == "incomplete"
    assert "finishReason" not in llm_rx.to_native(response, "gemini")["candidates"][0]


def test_gemini_sse_cut_inside_the_last_frame_is_interrupted() -> None:
    body = as_sse(chunk(text("a")), chunk(text("b"), finish="STOP"))
    response = llm_rx.reassemble(body[:-20], "gemini")
    assert (response.complete, response.text) == (False, "a")
    assert response.error is not None
    assert response.error.raw is not None


def test_gemini_array_closed_after_finish_reason_is_complete_at_once() -> None:
    decoder = GeminiDecoder()
    events = decoder.decode(as_array(chunk(text("a")), chunk(text("b"), finish="STOP")))
    assert decoder.finished  # the "]" ends the reply: no need to wait for EOF
    assert type(events[-1]).__name__ == "MessageStop"
    assert decoder.flush() == []


def test_gemini_array_without_closing_bracket_is_interrupted_even_after_finish() -> None:
    body = as_array(chunk(text("a")), chunk(text("b"), finish="STOP"), close=False)
    response = llm_rx.reassemble(body, "gemini")
    assert (response.complete, response.stop_reason, response.text) == (False, "interrupted", "ab")
    assert response.error is not None
    assert "closing" in response.error.message


def test_gemini_array_closed_without_finish_reason_is_interrupted() -> None:
    response = llm_rx.reassemble(as_array(chunk(text("a"))), "gemini")
    assert (response.complete, response.stop_reason) == (False, "interrupted")
    assert response.error is not None
    assert "array closed" in response.error.message


def test_gemini_array_cut_inside_an_element_keeps_what_came() -> None:
    body = as_array(chunk(text("a")), chunk(text("b"), finish="STOP"))
    response = llm_rx.reassemble(body[: body.rindex(b'"b"')], "gemini")
    assert (response.complete, response.text) == (False, "a")
    assert response.error is not None
    assert response.error.raw is not None
    assert response.error.raw.startswith("{")


def test_gemini_array_bytes_after_the_end_are_ignored() -> None:
    body = as_array(chunk(text("a"), finish="STOP")) + b"\n" + as_array(chunk(text("zzz")))
    response = llm_rx.reassemble(body, "gemini")
    assert (response.text, response.complete) == ("a", True)


def test_gemini_every_candidate_must_finish() -> None:
    two = [
        {"content": {"parts": [text("A")], "role": "model"}, "index": 0},
        {"content": {"parts": [text("B")], "role": "model"}, "index": 1},
    ]
    first_done = [{"content": {"role": "model"}, "index": 0, "finishReason": "STOP"}]
    second_done = [{"content": {"parts": [text("b")], "role": "model"}, "index": 1,
                   "finishReason": "MAX_TOKENS"}]
    partial = both(chunk(candidates=two), chunk(candidates=first_done))
    assert not partial.complete
    response = both(chunk(candidates=two), chunk(candidates=first_done),
                    chunk(candidates=second_done))
    assert response.complete
    assert [(c.index, c.stop_reason) for c in response.choices] == [
        (0, "end_turn"), (1, "max_tokens")
    ]
    assert response.text == "A"
    assert [[getattr(b, "text", None) for b in c.content] for c in response.choices] == [
        ["A"], ["Bb"]
    ]
    candidates = llm_rx.to_native(response, "gemini")["candidates"]
    assert [(c["index"], c["finishReason"]) for c in candidates] == [(0, "STOP"), (1, "MAX_TOKENS")]


def test_gemini_blocked_prompt_is_a_complete_content_filter_reply() -> None:
    feedback = {"blockReason": "PROHIBITED_CONTENT"}
    response = both(chunk(candidates=None, promptFeedback=feedback,
                          usage={"promptTokenCount": 7, "totalTokenCount": 7}))
    assert (response.complete, response.stop_reason, response.stop_details) == (
        True, "content_filter", "PROHIBITED_CONTENT"
    )
    native = llm_rx.to_native(response, "gemini")
    assert native["promptFeedback"] == feedback
    assert "candidates" not in native


@pytest.mark.parametrize("form", [as_sse, as_array], ids=["sse", "array"])
def test_gemini_error_chunk_is_a_provider_error_keeping_what_came(form: Any) -> None:
    error = {"error": {"code": 503, "message": "The model is overloaded.",
                       "status": "UNAVAILABLE"}}
    response = llm_rx.reassemble(form(chunk(text("partial")), error), "gemini")
    assert (response.stop_reason, response.complete, response.text) == ("error", False, "partial")
    assert response.error is not None
    assert (response.error.kind, response.error.message) == (
        "provider", "UNAVAILABLE: The model is overloaded."
    )
    assert "finishReason" not in llm_rx.to_native(response, "gemini")["candidates"][0]
    first = llm_rx.reassemble(form(error), "gemini")  # in-band, before any content
    assert (first.stop_reason, first.content) == ("error", [])


def test_gemini_element_not_json_is_a_wire_format_error() -> None:
    body = b'[{"candidates": [}]'
    events, error = decode_events([body], "gemini")
    assert error is not None
    assert error.kind == "wire_format"
    assert events == []


def test_gemini_frame_not_an_object_is_a_wire_format_error() -> None:
    for body in (b"data: [1, 2]\n\n", b"[[1, 2]]"):
        _, error = decode_events([body], "gemini")
        assert error is not None
        assert "not a JSON object" in error.message


def test_gemini_non_stream_body_is_not_a_stream_but_reads_as_its_reply() -> None:
    body = orjson.dumps(chunk(text("x"), finish="STOP"))
    decoder = GeminiDecoder()
    decoder.decode(body)
    with pytest.raises(LlmRxError, match="not a gemini event stream"):
        decoder.flush()
    response = llm_rx.reassemble(body, "gemini")  # (a GenerateContentResponse: the reply)
    assert (response.text, response.complete) == ("x", True)


@pytest.mark.parametrize("body", [b"", b"  \r\n", b"["], ids=["empty", "blank", "bracket"])
def test_gemini_body_cut_before_the_first_frame_is_an_empty_interrupted_reply(
    body: bytes,
) -> None:
    response = llm_rx.reassemble(body, "gemini")
    assert (response.content, response.complete, response.stop_reason) == (
        [], False, "interrupted"
    )


@pytest.mark.parametrize("form", [as_sse, as_array], ids=["sse", "array"])
def test_gemini_max_frame_refuses_an_oversized_chunk_after_the_ones_before(form: Any) -> None:
    body = form(chunk(text("ok")), chunk(text("x" * 5000), finish="STOP"))
    events: list[Any] = []
    with pytest.raises(FrameTooLargeError):
        decode_all(GeminiDecoder(2000), [body], events.extend)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["ok"]


# -- events ----------------------------------------------------------------------------------


def test_gemini_events_of_a_plain_text_chunk_are_one_per_delta() -> None:
    events, _ = decode_events([as_sse(chunk(text("a")), chunk(text("b")),
                                      chunk(text("c"), finish="STOP"))], "gemini")
    assert [type(e).__name__ for e in events] == [
        "MessageStart", "BlockStart", "TextDelta", "MetadataUpdate", "TextDelta", "TextDelta",
        "BlockStop", "ChoiceEnd", "MessageStop",
    ]
    assert isinstance(events[1], BlockStart)
    assert isinstance(events[-2], ChoiceEnd)
    assert not any(isinstance(e, SignatureDelta) for e in events)


@settings(max_examples=30, deadline=None)
@given(cap=st.sampled_from(GEMINI), cuts=st.lists(st.integers(0, 20_000), max_size=20),
       to_array=st.booleans())
def test_gemini_rechunked_either_form_same_events(
    cap: Capture, cuts: list[int], to_array: bool
) -> None:
    chunks = payloads(cap)
    body = as_array(*chunks) if to_array else as_sse(*chunks)
    pieces = split_at(body, [cut % (len(body) + 1) for cut in cuts])
    assert outcome(pieces, "gemini") == outcome([cap.data], "gemini")


def test_gemini_held_usage_goes_out_when_the_stream_is_cut() -> None:
    cap = capture("gemini/sse-usage-live.sse")
    cut = cap.data.rindex(b"data: ")  # the last chunk (the one with the finishReason) is lost
    response = llm_rx.reassemble(cap.data[:cut], "gemini")
    assert response.complete is False
    second = [c["usageMetadata"] for c in payloads(cap)][1]
    assert response.usage.output_tokens == second["candidatesTokenCount"] + second[
        "thoughtsTokenCount"]


def test_gemini_hot_path_decodes_exactly_as_the_general_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from llm_rx.speed.gemini import GeminiShortcuts

    from ..helpers import outcome

    bodies = [c.data for c in CAPTURES if c.provider == "gemini"]
    bodies.append(b"".join(
        b'data: {"candidates": [{"content": {"parts": [{"text": "%d "}], "role": "model"}, '
        b'"index": 0%s}], "usageMetadata": {"promptTokenCount": 3, '
        b'"candidatesTokenCount": %d}, "modelVersion": "m"}\n\n'
        % (i, b', "finishReason": "STOP"' if i == 40 else b"", i)
        for i in range(41)
    ))
    fast = [outcome([body], "gemini") for body in bodies]
    monkeypatch.setattr(GeminiShortcuts, "_learn_shape", lambda self, chunk, data: None)
    assert [outcome([body], "gemini") for body in bodies] == fast


def test_gemini_held_usage_goes_out_before_a_snapshot_of_other_counts() -> None:
    # bug class: a held running snapshot replaced by one reporting other fields, losing it
    def usage_chunk(usage: dict[str, int], finish: str | None = None) -> bytes:
        candidate: dict[str, object] = {"content": {"parts": [{"text": "x"}], "role": "model"}}
        if finish:
            candidate["finishReason"] = finish
        return b"data: " + orjson.dumps({"candidates": [candidate], "usageMetadata": usage}) + (
            b"\n\n")

    body = (
        usage_chunk({"promptTokenCount": 10, "candidatesTokenCount": 1})
        + usage_chunk({"promptTokenCount": 10, "candidatesTokenCount": 50})
        + usage_chunk({"promptTokenCount": 10, "totalTokenCount": 60}, "STOP")
    )
    response = llm_rx.reassemble(body, "gemini")
    assert response.usage.output_tokens == 50
    assert response.usage.input_tokens == 10


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.text(max_size=10), min_size=1, max_size=10), spaced=st.booleans())
def test_gemini_span_shortcut_decodes_any_text_and_usage_exactly(
    texts: list[str], spaced: bool
) -> None:
    # bug class: a byte shortcut that mis-cuts a text holding quotes, backslashes or what
    # looks like the bytes around it, or that misreads the usage object
    import json

    from llm_rx.speed.gemini import GeminiShortcuts

    from ..helpers import outcome

    separators = (", ", ": ") if spaced else (",", ":")
    tricky = '"}], "role": "model"}, "index": 0}], "usageMetadata": {"x": 1}'

    def frame(i: int, text: str, finish: bool = False) -> bytes:
        candidate: dict[str, object] = {"content": {"parts": [{"text": text}], "role": "model"},
                                        "index": 0}
        if finish:
            candidate["finishReason"] = "STOP"
        chunk = {"candidates": [candidate],
                 "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": i,
                                   "promptTokensDetails": [{"modality": "TEXT",
                                                            "tokenCount": 3}]},
                 "modelVersion": "m"}
        return b"data: " + json.dumps(chunk, separators=separators).encode() + b"\n\n"

    all_texts = [*texts, tricky, "end"]
    body = b"".join(frame(i, t, i == len(all_texts) - 1) for i, t in enumerate(all_texts))
    response = llm_rx.reassemble(body, "gemini")
    assert response.text == "".join(all_texts)
    assert response.usage.output_tokens == len(all_texts) - 1
    fast = outcome([body], "gemini")
    original = GeminiShortcuts._learn_shape
    try:
        GeminiShortcuts._learn_shape = lambda self, chunk, data: None  # type: ignore[method-assign]
        slow = outcome([body], "gemini")
    finally:
        GeminiShortcuts._learn_shape = original  # type: ignore[method-assign]
    assert fast == slow


@pytest.mark.parametrize("at", [0, 1, 2])  # (a bad separator after the first, second element)
def test_gemini_array_error_frame_does_not_depend_on_chunking(at: int) -> None:
    # bug class: a broken array's error carrying the bytes the read happened to hold from the
    # bad byte on, so the same body cut otherwise gave another frame
    body = capture("gemini/json-array-multi-chunk.json").data
    where = [i for i in range(len(body)) if body.startswith(b"\n,", i)][at]
    bad = body[: where + 1] + b";" + body[where + 2 :]
    whole = outcome([bad], "gemini")
    assert whole[1] is WireFormatError
    assert isinstance(whole[3], str)
    assert whole[3].startswith(";\r\n{")
    for cut in range(0, len(bad), 53):
        assert outcome(split_at(bad, [cut]), "gemini") == whole, cut
        assert outcome(split_at(bad, [cut, cut + 1, cut + 7]), "gemini") == whole, cut


@pytest.mark.parametrize("candidates", [[5], ["x"], [{"content": 3}], {"a": 1}])
def test_gemini_array_chunk_of_another_shape_is_a_wire_format_error(candidates: Any) -> None:
    # bug class: the array form's elements decoded without the SSE form's net, so a chunk of
    # an unexpected shape escaped as AttributeError instead of a WireFormatError
    chunks = (chunk(text("Hi")), chunk(candidates=candidates), chunk(text("."), finish="STOP"))
    sse_form = outcome([as_sse(*chunks)], "gemini")
    array_form = outcome([as_array(*chunks)], "gemini")
    assert sse_form[1] is WireFormatError
    assert array_form[:3] == sse_form[:3]
    assert isinstance(array_form[3], str)
    assert orjson.loads(array_form[3]) == chunks[1]


# -- usage: the tool-use prompt is input (PITFALLS 45) -----------------------------------------


@pytest.mark.parametrize(
    "cap", [cap for cap in CAPTURES if cap.provider == "gemini"], ids=lambda cap: cap.name
)
def test_gemini_input_and_output_add_up_to_the_total(cap: Capture) -> None:
    usage = llm_rx.reassemble(cap.data, "gemini").usage
    native = usage.native or {}
    if "totalTokenCount" not in native:
        pytest.skip("no total on the wire")
    assert (usage.input_tokens or 0) + (usage.output_tokens or 0) == native["totalTokenCount"]


def test_gemini_tool_use_prompt_tokens_count_as_input() -> None:
    usage = llm_rx.reassemble(capture("gemini/sse-file-search.sse").data, "gemini").usage
    assert usage.native is not None
    assert usage.native["promptTokenCount"] == 15  # (the wire's, kept as it came)
    assert usage.native["toolUsePromptTokenCount"] == 770
    assert usage.input_tokens == 15 + 770
    assert usage.output_tokens == 37 + 742
