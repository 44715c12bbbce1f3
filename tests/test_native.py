"""``to_native`` against the recorded non-streamed bodies: the same shape, field by field.

A ``.nonstream.json`` counterpart is another generation of a comparable call, so its text is
never compared; its *structure* is: the same keys at every level (top, choice, message, usage,
host extras, each content-block type), the same JSON types (a ``null`` on either side is a
value the other generation did not have), and the same content-block types in order.

Every difference has to be listed below with the reason it is legitimate, and the reason is
checked against the stream where it can be: a field the body has and ``to_native`` lacks is
legitimate only if the stream never carries it; a field ``to_native`` has and the body lacks,
only if the stream carried it. A listed difference that no longer occurs fails too.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from anthropic.types import Message
from openai.types.chat import ChatCompletionMessage
from openai.types.chat.chat_completion import Choice

import llm_rx
from tests.captures import CAPTURES, Capture, capture
from tests.test_contract_sdk import frames, params, response

NEVER_STREAMED = "the stream never carries this field, so no reassembly can know it"
STREAMED = "the stream carried it; this other generation's body happens not to have it"
NULL_DEFAULT = (
    "the stream never says; to_native gives the SDK type's default null (this host's body "
    "leaves the field out)"
)
# The SDK type declaring each field to_native may default to null.
NULL_DEFAULT_TYPES: dict[str, type[Any]] = {
    "stop_details": Message,
    "choices[].message.refusal": ChatCompletionMessage,
    "choices[].logprobs": Choice,
}
TYPE_REQUIRES = (
    "openai's ChatCompletion requires tool_calls[].type (a tagged union); Mistral's body "
    "omits it and so does its stream"
)
GROQ_USAGE = (
    "Groq streams report usage inside x_groq, kept there as the host extra it came in; "
    "to_native also gives it at the top level, where the non-stream body has it"
)

LEGITIMATE: dict[str, dict[tuple[str, str], str]] = {
    # Messages recorded before the API had stop_details: neither stream nor body has it.
    "anthropic/redacted-thinking.sse": {("extra", "stop_details"): NULL_DEFAULT},
    "anthropic/text-claude3-opus-langchaingo.sse": {("extra", "stop_details"): NULL_DEFAULT},
    "anthropic/text-vercel.sse": {("extra", "stop_details"): NULL_DEFAULT},
    "anthropic/thinking-signature.sse": {("extra", "stop_details"): NULL_DEFAULT},
    "anthropic/web-search-citations.sse": {
        ("extra", "stop_details"): NULL_DEFAULT,
        ("missing", "usage.server_tool_use.web_fetch_requests"): NEVER_STREAMED,
    },
    "groq/tool-call-single-chunk.sse": {
        ("extra", "choices[].message.content"): STREAMED,
        ("extra", "choices[].message.refusal"): NULL_DEFAULT,
        ("extra", "x_groq.usage"): GROQ_USAGE,
        ("missing", "service_tier"): NEVER_STREAMED,
        ("missing", "usage_breakdown"): NEVER_STREAMED,
    },
    "groq/web-search-executed-tools.sse": {
        ("extra", "choices[].message.refusal"): NULL_DEFAULT,
        ("extra", "x_groq.usage"): GROQ_USAGE,
        ("extra", "system_fingerprint"): STREAMED,
        ("extra", "x_groq.usage_breakdown"): STREAMED,
        ("missing", "service_tier"): NEVER_STREAMED,
        ("missing", "x_groq.id"): NEVER_STREAMED,
    },
    "mistral/tool-call.sse": {
        ("extra", "choices[].logprobs"): STREAMED,
        ("extra", "choices[].message.content"): STREAMED,
        ("extra", "choices[].message.refusal"): NULL_DEFAULT,
        ("extra", "choices[].message.tool_calls[].type"): TYPE_REQUIRES,
    },
    "openai/chat-gpt41-nano-text.sse": {
        ("missing", "choices[].message.annotations"): NEVER_STREAMED,
    },
    "openai/chat-text-langchaingo.sse": {
        ("missing", "choices[].message.annotations"): NEVER_STREAMED,
    },
    "openai/chat-text-obfuscation.sse": {
        ("missing", "choices[].message.annotations"): NEVER_STREAMED,
    },
    "openrouter/web-search-annotations.sse": {
        ("missing", "choices[].message.reasoning"): NEVER_STREAMED,
        ("missing", "system_fingerprint"): NEVER_STREAMED,
    },
    "xai/chat-reasoning-tool-call.sse": {
        ("extra", "choices[].logprobs"): NULL_DEFAULT,
    },
}

# Content-block types where the two generations took another course: (streamed reply,
# non-streamed reply, why). Everything else must match in order. Consecutive repeats are
# collapsed first: how many blocks of one kind follow each other (two redacted_thinking
# blocks against one) is the generation's; their order and kinds are the shape.
OTHER_COURSE: dict[str, tuple[list[str], list[str], str]] = {
    "anthropic/code-execution-bash.sse": (
        ["thinking", "text", "server_tool_use", "bash_code_execution_tool_result", "text"],
        ["thinking", "server_tool_use", "bash_code_execution_tool_result", "text"],
        "the streamed reply says a sentence before it runs the tool; the non-streamed does not",
    ),
    "anthropic/web-search-citations.sse": (
        ["server_tool_use", "web_search_tool_result", "text", "server_tool_use",
         "web_search_tool_result", "text"],
        ["thinking", "server_tool_use", "web_search_tool_result", "text"],
        "the non-streamed call thought first and searched once; the streamed one searched twice",
    ),
}


def _walk(node: Any, path: str, out: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            child = f"{path}.{key}" if path else key
            out.add(child)
            _walk(value, child, out)
    elif isinstance(node, list):
        for item in node:
            _walk(item, f"{path}[]", out)


@cache
def streamed_paths(name: str) -> frozenset[str]:
    """Every field path the stream carried, spelled as in the non-stream body."""
    out: set[str] = set()
    provider = capture(name).provider
    for frame in frames(name):
        data = frame.data
        if provider == "openai-chat":
            _walk({k: v for k, v in data.items() if k != "choices"}, "", out)
            for choice in data.get("choices") or ():
                _walk({k: v for k, v in choice.items() if k != "delta"}, "choices[]", out)
                _walk(choice.get("delta") or {}, "choices[].message", out)
            continue
        kind = data.get("type")
        if kind == "message_start":
            _walk(data["message"], "", out)
        elif kind == "message_delta":
            _walk(data.get("delta") or {}, "", out)
            _walk({k: v for k, v in data.items() if k not in ("type", "delta")}, "", out)
        elif kind == "content_block_start":
            block = data["content_block"]
            _walk(block, f"content[{block['type']}]", out)
    return frozenset(out)


def _kind(value: Any) -> str:
    return "number" if isinstance(value, int | float) and not isinstance(value, bool) else (
        type(value).__name__
    )


def shape_diffs(native: Any, body: Any, path: str = "") -> set[tuple[str, str]]:
    """(``missing`` | ``extra`` | ``type``, path) for every structural difference."""
    diffs: set[tuple[str, str]] = set()
    if isinstance(native, dict) and isinstance(body, dict):
        for key in body.keys() - native.keys():
            diffs.add(("missing", f"{path}.{key}" if path else key))
        for key in native.keys() - body.keys():
            diffs.add(("extra", f"{path}.{key}" if path else key))
        for key in native.keys() & body.keys():
            if not path and key == "content" and isinstance(body[key], list):
                diffs |= _block_diffs(native[key], body[key])
            else:
                diffs |= shape_diffs(native[key], body[key], f"{path}.{key}" if path else key)
    elif isinstance(native, list) and isinstance(body, list):
        if native and body:  # the items' shape; how many is up to the generation
            diffs |= shape_diffs(native[0], body[0], f"{path}[]")
    elif native is not None and body is not None and _kind(native) != _kind(body):
        diffs.add(("type", path))
    return diffs


def _block_diffs(native: list[Any], body: list[Any]) -> set[tuple[str, str]]:
    """Anthropic content: the keys of the first block of each type present on both sides."""
    diffs: set[tuple[str, str]] = set()
    ours = {block["type"]: block for block in reversed(native)}
    theirs = {block["type"]: block for block in reversed(body)}
    for kind in ours.keys() & theirs.keys():
        diffs |= shape_diffs(ours[kind], theirs[kind], f"content[{kind}]")
    return diffs


def _at(body: Any, path: str) -> Any:
    """The value at ``path`` (first item of each list)."""
    node = body
    for key in path.split("."):
        name = key.removesuffix("[]")
        node = node[name]
        if key.endswith("[]"):
            node = node[0]
    return node


def _where(path: str, streamed: frozenset[str]) -> str:
    """Where the stream carried the field a difference is about, if it did."""
    if path in streamed:
        return " (the stream carried it)"
    name = path.rsplit(".", 1)[-1]
    elsewhere = sorted(p for p in streamed if p.endswith(f".{name}") and "[]" not in p)
    return f" (the stream carried it as {elsewhere[0]})" if elsewhere else ""


def collapse(types: list[str]) -> list[str]:
    return [kind for n, kind in enumerate(types) if n == 0 or types[n - 1] != kind]


def nonstream_body(cap: Capture) -> dict[str, Any]:
    assert cap.nonstream is not None
    body: dict[str, Any] = json.loads(cap.nonstream.read_text())
    return body


# Wires the SSE reader above cannot read have their counterparts compared in their own file
# (tests/test_native_ollama_bedrock.py: NDJSON and the binary AWS event stream;
# tests/test_native_gemini.py: Gemini's JSON-array form, and its parts compared by kind;
# tests/test_native_responses.py: Responses output items compared by type).
OWN_FILE = {"bedrock-converse", "gemini", "ollama", "openai-responses"}
COUNTERPARTS = [
    cap for cap in CAPTURES
    if cap.nonstream is not None and cap.provider not in OWN_FILE and response(cap.name).complete
]


def test_to_native_every_nonstream_counterpart_is_compared() -> None:
    # The one left out is an HTTP 400 error body, the counterpart of a stream that failed the
    # same way (checked in test_contract_sdk.py); there is no message to compare.
    with_body = {
        cap.name for cap in CAPTURES if cap.nonstream is not None and cap.provider not in OWN_FILE
    }
    assert with_body - {cap.name for cap in COUNTERPARTS} == {
        "groq/error-event-tool-use-failed.sse"
    }
    assert len(COUNTERPARTS) >= 15


@pytest.mark.parametrize("cap", params(COUNTERPARTS))
def test_to_native_structure_matches_nonstream(cap: Capture) -> None:
    native = llm_rx.to_native(response(cap.name), cap.provider)
    diffs = shape_diffs(native, nonstream_body(cap))
    legitimate = LEGITIMATE.get(cap.name, {})
    streamed = streamed_paths(cap.name)
    for (kind, path), reason in legitimate.items():
        if reason == NEVER_STREAMED:
            assert kind == "missing"
            assert path not in streamed, f"{path} is on the wire: to_native should keep it"
        elif reason == STREAMED:
            assert kind == "extra"
            assert path in streamed, f"{path} never streamed: to_native invented it"
        elif reason == NULL_DEFAULT:
            assert kind == "extra"
            assert path not in streamed, f"{path} is on the wire: give back what it said"
            assert _at(native, path) is None
            assert path.rsplit(".", 1)[-1] in NULL_DEFAULT_TYPES[path].model_fields
        elif reason == GROQ_USAGE:
            assert path in streamed
            assert native["usage"] == native["x_groq"]["usage"]
    unexplained = {
        f"{kind} {path}{_where(path, streamed)}" for kind, path in diffs - legitimate.keys()
    }
    stale = {f"{kind} {path}" for kind, path in legitimate.keys() - diffs}
    assert not unexplained, sorted(unexplained)
    assert not stale, sorted(stale)


@pytest.mark.parametrize(
    "cap", params([cap for cap in COUNTERPARTS if cap.provider == "anthropic"])
)
def test_to_native_block_types_match_nonstream(cap: Capture) -> None:
    native = llm_rx.to_native(response(cap.name), cap.provider)
    ours = collapse([block["type"] for block in native["content"]])
    theirs = collapse([block["type"] for block in nonstream_body(cap)["content"]])
    if cap.name in OTHER_COURSE:
        expected_ours, expected_theirs, _why = OTHER_COURSE[cap.name]
        assert (ours, theirs) == (expected_ours, expected_theirs)
    else:
        assert ours == theirs


@pytest.mark.parametrize(
    "cap", params([cap for cap in CAPTURES if cap.provider == "openai-chat"
                   and response(cap.name).complete])
)
def test_to_native_openai_chat_indexed_items_once(cap: Capture) -> None:
    # Entries a host keys by `index` (Groq's executed_tools, OpenRouter's reasoning_details) are
    # one entry per index in a non-stream body, however many deltas repeated them.
    native = llm_rx.to_native(response(cap.name), cap.provider)
    for choice in native["choices"]:
        for key, value in choice["message"].items():
            if isinstance(value, list) and value and all(
                isinstance(item, dict) and "index" in item for item in value
            ):
                indexes = [item["index"] for item in value]
                assert len(indexes) == len(set(indexes)), (key, indexes)
