"""``to_native(response, "gemini")`` against google-genai and the recorded non-streamed bodies.

Every capture's reassembly must validate as ``google.genai.types.GenerateContentResponse``
(whose models forbid unknown fields) and say what the reassembled response says. A
``.nonstream.json`` counterpart is another generation of a comparable call: its *structure* is
compared (keys and JSON types at every level, parts compared by kind, the order of part kinds),
never its text. Each difference allowed is listed with its reason, checked where it can be.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

import orjson
import pytest
from anthropic.types import Message
from google.genai import types
from openai.types.chat import ChatCompletion

import llm_rx
from llm_rx.response import Response, ThinkingBlock
from tests.captures import CAPTURES, HERE, Capture, capture

GEMINI = [cap for cap in CAPTURES if cap.provider == "gemini"]
COUNTERPARTS = [cap for cap in GEMINI if cap.nonstream is not None]

# Fields the API sends that google-genai's models do not declare (yet): the SDK's own parser
# drops unknown fields before validating (``_common._remove_extra_fields``), so a body with
# them is what the SDK reads every day. Validation here removes exactly these, and only where
# the stream itself carried them.
SDK_LAGS = {
    ("usageMetadata", "serviceTier"): "sent by the API since 2026; not in google-genai 3.6",
}

# Part kinds where the two generations took another course (streamed, non-streamed, why);
# consecutive repeats are collapsed first (how many parts of one kind follow each other is the
# generation's, and a streamed signature arrives on a part of its own).
OTHER_COURSE: dict[str, tuple[list[str], list[str], str]] = {
    "gemini/sse-code-execution.sse": (
        ["executableCode", "codeExecutionResult", "text"],
        ["executableCode", "codeExecutionResult", "executableCode", "codeExecutionResult",
         "text"],
        "the non-streamed call (another prompt) ran code twice; the streamed one once",
    ),
}

# Enum numbers of the Gemini API, read off its proto here, independently of llm-rx's tables.
ENUM_NAMES = {
    "finishReason": {1: "STOP"},
    "category": {7: "HARM_CATEGORY_HARASSMENT", 8: "HARM_CATEGORY_HATE_SPEECH",
                 9: "HARM_CATEGORY_SEXUALLY_EXPLICIT", 10: "HARM_CATEGORY_DANGEROUS_CONTENT"},
    "probability": {1: "NEGLIGIBLE"},
    "modality": {1: "TEXT"},
}


@cache
def response(name: str) -> Response:
    return llm_rx.reassemble(capture(name).data, "gemini")


@cache
def chunks(name: str) -> tuple[Any, ...]:
    """The capture's chunks, read without llm-rx."""
    data = capture(name).data
    if data.lstrip()[:1] == b"[":
        return tuple(json.loads(data))
    lines = data.decode().replace("\r\n", "\n").split("\n")
    return tuple(json.loads(line[5:]) for line in lines if line.startswith("data:"))


def part_kind(part: dict[str, Any]) -> str:
    if "functionCall" in part:
        return "functionCall"
    if "text" in part:
        return "thought" if part.get("thought") else "text"
    return next(key for key in part if key not in ("thoughtSignature", "thought"))


def sdk(native: dict[str, Any], name: str) -> types.GenerateContentResponse:
    """The body as google-genai's type, after removing the listed fields it lags behind on."""
    body = copy.deepcopy(native)
    for (parent, field) in SDK_LAGS:
        if field in body.get(parent, {}):
            assert any(field in (c.get(parent) or {}) for c in chunks(name)), (parent, field)
            del body[parent][field]
    return types.GenerateContentResponse.model_validate(body)


# -- google-genai's type ---------------------------------------------------------------------


@pytest.mark.parametrize("cap", GEMINI, ids=lambda c: c.name)
def test_to_native_gemini_validates_as_generate_content_response(cap: Capture) -> None:
    resp = response(cap.name)
    native = llm_rx.to_native(resp, "gemini")
    parsed = sdk(native, cap.name)
    assert (parsed.model_version, parsed.response_id) == (resp.model, resp.id)
    if parsed.candidates is None:  # a blocked prompt: no candidate, its feedback kept
        assert resp.content == []
        assert parsed.prompt_feedback is not None
        assert resp.stop_reason == "content_filter"
        return
    parts = parsed.candidates[0].content.parts or []  # type: ignore[union-attr]
    assert "".join(p.text for p in parts if p.text and not p.thought) == resp.text
    thinking = "".join(b.text for b in resp.content if isinstance(b, ThinkingBlock))
    assert "".join(p.text for p in parts if p.text and p.thought) == thinking
    # (a call that came with no args goes back without: the SDK reads ``None``)
    calls = [(p.function_call.name, p.function_call.args if p.function_call.args is not None
              else {}) for p in parts if p.function_call]
    assert calls == [(c.name, c.arguments) for c in resp.tool_calls]
    usage = parsed.usage_metadata
    assert usage is not None
    # (the wire's counts, verbatim: the tool-use prompt is input, counted apart on the wire)
    assert (usage.prompt_token_count or 0) + (usage.tool_use_prompt_token_count or 0) == (
        resp.usage.input_tokens)
    assert usage.thoughts_token_count == resp.usage.reasoning_tokens
    finish = parsed.candidates[0].finish_reason
    assert finish is not None
    assert finish.value == {"end_turn": "STOP", "tool_use": "STOP"}[str(resp.stop_reason)]


