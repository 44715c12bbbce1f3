"""The mapping tables are the documented ones: the translation guide
(docs/how-to/translation.md) reproduces them, and everything an encoder leaves out is a kind
its target's table lists."""

from __future__ import annotations

from pathlib import Path

import pytest

import llm_rx
from llm_rx import Dropped
from llm_rx.encoders import ENCODERS
from llm_rx.encoders._tables import DROPPED, STOP, WAITS
from tests.captures import CAPTURES

GUIDE = (Path(__file__).parents[2] / "docs" / "how-to" / "translation.md").read_text()


@pytest.mark.parametrize("reason", ["end_turn", "max_tokens", "tool_use", "stop_sequence",
                                    "refusal", "content_filter", "pause_turn"])
def test_guide_stop_table_is_the_encoders(reason: str) -> None:
    row = next(line for line in GUIDE.splitlines() if line.startswith(f"| `{reason}` | `"))
    cells = [cell.strip() for cell in row.strip("|").split("|")][1:]
    order = ["openai-chat", "openai-responses", "anthropic", "gemini", "ollama",
             "bedrock-converse", "cohere"]
    for target, cell in zip(order, cells, strict=True):
        native = STOP[target].get(reason)  # type: ignore[call-overload]
        if target == "openai-responses":
            assert cell == (f"`incomplete` (`{native}`)" if native else "`completed`")
        else:
            assert cell == f"`{native}`"


def test_guide_lists_every_drop_and_wait() -> None:
    for items in DROPPED.values():
        for what, when in items.items():
            assert f"`{what}`: {when}" in GUIDE
    for wait in WAITS.values():
        assert wait in GUIDE


def _whats() -> dict[str, set[str]]:
    seen: dict[str, set[str]] = {target: set() for target in ENCODERS}
    for capture in CAPTURES:
        for target in ENCODERS:
            lost: list[Dropped] = []
            try:
                llm_rx.translate(capture.data, target, capture.provider,  # type: ignore[arg-type]
                                 on_dropped=lost.append)
            except llm_rx.LlmRxError:
                continue  # (a body that is no reply)
            seen[target] |= {
                "opaque:*" if item.what.startswith("opaque:") else item.what for item in lost}
    return seen


def test_every_dropped_kind_is_in_its_targets_table() -> None:
    for target, whats in _whats().items():
        table = DROPPED["gemini" if target == "gemini-json-array" else target]
        assert whats <= set(table), target
