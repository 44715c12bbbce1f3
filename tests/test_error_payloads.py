"""The payloads an error carries are declared on its class: ``LlmRxError.events`` (the events
decoded before it) and ``WireFormatError.frames`` (the frames its framer completed before
it); nothing in the package sets an attribute an exception class does not declare."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import llm_rx
from llm_rx import errors
from llm_rx.errors import FrameTooLargeError, LlmRxError, WireFormatError
from llm_rx.wire.registry import make_decoder
from llm_rx.wire.sse import SSEDecoder

from .captures import capture
from .helpers import decode_events, kinds

PACKAGE = Path(llm_rx.__file__).parent


def test_error_payloads_are_declared_with_empty_defaults() -> None:
    assert LlmRxError("x").events == ()
    assert WireFormatError("x").frames == []
    assert FrameTooLargeError("x").frames == []
    assert "events" in LlmRxError.__annotations__
    assert "frames" in WireFormatError.__annotations__


def test_error_events_are_the_events_decoded_before_it() -> None:
    # bug class: the events before an error carried in an attribute nobody declared (set
    # with setattr, read with getattr): a contract a reader cannot see, or type-check
    body = capture("openai/chat-text-basic.sse").data
    frames = body.split(b"\n\n")
    good = b"\n\n".join(frames[:5]) + b"\n\n"
    with pytest.raises(LlmRxError) as raised:
        make_decoder("openai-chat").decode(good + b"data: {not json}\n\n")
    before, _ = decode_events([good], "openai-chat")
    assert isinstance(raised.value.events, tuple)
    assert kinds(raised.value.events) == kinds(before) != []


def test_frame_too_large_keeps_the_frames_completed_before_it() -> None:
    framer = SSEDecoder(max_frame=64)
    with pytest.raises(FrameTooLargeError) as raised:
        framer.decode(b"data: 1\n\ndata: 2\n\ndata: " + b"x" * 200)
    assert [event.data for event in raised.value.frames] == [b"1", b"2"]


def _declared() -> set[str]:
    """Every attribute the exception classes declare (class annotations, ``self.x = ``)."""
    names = {"__cause__", "__context__", "__traceback__", "__suppress_context__"}
    tree = ast.parse(Path(errors.__file__).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id == "self"):
                    names.add(target.attr)
    return names


def test_no_exception_gets_an_undeclared_attribute() -> None:
    # bug class: an attribute set on an exception (``error.events = ...  # type: ignore``)
    # that its class does not declare
    declared = _declared()
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        caught = {node.name for node in ast.walk(tree)
                  if isinstance(node, ast.ExceptHandler) and node.name}
        errorish = caught | {"error", "failure"}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id in errorish and target.attr not in declared):
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} "
                                 f"{target.value.id}.{target.attr}")
        text = path.read_text()
        assert "setattr(error" not in text, path
        assert not re.search(r'getattr\(\w+, "(events|frames)"', text), path  # (declared)
    assert found == []
