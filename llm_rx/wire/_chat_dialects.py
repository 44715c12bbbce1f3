"""Two hosts' ways of streaming a chat delta's content: Mistral's array ``content`` (text and
thinking parts) and OpenRouter's and Groq's ``reasoning_details`` (encrypted entries kept as
redacted thinking)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..events import Event, Opaque, SignatureDelta, ThinkingDelta
from ._chat_tables import Choice
from ._checks import WireTypeError, string

__all__ = ["DialectParts"]


class DialectParts:
    """The dialect parts of :class:`~llm_rx.wire.openai_chat.OpenAIChatDecoder` (which
    opens the blocks)."""

    if TYPE_CHECKING:  # (the decoder's)
        def _open(self, choice: Choice, out: list[Event], kind: Any, **fields: Any) -> int: ...
        def _text(self, choice: Choice, text: str, out: list[Event]) -> None: ...

    def _content_parts(
        self, choice: Choice, parts: list[Any], out: list[Event]
    ) -> None:
        """Mistral's array content: ``{"type": "text"}`` and ``{"type": "thinking"}`` parts."""
        for part in parts:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and part.get("text"):
                self._text(choice, string(part["text"], "a text part's text"), out)
            elif kind == "thinking":
                pieces = part.get("thinking")
                texts = (
                    [string(p.get("text", ""), "a thinking piece's text")
                     for p in pieces if isinstance(p, dict)]
                    if isinstance(pieces, list)
                    else [pieces] if isinstance(pieces, str) else []
                )
                if choice.thinking is None:
                    choice.thinking = self._open(
                        choice, out, "thinking", meta={"field": "content_parts"}
                    )
                for text in texts:
                    if text:
                        out.append(ThinkingDelta(choice.thinking, text))
            else:
                out.append(Opaque(f"content.{kind}", {"choice": choice.index, "part": part}))

    def _reasoning_details(
        self, choice: Choice, details: list[Any], delta: dict[str, Any], out: list[Event]
    ) -> None:
        also_plain = "reasoning" in delta
        for position, item in enumerate(details):
            if not isinstance(item, dict):
                continue
            key = item.get("index", position)
            if not isinstance(key, (int, str)):
                raise WireTypeError(f"a reasoning_details index is {key!r}")
            kind = item.get("type")
            index = choice.details.get(key)
            if index is None:
                meta = {
                    "field": "reasoning_details",
                    "detail_type": kind,
                    "format": item.get("format"),
                    "plain": also_plain,
                }
                if "id" in item:
                    meta["id"] = item["id"]
                block_kind = "redacted_thinking" if kind == "reasoning.encrypted" else "thinking"
                index = choice.details[key] = self._open(choice, out, block_kind, meta=meta)
                if block_kind == "thinking":
                    choice.thinking = index
            text = item.get("text") if kind != "reasoning.summary" else item.get("summary")
            if isinstance(text, str) and text:
                out.append(ThinkingDelta(index, text))
            signature = item.get("signature") or item.get("data")
            if isinstance(signature, str) and signature:
                out.append(SignatureDelta(index, signature))
