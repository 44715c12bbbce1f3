"""What an SDK's reply says, next to what ``llm_rx.reassemble(file)`` says, field by field.

Each SDK test turns the SDK's own result into a ``Reply``; ``assert_same`` compares it with
the reassembly of the same capture. A field an SDK is known to get wrong is named, with the
reason, in the test's ``KNOWN`` table for that capture; the fields that differ must be
exactly those (so a fixed SDK, or a new difference, fails the test).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import pytest

import llm_rx
from tests.captures import Capture


@dataclass(frozen=True)
class Reply:
    text: str
    tool_calls: list[tuple[str | None, str, Any]]  # id (None: the SDK has none), name, arguments
    stop_reason: str | None
    usage: tuple[int | None, int | None]  # input (all prompt tokens), output (all generated)


def model_of(cap: Capture) -> str:
    """The capture's id, which the request names as its model."""
    return cap.name.rsplit(".", 1)[0].replace("/", "__")


def reassembled(cap: Capture) -> llm_rx.Response:
    return llm_rx.reassemble(cap.path, cap.provider)


def reply_of(response: llm_rx.Response, *, ids: bool = True) -> Reply:
    # (a custom tool's input is free text: the raw string is its value)
    calls = [(call.id if ids else None, call.name,
              call.raw_arguments if call.arguments is None else call.arguments)
             for call in response.tool_calls]
    usage = response.usage
    return Reply(response.text, calls, response.stop_reason,
                 (usage.input_tokens, usage.output_tokens))


def assert_same(sdk: Reply, cap: Capture, known: Mapping[str, Mapping[str, str]]) -> None:
    ours = reply_of(reassembled(cap), ids=any(call[0] is not None for call in sdk.tool_calls))
    differ = {f.name for f in fields(Reply) if getattr(sdk, f.name) != getattr(ours, f.name)}
    expected = set(known.get(cap.name, {}))
    assert differ == expected, {name: (getattr(sdk, name), getattr(ours, name))
                                for name in differ ^ expected}


def params(captures: list[Capture]) -> list[Any]:
    return [pytest.param(cap, id=cap.name) for cap in captures]
