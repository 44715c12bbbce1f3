"""An Anthropic-compatible ``/v1/messages`` endpoint in front of an OpenAI-compatible model.

The Anthropic SDK (or Claude Code) talks to this app; the app asks an OpenAI-compatible
upstream (OpenAI, vLLM, Ollama's ``/v1``, OpenRouter, ...) and streams its reply back as an
Anthropic ``messages`` stream, translated live by llm-rx. The request translation here is
minimal (text turns and a system prompt); the response stream is the point: ``message_start``
first, tool calls with their ids, names and arguments, the real usage in ``message_delta``,
a cut upstream sent on as a cut stream, and the upstream request closed when the client goes
away. Run it with::

    UPSTREAM=http://127.0.0.1:8000/v1 uvicorn examples.anthropic_gateway:app --port 9000

and point a client at it: ``anthropic.Anthropic(base_url="http://127.0.0.1:9000")``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

import llm_rx
from llm_rx import sinks as lxs

UPSTREAM = os.environ.get("UPSTREAM", "http://127.0.0.1:8000/v1")
API_KEY = os.environ.get("UPSTREAM_API_KEY", "none")


def _text(content: Any) -> str:
    """A turn's text: a string, or the text of its content blocks."""
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content or ()
                   if isinstance(block, dict) and block.get("type") == "text")


def chat_request(body: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI chat request for an Anthropic ``messages`` request (text only)."""
    messages = [{"role": "system", "content": _text(body["system"])}] if body.get("system") else []
    messages += [{"role": turn["role"], "content": _text(turn.get("content"))}
                 for turn in body.get("messages", ())]
    return {"model": body.get("model"), "messages": messages,
            "max_tokens": body.get("max_tokens"), "stream": bool(body.get("stream")),
            "stream_options": {"include_usage": True} if body.get("stream") else None}


async def messages(request: Request) -> Response:
    body = await request.json()
    client: httpx.AsyncClient = request.app.state.client
    upstream = await client.send(client.build_request(
        "POST", f"{request.app.state.upstream}/chat/completions", json=chat_request(body),
        headers={"authorization": f"Bearer {API_KEY}"}), stream=True)
    if upstream.status_code >= 400 or not body.get("stream"):
        data = await upstream.aread()
        await upstream.aclose()
        if upstream.status_code >= 400:
            error = {"type": "api_error", "message": data.decode("utf-8", "replace")}
            return JSONResponse({"type": "error", "error": error}, upstream.status_code)
        reply = llm_rx.from_native(data, "openai-chat")
        return JSONResponse(llm_rx.to_native(reply, "anthropic"))
    events = llm_rx.from_httpx(upstream, provider="openai-chat")
    # (disposing the events closes the upstream response; the task closes it after the end)
    return lxs.sse_response(events, "anthropic", background=BackgroundTask(upstream.aclose))


def create_app(upstream: str = UPSTREAM) -> Starlette:
    """The gateway in front of the OpenAI-compatible API at ``upstream`` (its ``/v1``)."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with httpx.AsyncClient(timeout=httpx.Timeout(60.0, read=None)) as client:
            app.state.client = client
            yield

    app = Starlette(routes=[Route("/v1/messages", messages, methods=["POST"])],
                    lifespan=lifespan)
    app.state.upstream = upstream
    return app


app = create_app()