@pytest.mark.parametrize("cap", GEMINI, ids=lambda c: c.name)
def test_to_native_gemini_signatures_byte_identical_on_their_parts(cap: Capture) -> None:
    wire = [
        (part_kind(part), part["thoughtSignature"])
        for c in chunks(cap.name) for cand in (c.get("candidates") or ())
        for part in (cand.get("content") or {}).get("parts", ()) if "thoughtSignature" in part
    ]
    native = llm_rx.to_native(response(cap.name), "gemini")
    ours = [
        (part_kind(part), part["thoughtSignature"])
        for cand in native.get("candidates", [])[:1]
        for part in cand["content"]["parts"] if "thoughtSignature" in part
    ]
    assert ours == wire


def test_to_native_gemini_sdk_lags_are_still_lags() -> None:
    # A listed field google-genai learns to declare must come off the list.
    for (parent, field) in SDK_LAGS:
        model = {"usageMetadata": types.GenerateContentResponseUsageMetadata}[parent]
        camel = {info.alias for info in model.model_fields.values()}
        assert field not in camel


# -- the recorded non-streamed bodies --------------------------------------------------------


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    return "number" if isinstance(value, int | float) else type(value).__name__


def shape_diffs(native: Any, body: Any, path: str = "") -> set[tuple[str, str]]:
    """(``missing`` | ``extra`` | ``type``, path) for every structural difference; parts are
    compared by kind, each kind by the keys of all its parts."""
    diffs: set[tuple[str, str]] = set()
    if isinstance(native, dict) and isinstance(body, dict):
        for key in body.keys() - native.keys():
            diffs.add(("missing", f"{path}.{key}".lstrip(".")))
        for key in native.keys() - body.keys():
            diffs.add(("extra", f"{path}.{key}".lstrip(".")))
        for key in native.keys() & body.keys():
            child = f"{path}.{key}".lstrip(".")
            if key == "parts":
                diffs |= _parts_diffs(native[key], body[key], child)
            else:
                diffs |= shape_diffs(native[key], body[key], child)
    elif isinstance(native, list) and isinstance(body, list):
        if native and body:
            diffs |= shape_diffs(native[0], body[0], f"{path}[]")
    elif native is not None and body is not None and _kind(native) != _kind(body):
        diffs.add(("type", path))
    return diffs


