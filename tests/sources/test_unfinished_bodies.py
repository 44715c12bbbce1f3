"""A non-stream body that is not a finished reply, read by a streaming source, is the reply
``from_native`` reads: so far, not complete, ended by the error that says why (PITFALLS 50).

The streaming sources read a JSON body as its provider's stream (``wire/restream.py``); a
body whose status says it did not finish (a Responses ``queued``, ``in_progress``,
``cancelled`` or unknown status; an Anthropic, Bedrock or Cohere body without its stop
field) once came out of that re-framing with its terminal frame, so a streaming source read
a reply still running as a complete ``end_turn`` one. The bodies are the recorded ones of
``tests/test_native_unfinished.py``; the clients are httpx over a real loopback socket and
the openai SDK retrieving a background response.
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import httpx
import openai
import pytest

import llm_rx
from llm_rx import from_native
from llm_rx import operators as lxo
from llm_rx.events import MessageStop
from llm_rx.response import Response
from llm_rx.wire.restream import restream

from ..loopback import server
from ..test_native_unfinished import STOPS, UNFINISHED, _body, _drop

COHERE = {"id": "c1", "message": {"role": "assistant", "content": [{"type": "text", "text": "Hi"}]},
          "usage": {"billed_units": {"input_tokens": 3, "output_tokens": 1},
                    "tokens": {"input_tokens": 3, "output_tokens": 1}}}

#: id -> (provider, body, the path it is served on)
BODIES: dict[str, tuple[str, dict[str, Any], str]] = {
    **{f"responses-{name}": ("openai-responses", body, "/v1/responses/resp_1")
       for name, (body, _) in UNFINISHED.items()},
    **{f"{provider}-{'null' if null else 'missing'}": (
        provider, _drop(_body(STOPS[provider][0]), STOPS[provider][1], null),
        {"anthropic": "/v1/messages", "bedrock-converse": "/model/m/converse",
         "gemini": "/v1beta/models/m:generateContent", "ollama": "/api/generate"}[provider])
       for provider in sorted(STOPS) for null in (True, False)},
    "cohere-null": ("cohere", {**COHERE, "finish_reason": None}, "/v2/chat"),
}


def _dumped(reply: Response) -> dict[str, Any]:
    return reply.model_dump(mode="json")


def _outcome(events: Any) -> Response:
    reply: Response = events.pipe(lxo.to_response()).run()
    return reply


@pytest.mark.parametrize("name", sorted(set(BODIES) - {"responses-failed"}))
def test_restream_of_a_body_not_finished_has_no_end(name: str) -> None:
    # (a failed body ends: with response.failed, the provider's error)
    provider, body, _ = BODIES[name]
    stream = restream(copy.deepcopy(body), provider)
    decoder = llm_rx.make_decoder(provider)  # type: ignore[arg-type]
    events = decoder.decode(stream)
    with pytest.raises(llm_rx.IncompleteStreamError) as cut:  # (read alone: a cut reply)
        decoder.flush()
    assert not any(isinstance(event, MessageStop) for event in [*events, *cut.value.events])


@pytest.mark.parametrize("sniffed", [False, True], ids=["told", "sniffed"])
@pytest.mark.parametrize("name", sorted(BODIES))
def test_from_bytes_of_a_body_not_finished_is_from_natives_reply(name: str, sniffed: bool
                                                                  ) -> None:
    provider, body, _ = BODIES[name]
    native = from_native(copy.deepcopy(body), provider)  # type: ignore[arg-type]
    assert not native.complete
    data = json.dumps(body).encode()
    read = _outcome(llm_rx.from_bytes(data, provider=None if sniffed else provider))
    assert _dumped(read) == _dumped(native)


async def _async_read(url: str, provider: str) -> Response:
    async with httpx.AsyncClient() as client:
        response = await client.send(client.build_request("GET", url), stream=True)
        reply: Response = await llm_rx.from_httpx(
            response, provider=provider).pipe(lxo.to_response())  # type: ignore[arg-type]
        return reply


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("name", sorted(BODIES))
def test_from_httpx_of_a_body_not_finished_is_from_natives_reply(name: str, mode: str) -> None:
    # (a failed body and a cut Gemini or Ollama body too: the events before the error were
    # decoded into a list the error then dropped, so the reply so far never came out)
    provider, body, path = BODIES[name]
    native = from_native(copy.deepcopy(body), provider)  # type: ignore[arg-type]
    with server(json.dumps(body).encode(), "application/json", chunk=61) as running:
        if mode == "async":
            read = asyncio.run(_async_read(running.url + path, provider))
        else:
            with httpx.Client() as client:
                request = client.build_request("GET", running.url + path)
                response = client.send(request, stream=True)
                read = _outcome(llm_rx.from_httpx(response, provider=provider))  # type: ignore[arg-type]
    assert _dumped(read) == _dumped(native)
    assert not read.complete


@pytest.mark.parametrize("name", ["recorded-queued", "recorded-in-progress", "cancelled",
                                  "failed"])
def test_openai_sdk_retrieving_a_background_response_reads_as_not_finished(name: str) -> None:
    body, kind = UNFINISHED[name]

    async def main(url: str) -> Response:
        async with openai.AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=0) as sdk:
            raw = await sdk.responses.with_raw_response.retrieve(body["id"])
            assert raw.parse().status == body["status"]  # (the SDK reads the body as it is)
            reply: Response = await llm_rx.from_httpx(raw.http_response).pipe(
                lxo.to_response())
            return reply

    with server(json.dumps(body).encode(), "application/json") as running:
        read = asyncio.run(main(running.url))
    assert not read.complete
    assert read.error is not None
    assert read.error.kind == kind
    assert _dumped(read) == _dumped(from_native(copy.deepcopy(body), "openai-responses"))


@pytest.mark.parametrize("name", ["responses-recorded-queued", "responses-cancelled",
                                  "anthropic-missing", "bedrock-converse-null"])
def test_translate_of_a_body_not_finished_writes_no_end(name: str) -> None:
    # (translate reads a body by the same rule: into another wire it is a cut reply, which
    # gets no terminal frame there either)
    provider, body, _ = BODIES[name]
    out = llm_rx.translate(json.dumps(body).encode(), "anthropic", provider)  # type: ignore[arg-type]
    assert b"message_stop" not in out
    assert b'"stop_reason":"end_turn"' not in out
