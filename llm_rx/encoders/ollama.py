"""Events as an Ollama native stream: NDJSON lines of ``/api/chat`` (or ``/api/generate``).

Each text or thinking delta is a line (``message.content`` / ``message.thinking``; at the
top level, ``response`` / ``thinking``, for a reply of ``/api/generate``), written when it
arrives. Ollama gives a tool call whole (``arguments`` an object), so a call is written at
its block's end. The ``done: true`` line (``done_reason``, the counts, the timings) waits for
the reply's end. Ollama has no place for signatures, redacted reasoning, citations or
server-side blocks: they are dropped and reported. A provider error is an ``{"error": ...}``
line; a cut source ends without the ``done`` line.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..errors import ProviderError
from ..events import (
    BlockStart,
    Dropped,
    LogprobsDelta,
    MessageStop,
    MetadataUpdate,
    RefusalDelta,
    SignatureDelta,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
)
from ._base import Encoder, dumps
from ._tables import STOP, ollama_usage

__all__ = ["OllamaEncoder"]

_EPOCH = "1970-01-01T00:00:00Z"


class OllamaEncoder(Encoder):
    provider = "ollama"

    def __init__(self, dropped: list[Dropped] | None = None) -> None:
        super().__init__(dropped)
        self._opened = False
        self._first: dict[str, Any] = {}  # the metadata the first line carries
        self._message_fields: dict[str, Any] = {}
        self._args: dict[int, list[str]] = {}
        self._generate = False

    def _line(self, body: dict[str, Any], out: list[bytes], *, done: bool = False) -> None:
        first: dict[str, Any] = {}
        if not self._opened:  # (the first line carries the reply's metadata so far)
            self._opened = True
            self._first = first = dict(self.metadata) if self.same else {}
        out.append(self._line_bytes(body, first, done=done))

    def _line_bytes(self, body: dict[str, Any], first: dict[str, Any], *,
                    done: bool = False) -> bytes:
        head: dict[str, Any] = {"model": self.model or ""}
        head["created_at"] = self._first.get("created_at", _EPOCH)
        line = {**head, **first, **body}
        if not done:
            line["done"] = False
        return dumps(line) + b"\n"

    def _body(self, field: str, text: str) -> dict[str, Any]:
        if self._generate:
            return {"response" if field == "content" else field: text}
        return {"message": {"role": "assistant", "content": "", field: text}
                if field != "content" else {"role": "assistant", "content": text}}

    def _delta(self, index: int, cls: type[Any], field: str, text: str,
               out: list[bytes]) -> None:
        self._line(self._body(field, text), out)
        self.learn(index, cls, lambda sample: self._line_bytes(self._body(field, sample), {}))

    # -- events --------------------------------------------------------------------------

    def _on_metadata(self, event: MetadataUpdate, out: list[bytes]) -> None:
        if event.choice is not None and self.same:
            self._message_fields.update(event.fields)

    def _on_block_start(self, event: BlockStart, out: list[bytes]) -> None:
        meta = event.meta or {}
        if self.same and meta.get("endpoint") == "generate":
            self._generate = True
        if event.kind == "tool_call":
            self._args[event.index] = []
        elif event.kind == "redacted_thinking":
            self.drop("redacted_thinking", event.index, "ollama has no redacted reasoning")
        elif event.kind == "opaque":
            self.drop(f"opaque:{event.name}", event.index,
                      "ollama has no server-side blocks", event.raw)

    def _on_text(self, event: TextDelta, out: list[bytes]) -> None:
        self._delta(event.index, TextDelta, "content", event.text, out)

    def _on_refusal(self, event: RefusalDelta, out: list[bytes]) -> None:
        self._delta(event.index, RefusalDelta, "content", event.text, out)  # (as text)

    def _on_thinking(self, event: ThinkingDelta, out: list[bytes]) -> None:
        self._delta(event.index, ThinkingDelta, "thinking", event.text, out)

    def _on_signature(self, event: SignatureDelta, out: list[bytes]) -> None:
        self.drop("signature", event.index, "ollama has no place for signatures",
                  event.signature)

    def _on_args(self, event: ToolArgsDelta, out: list[bytes]) -> None:
        fragments = self._args.get(event.index)
        if fragments is not None:
            fragments.append(event.fragment)

    def _on_logprobs(self, event: LogprobsDelta, out: list[bytes]) -> None:
        if not self.same:
            super()._on_logprobs(event, out)
            return
        body: dict[str, Any] = {"logprobs": list(event.items)}
        if self._generate:
            self._line({"response": "", **body}, out)
        else:
            self._line({"message": {"role": "assistant", "content": ""}, **body}, out)

    def _on_block_stop(self, start: BlockStart, out: list[bytes]) -> None:
        fragments = self._args.pop(start.index, None)
        if fragments is None:
            return
        raw = "".join(fragments)
        try:
            arguments: Any = orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError:
            arguments = None
        if not isinstance(arguments, dict):  # (Ollama carries an object: the evidence kept)
            self.drop("raw_arguments", start.index, "arguments that are no JSON object go "
                      "as {\"_raw_arguments\": ...}", raw)
            arguments = {"_raw_arguments": raw}
        function: dict[str, Any] = {"name": start.name or "", "arguments": arguments}
        call: dict[str, Any] = {}
        if start.id is not None:
            call["id"] = start.id
        meta = start.meta or {}
        if self.same:
            for key, value in meta.items():
                where, _, name = key.partition(".")
                (call if where == "call" else function).setdefault(name, value)
        call["function"] = function
        self._line({"message": {"role": "assistant", "content": "", "tool_calls": [call]}},
                   out)

    def _on_stop(self, event: MessageStop, out: list[bytes]) -> None:
        body: dict[str, Any] = {}
        if self._generate:
            body["response"] = ""
        else:
            body["message"] = {"role": "assistant", "content": "", **self._message_fields}
        body["done"] = True
        native = event.native if self.same else None
        if not self.same or isinstance(native, str):
            body["done_reason"] = native or STOP[self.provider].get(event.stop_reason, "stop")
        if self.same:
            body.update(self.metadata)
        usage = self.usage
        if usage is not None:
            body.update(usage.native if self.same and usage.native is not None
                        else ollama_usage(usage))
        self._line(body, out, done=True)

    def _on_error(self, error: ProviderError, out: list[bytes]) -> None:
        if self.same and error.raw and error.raw.lstrip().startswith("{"):
            out.append(error.raw.strip().encode() + b"\n")
            return
        out.append(dumps({"error": error.message}) + b"\n")
