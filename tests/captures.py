"""The recorded provider streams the tests run on (copied with their provenance lines)."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from llm_rx.wire.registry import DECODERS

HERE = Path(__file__).parent / "captures"

# wire_format (MANIFEST column) -> the provider id that decodes it
_WIRE_FORMATS = {
    "openai-chat-sse": "openai-chat",
    "openai-completions-sse": "openai-completions",
    "cohere-v2-sse": "cohere",
    "anthropic-sse": "anthropic",
    "openai-responses-sse": "openai-responses",
    "gemini-sse": "gemini",
    "gemini-json-array": "gemini",
    "gemini-interactions-sse": "gemini-interactions",
    "ollama-chat-ndjson": "ollama",
    "ollama-generate-ndjson": "ollama",
    "bedrock-eventstream": "bedrock-converse",
}
# A format joins the contract suite once its decoder is registered.
_PROVIDER = {wire: provider for wire, provider in _WIRE_FORMATS.items() if provider in DECODERS}


@dataclass(frozen=True)
class Capture:
    name: str  # path below tests/captures, e.g. "openai/chat-text-basic.sse"
    provider: str  # the llm-rx provider id that decodes it
    host: str  # who recorded it (openai, groq, openrouter, ...)
    features: frozenset[str]
    origin: str

    @property
    def path(self) -> Path:
        return HERE / self.name

    @property
    def data(self) -> bytes:
        return self.path.read_bytes()

    @property
    def nonstream(self) -> Path | None:
        stem = self.name.rsplit(".", 1)[0].removesuffix(".partial").removesuffix(".synthetic")
        candidate = HERE / f"{stem}.nonstream.json"
        return candidate if candidate.exists() else None


def _load() -> list[Capture]:
    with open(HERE / "PROVENANCE.tsv", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [
        Capture(
            row["file"],
            _PROVIDER[row["wire_format"]],
            row["provider"],
            frozenset(row["features"].split(",")),
            row["origin"],
        )
        for row in rows
        if row["wire_format"] in _PROVIDER
    ]


CAPTURES: list[Capture] = _load()
BY_NAME: dict[str, Capture] = {capture.name: capture for capture in CAPTURES}


def capture(name: str) -> Capture:
    return BY_NAME[name]


_TERMINAL = re.compile(rb'"type":\s*"(response\.(?:completed|incomplete|failed))"')


def responses_terminal(name: str) -> str | None:
    """The type of a Responses capture's last terminal frame (``response.completed``,
    ``response.incomplete`` or ``response.failed``), ``None`` for a stream with none."""
    found = _TERMINAL.findall(BY_NAME[name].data)
    return found[-1].decode() if found else None

#: The recorded bodies that hold several replies, one after another (each reply its own
#: ``Response``: ``to_responses()``); a test about one reply takes the others
#: (``ONE_REPLY``), and tests/wire/test_several_responses.py reads these.
SEVERAL_REPLIES = frozenset({"anthropic/programmatic-tool-calling.sse"})
ONE_REPLY: list[Capture] = [c for c in CAPTURES if c.name not in SEVERAL_REPLIES]
