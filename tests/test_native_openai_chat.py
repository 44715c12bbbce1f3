"""``to_native(response, "openai-chat")`` of another provider's reply: what it means in chat
terms, in shapes ``ChatCompletion`` accepts."""

from __future__ import annotations

from openai.types.chat import ChatCompletion

import llm_rx
from tests.captures import capture


def test_to_native_openai_chat_call_without_arguments_is_an_empty_object() -> None:
    response = llm_rx.reassemble(capture("anthropic/tool-use-input-json-delta.sse").data)
    assert [call.raw_arguments for call in response.tool_calls] == ["", ""]
    body = llm_rx.to_native(response, "openai-chat")
    completion = ChatCompletion.model_validate(body)
    calls = completion.choices[0].message.tool_calls or []
    assert [call.function.arguments for call in calls] == ["{}", "{}"]  # type: ignore[union-attr]


def test_to_native_openai_chat_carries_anthropic_citations_as_url_citations() -> None:
    response = llm_rx.reassemble(capture("anthropic/web-search-citations.sse").data)
    completion = ChatCompletion.model_validate(llm_rx.to_native(response, "openai-chat"))
    annotations = completion.choices[0].message.annotations or []
    cited = [c["url"] for block in response.content if block.type == "text"
             for c in block.citations]
    assert [a.url_citation.url for a in annotations] == cited
    assert {a.type for a in annotations} == {"url_citation"}


def test_to_native_openai_chat_keeps_a_responses_custom_tool_custom() -> None:
    response = llm_rx.reassemble(capture("openai/responses-custom-tool.sse").data)
    completion = ChatCompletion.model_validate(llm_rx.to_native(response, "openai-chat"))
    call = (completion.choices[0].message.tool_calls or [])[0]
    assert call.type == "custom"
    assert (call.custom.name, call.custom.input) == (  # type: ignore[union-attr]
        "write_sql", response.tool_calls[0].raw_arguments)
