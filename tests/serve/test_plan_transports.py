"""The two transports of one plan, each driven without a server (an ASGI ``send`` and a
socket that only record what they are given): each sends exactly the plan's ``Send`` steps,
ends as the plan says, and for the same request on ``/v1/responses`` the HTTP body carries
the events the socket sends as messages."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, cast

import pytest
from starlette.websockets import WebSocket

from llm_rx.serve import CaptureIndex, Stats
from llm_rx.serve._faults import parse_fault
from llm_rx.serve._media import HttpBody, Pacing, SocketMessages
from llm_rx.serve._plan import Ask, Cut, End, Open, Send, Step, plan
from llm_rx.serve._replies import Emulator
from llm_rx.serve._stream import ReplayResponse
from llm_rx.serve._websocket import _respond
from tests.captures import HERE, capture

from .test_plan import FRAMING, RESPONSES, _events, _model

SOCKET = SocketMessages(FRAMING)


class _Socket:
    """What a WebSocket transport did: its text messages and its close."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.closed: tuple[int, str | None] | None = None

    async def send_text(self, data: str) -> None:
        self.messages.append(data)

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        self.closed = (code, reason)


async def _over_http(steps: Iterable[Step]) -> tuple[list[dict[str, Any]], Stats]:
    """The ASGI messages a ``ReplayResponse`` sends for ``steps`` (the client stays)."""
    steps = iter(steps)
    opened = next(steps)
    assert isinstance(opened, Open)
    stats = Stats()
    response = ReplayResponse(opened, steps, stats=stats, live=set())
    sent: list[dict[str, Any]] = []
    stays = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await stays.wait()
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    await response({"type": "http"}, receive, send)
    return sent, stats


async def _over_socket(steps: Iterable[Step]) -> tuple[_Socket, str]:
    socket = _Socket()
    ending = await _respond(cast(WebSocket, socket), FRAMING, iter(steps), asyncio.Event())
    return socket, ending


@pytest.fixture(scope="module")
def emulator() -> Emulator:
    return Emulator(CaptureIndex.load([HERE]), Pacing())


CASES = [("anthropic/text-basic.sse", ""), ("openai/responses-basic-llm.sse", ""),
         ("anthropic/text-basic.sse", "drop-after=2000"),
         ("anthropic/text-basic.sse", "error-after=2000"),
         ("gemini/sse-function-call-gemini2.sse", "stall-after=1500,stall=0")]


@pytest.mark.parametrize(("name", "fault"), CASES)
def test_each_transport_sends_the_plan_s_bytes_and_the_same_events(
    emulator: Emulator, name: str, fault: str
) -> None:
    ask = Ask(RESPONSES, {"model": _model(capture(name)), "stream": True}, parse_fault(fault))
    body_plan, socket_plan = list(plan(ask, emulator, HttpBody(read_size=512))), list(
        plan(ask, emulator, SOCKET))
    sent, stats = asyncio.run(_over_http(body_plan))
    socket, ending = asyncio.run(_over_socket(socket_plan))

    assert sent[0]["type"] == "http.response.start"
    chunks = [message["body"] for message in sent[1:] if message["body"]]
    assert chunks == [step.data for step in body_plan if isinstance(step, Send)]
    assert socket.messages == [step.data.decode() for step in socket_plan
                               if isinstance(step, Send)]
    if not fault.startswith("drop"):  # (a drop counts bytes of the body, or of whole events)
        assert [m.encode() for m in socket.messages] == _events(b"".join(chunks))

    finished = sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    assert finished == (body_plan[-1] == End())
    assert stats.snapshot() == {"completed" if finished else "dropped": 1}
    assert ending == ("completed" if socket_plan[-1] == End() else "dropped")
    last = socket_plan[-1]
    assert socket.closed == ((1011, last.reason) if isinstance(last, Cut) else None)


def test_a_drop_cuts_both_transports(emulator: Emulator) -> None:
    ask = Ask(RESPONSES, {"model": "anthropic__text-basic", "stream": True},
              parse_fault("drop-after=2000"))
    sent, stats = asyncio.run(_over_http(plan(ask, emulator, HttpBody())))
    socket, ending = asyncio.run(_over_socket(plan(ask, emulator, SOCKET)))
    assert sum(len(message["body"]) for message in sent[1:]) == 2000
    assert sent[-1]["more_body"] is True  # (no end of the body: the server cuts the socket)
    assert stats["dropped"] == 1
    assert ending == "dropped"
    assert socket.closed == (1011, "fault injected: drop-after=2000")
    assert 0 < sum(len(m.encode()) for m in socket.messages) <= 2000