def _merged(parts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for part in parts:
        merged = out.setdefault(part_kind(part), {})
        for key, value in part.items():
            merged.setdefault(key, value)
    return out


def _parts_diffs(native: list[Any], body: list[Any], path: str) -> set[tuple[str, str]]:
    ours, theirs = _merged(native), _merged(body)
    diffs: set[tuple[str, str]] = set()
    for kind in ours.keys() & theirs.keys():
        diffs |= shape_diffs(ours[kind], theirs[kind], f"{path}[{kind}]")
    return diffs


def collapse(kinds: list[str]) -> list[str]:
    return [kind for n, kind in enumerate(kinds) if n == 0 or kinds[n - 1] != kind]


def nonstream_body(cap: Capture) -> dict[str, Any]:
    assert cap.nonstream is not None
    body: dict[str, Any] = json.loads(cap.nonstream.read_text())
    return body


def test_to_native_gemini_every_counterpart_is_compared() -> None:
    assert {cap.name for cap in COUNTERPARTS} == {
        "gemini/sse-code-execution.sse",
        "gemini/sse-gemini3-text-signature-empty-part.sse",
        "gemini/sse-google-search-grounding.sse",
        "gemini/sse-thought-parts.sse",
    }
    assert all(response(cap.name).complete for cap in COUNTERPARTS)


@pytest.mark.parametrize("cap", COUNTERPARTS, ids=lambda c: c.name)
def test_to_native_gemini_structure_matches_nonstream(cap: Capture) -> None:
    native = llm_rx.to_native(response(cap.name), "gemini")
    body = nonstream_body(cap)
    assert shape_diffs(native, body) == set()
    sdk(native, cap.name)
    types.GenerateContentResponse.model_validate(body)  # the counterpart is one, too


@pytest.mark.parametrize("cap", COUNTERPARTS, ids=lambda c: c.name)
def test_to_native_gemini_part_kinds_match_nonstream(cap: Capture) -> None:
    native = llm_rx.to_native(response(cap.name), "gemini")
    ours = collapse([part_kind(p) for p in native["candidates"][0]["content"]["parts"]])
    theirs = collapse(
        [part_kind(p) for p in nonstream_body(cap)["candidates"][0]["content"]["parts"]]
    )
    if cap.name in OTHER_COURSE:
        expected_ours, expected_theirs, _why = OTHER_COURSE[cap.name]
        assert (ours, theirs) == (expected_ours, expected_theirs)
    else:
        assert ours == theirs


def _named(node: Any, key: str = "") -> Any:
    if isinstance(node, dict):
        return {name: _named(value, name) for name, value in node.items()}
    if isinstance(node, list):
        return [_named(item, key) for item in node]
    return ENUM_NAMES[key][node] if key in ENUM_NAMES and isinstance(node, int) else node


@pytest.mark.parametrize("form", ["sse", "array"])
@pytest.mark.parametrize(
    "path", sorted(path for path in (HERE / "gemini").glob("*.nonstream.json")
                   if not path.name.startswith("error-")), ids=lambda p: p.name
)
def test_to_native_gemini_nonstream_body_replayed_as_one_chunk_gives_itself_back(
    path: Any, form: str
) -> None:
    # A non-streamed body is also a valid single chunk: reassembled, it must come back whole
    # (enums by name: the integer-encoded one comes back as google-genai reads it).
    body = json.loads(path.read_text())
    data = orjson.dumps(body)
    stream = b"[" + data + b"]" if form == "array" else b"data: " + data + b"\r\n\r\n"
    resp = llm_rx.reassemble(stream, "gemini")
    assert resp.complete
    native = llm_rx.to_native(resp, "gemini")
    assert native == _named(body)
    types.GenerateContentResponse.model_validate(native)


# -- re-encoding and the incomplete ----------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "openai/chat-parallel-tool-calls.sse",
        "anthropic/thinking-signature.sse",
        "anthropic/redacted-thinking.sse",
        "openrouter/claude-reasoning-text-signature.sse",
        "deepseek/chat-reasoning-content.sse",
    ],
)
def test_to_native_gemini_reencodes_another_providers_reply(name: str) -> None:
    resp = llm_rx.reassemble(capture(name).data)
    native = llm_rx.to_native(resp, "gemini")
    parsed = types.GenerateContentResponse.model_validate(native)
    assert parsed.candidates is not None
    parts = parsed.candidates[0].content.parts or []  # type: ignore[union-attr]
    assert "".join(p.text for p in parts if p.text and not p.thought) == resp.text
    # (a call that came with no args goes back without: the SDK reads ``None``)
    calls = [(p.function_call.name, p.function_call.args if p.function_call.args is not None
              else {}) for p in parts if p.function_call]
    assert calls == [(c.name, c.arguments) for c in resp.tool_calls]
    assert not any(p.thought_signature for p in parts)  # another provider's proof is no Gemini's
    usage = parsed.usage_metadata
    assert usage is not None
    # (the wire's counts, verbatim: the tool-use prompt is input, counted apart on the wire)
    assert (usage.prompt_token_count or 0) + (usage.tool_use_prompt_token_count or 0) == (
        resp.usage.input_tokens)
    assert (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0) == (
        resp.usage.output_tokens
    )
    assert parsed.model_version == resp.model


@pytest.mark.parametrize("cap", GEMINI, ids=lambda c: c.name)
def test_to_native_gemini_reply_reencoded_for_openai_and_anthropic(cap: Capture) -> None:
    resp = response(cap.name)
    chat = ChatCompletion.model_validate(llm_rx.to_native(resp, "openai-chat"))
    assert (chat.choices[0].message.content or "") == resp.text
    calls = chat.choices[0].message.tool_calls or []
    assert [(c.function.name, c.function.arguments) for c in calls] == [  # type: ignore[union-attr]
        (c.name, c.raw_arguments or "{}") for c in resp.tool_calls  # (no arguments: "{}")
    ]
    message = Message.model_validate(llm_rx.to_native(resp, "anthropic"))
    assert [b.type for b in message.content if b.type != "thinking"] == [
        {"text": "text", "tool_call": "tool_use"}[b.type]
        for b in resp.content if b.type in ("text", "tool_call")
    ]


def test_to_native_gemini_incomplete_reply_has_no_finish_reason() -> None:
    data = capture("gemini/sse-thought-parts.sse").data
    resp = llm_rx.reassemble(data[: len(data) // 2], "gemini")
    assert not resp.complete
    native = llm_rx.to_native(resp, "gemini")
    assert "finishReason" not in native["candidates"][0]
    types.GenerateContentResponse.model_validate(native)
