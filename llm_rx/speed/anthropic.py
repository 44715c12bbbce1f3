"""Anthropic Messages with shortcuts: byte templates learnt from the delta frames the plain
decoder decoded.

A ``content_block_delta`` frame the plain decoder decoded to one text, thinking or argument
delta is learnt as a byte template (:mod:`.templates`: its bytes around the delta's string);
a later frame with the same bytes around another string is that delta with that string, and
runs of them are read in batches (:mod:`.batches`). Any frame that made other events (a block
started or stopped, the message's end) drops what was learnt: the blocks a template stands
for may have changed. The API pads its frames (spaces before the last brace, a count that
varies from frame to frame): once a read shows padded frames, templates are learnt from and
matched against the frames with those spaces taken out (the same JSON value), while a frame
no template matches goes to the plain decoder as it was sent.
"""

from __future__ import annotations

from typing import Any

from ..events import Event, TextDelta, ThinkingDelta, ToolArgsDelta
from ..wire.anthropic import AnthropicDecoder
from .batches import TemplateFrames

__all__ = ["AnthropicShortcuts"]

# A delta's event -> the bytes before its string on the wire.
_MARKERS: dict[Any, bytes] = {
    TextDelta: b'"delta":{"type":"text_delta","text":"',
    ThinkingDelta: b'"delta":{"type":"thinking_delta","thinking":"',
    ToolArgsDelta: b'"delta":{"type":"input_json_delta","partial_json":"',
}


class AnthropicShortcuts(TemplateFrames, AnthropicDecoder):
    """Byte templates over :class:`~llm_rx.wire.anthropic.AnthropicDecoder`: a frame no
    template matches goes to the decoder's own ``_data``, and is learnt from."""

    def _frames(self, frames: list[Any], out: list[Event]) -> None:
        if not self._padded:
            for frame in frames[:4]:  # (a few frames tell: the padding varies, 0 at times)
                if frame.__class__ is bytes and frame.endswith(b" }"):
                    self._padded = True  # (templates learnt and matched without it)
                    self._forget()
                    break
        super()._frames(frames, out)

    def _data(self, data: bytes, out: list[Event]) -> None:
        before = len(out)
        super()._data(data, out)
        made = len(out) - before
        if made == 1 and (marker := _MARKERS.get(out[-1].__class__)) is not None:
            event: Any = out[-1]  # (a delta: its block and its string)
            kind = event.__class__
            learnt = self.unpadded(data) if self._padded else data
            self._learn(learnt, marker, event[1], kind, event[0], kind is not ToolArgsDelta)
        elif made:
            self._forget()
