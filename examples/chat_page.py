"""A web page that shows a model's reply live, from any provider, in the AI SDK's UI message
stream or in AG-UI.

The page (``chat_page.html``: plain JavaScript, no build step) posts a prompt to ``/api/chat``;
the app asks an OpenAI-compatible upstream (OpenAI, vLLM, Ollama's ``/v1``, ``llm-rx serve``)
and streams its reply back as ``vercel-ui`` (what the AI SDK's ``useChat`` reads) or
``ag-ui`` (what an AG-UI client reads), translated live by llm-rx; the page renders the text,
the reasoning and the tool calls as they arrive, as text (never as markup). Run it against
the emulator::

    llm-rx serve --port 8000 &
    UPSTREAM=http://127.0.0.1:8000/v1 uvicorn examples.chat_page:app --port 9000

and open ``http://127.0.0.1:9000/?model=openai__chat-text-basic`` (``&protocol=ag-ui`` for
AG-UI, ``&smooth=word`` for text that appears word by word at a steady pace; with the
emulator, the model names the recorded reply to serve). ``/api/chat`` also takes what a
real client posts: point ``useChat``'s ``DefaultChatTransport`` or an AG-UI ``HttpAgent`` at
``/api/chat?model=...&protocol=...``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from reactivex.scheduler.eventloop import AsyncIOScheduler
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

import llm_rx
from llm_rx import operators as lxo
from llm_rx import sinks as lxs

UPSTREAM = os.environ.get("UPSTREAM", "http://127.0.0.1:8000/v1")
API_KEY = os.environ.get("UPSTREAM_API_KEY", "none")
PAGE = Path(__file__).with_name("chat_page.html")
PROTOCOLS = ("vercel-ui", "ag-ui")


async def page(request: Request) -> Response:
    return HTMLResponse(PAGE.read_text(encoding="utf-8"))


def _prompt(body: dict[str, Any]) -> str:
    """The prompt: the page's own ``prompt``, or the last user message's text of what a real
    client posts (``useChat``'s UI messages with ``parts``, AG-UI's ``RunAgentInput``)."""
    if isinstance(body.get("prompt"), str):
        return str(body["prompt"])
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return "".join(part.get("text", "") for part in message.get("parts") or ()
                           if isinstance(part, dict) and part.get("type") == "text")
    return ""


async def chat(request: Request) -> Response:
    body: dict[str, Any] = await request.json()
    for name in ("model", "protocol", "smooth"):  # (a real client names them in the URL)
        body.setdefault(name, request.query_params.get(name))
    protocol = body.get("protocol") or "vercel-ui"
    if protocol not in PROTOCOLS:
        return JSONResponse({"error": f"protocol is one of {', '.join(PROTOCOLS)}"}, 400)
    client: httpx.AsyncClient = request.app.state.client
    upstream = await client.send(client.build_request(
        "POST", f"{request.app.state.upstream}/chat/completions",
        json={"model": body.get("model"), "stream": True,
              "stream_options": {"include_usage": True},
              "messages": [{"role": "user", "content": _prompt(body)}]},
        headers={"authorization": f"Bearer {API_KEY}"}), stream=True)
    if upstream.status_code >= 400:
        data = await upstream.aread()
        await upstream.aclose()
        return JSONResponse({"error": data.decode("utf-8", "replace")}, upstream.status_code)
    events = llm_rx.from_httpx(upstream, provider="openai-chat")
    if body.get("smooth") in ("word", "line"):  # (one chunk per 10 ms at most, paced on
        # this loop: no timer thread per chunk and client)
        events = events.pipe(lxo.smooth(body["smooth"], delay=0.01,
                                        scheduler=AsyncIOScheduler(asyncio.get_running_loop())))
    # (the browser leaving disposes the events, which closes the upstream response)
    return lxs.sse_response(events, protocol, background=BackgroundTask(upstream.aclose))


def create_app(upstream: str = UPSTREAM) -> Starlette:
    """The page and its ``/api/chat`` in front of the OpenAI-compatible API at ``upstream``."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with httpx.AsyncClient(timeout=httpx.Timeout(60.0, read=None)) as client:
            app.state.client = client
            yield

    app = Starlette(routes=[Route("/", page), Route("/api/chat", chat, methods=["POST"])],
                    lifespan=lifespan)
    app.state.upstream = upstream
    return app


app = create_app()
