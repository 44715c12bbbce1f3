"""Bedrock ConverseStream over the compiled core: the usual text delta message, learnt.

A ``contentBlockDelta`` message the plain decoder read as one text delta of an open text
block (its usual path: the delta's one key ``text``) is learnt as a byte template of its
payload (:mod:`.templates`: the bytes around the string, Bedrock's random ``p`` padding
skipped); the compiled core (:mod:`.core`, ``scan_messages``) then reads later messages with
the same header bytes and the same payload bytes around another string, their CRCs checked,
while that block is open. Anything else goes to the plain decoder. Only made where the core
is in use: without it, this class would learn what nothing reads.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..events import Event, TextDelta
from ..wire.bedrock import BedrockDecoder
from ..wire.eventstream import EventStreamMessage
from .framing import MESSAGES, Program
from .templates import ByteTemplate

__all__ = ["BedrockShortcuts"]


class BedrockShortcuts(BedrockDecoder):
    """The usual text delta message of :class:`~llm_rx.wire.bedrock.BedrockDecoder`, learnt
    for the compiled core."""

    _framing = MESSAGES
    _learnt: tuple[Program, int, Any] | None = None  # the program, its wire index, its block

    def _message(self, frame: EventStreamMessage, out: list[Event]) -> None:
        before = len(out)
        super()._message(frame, out)
        if (len(out) == before + 1 and out[-1].__class__ is TextDelta
                and frame.headers.get(":event-type") == "contentBlockDelta"
                and self._program() is None):
            self._learn(frame.payload, out[-1][1])

    def _learn(self, payload: bytes, text: str) -> None:
        template = ByteTemplate.learn(payload, b'"text":"', text, b'"p":"')
        wire = orjson.loads(payload).get("contentBlockIndex")
        block = self._blocks.get(wire) if wire.__class__ is int else None
        if template is None or block is None:
            return
        pieces, holes = ((template.prefix, b'"' + template.middle, template.suffix), b"SN") if (
            template.middle) else ((template.prefix, template.suffix), b"S")
        self._learnt = (Program(template, pieces, holes), wire, block)

    def _program(self) -> Program | None:
        """The learnt message, while its block is open and the reply goes on."""
        learnt = self._learnt
        if learnt is None or self.finished or not self.started or self._stop is not None:
            return None
        program, wire, block = learnt
        return program if self._blocks.get(wire) is block else None

    def _framer(self) -> Any:
        return self._frames

    def _took(self, values: list[str], chunk: bytes, first: int, last: int, same: bool,
              out: list[Event]) -> None:
        """A run of learnt messages the compiled core read: their texts, in the block."""
        assert self._learnt is not None
        if "" in values:
            values = [value for value in values if value]
        self._deliver(TextDelta, self._learnt[2].index, values, out)  # type: ignore[attr-defined]
