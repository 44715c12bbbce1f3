"""The real clients that judge the browser streams: the AI SDK's own ``readUIMessageStream``
(the ``ai`` npm package pinned in ``tests/js``, run by Node) and AG-UI's models with
``ag-ui-validate``."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from ag_ui.core import Event as AgUIEvent
from ag_ui_validate.transport import TransportOptions, validate_body
from pydantic import TypeAdapter

JS = Path(__file__).parent / "js"
_AG_UI = TypeAdapter(AgUIEvent)


def need_node() -> str:
    """The ``node`` to run the AI SDK with (``.ci/run`` installs it and runs ``npm ci``
    in ``tests/js``); elsewhere a test without it is skipped, saying why."""
    node = shutil.which("node")
    if node is None or not (JS / "node_modules" / "ai").is_dir():
        reason = "Node and tests/js/node_modules (npm ci in tests/js) are needed"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return node


def read_ui_streams(bodies: list[bytes]) -> list[dict[str, Any]]:
    """Each body read by the AI SDK's ``readUIMessageStream``: ``{"message": the last UI
    message, "errors": error chunks and schema failures, "chunks": the chunk types}``."""
    node = need_node()
    with tempfile.TemporaryDirectory() as folder:
        files = []
        for number, body in enumerate(bodies):
            path = Path(folder) / f"{number}.sse"
            path.write_bytes(body)
            files.append(str(path))
        done = subprocess.run([node, str(JS / "read_ui_stream.mjs"), *files],
                              capture_output=True, timeout=300, check=True)
    return [orjson.loads(line) for line in done.stdout.splitlines()]


def read_ui_endpoint(url: str) -> dict[str, Any]:
    """What ``useChat``'s own transport (``DefaultChatTransport``) reads from ``url`` when it
    posts a chat there, read as ``read_ui_streams`` reads a body."""
    node = need_node()
    done = subprocess.run([node, str(JS / "read_ui_stream.mjs"), url], capture_output=True,
                          timeout=120, check=True)
    read: dict[str, Any] = orjson.loads(done.stdout)
    return read


def ag_ui_events(body: bytes) -> list[dict[str, Any]]:
    """The body's events, each validated by ``ag-ui-protocol``'s models (and written back by
    them to the same JSON: nothing unknown, nothing lost)."""
    events = []
    for frame in body.split(b"\n\n"):
        if not frame:
            continue
        assert frame.startswith(b"data: "), frame
        data = orjson.loads(frame[6:])
        event = _AG_UI.validate_python(data)
        assert orjson.loads(event.model_dump_json(by_alias=True)) == data
        events.append(data)
    return events


def ag_ui_report(body: bytes, content_type: str | None = "text/event-stream") -> Any:
    """``ag-ui-validate``'s report on the body as a recorded SSE stream (framing included)."""

    async def chunks() -> AsyncIterator[bytes]:
        yield body

    result = asyncio.run(validate_body(chunks(), content_type, TransportOptions(recorded=True)))
    return result.report
