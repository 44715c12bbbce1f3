"""The canonical, provider-neutral response: what a reply is once its stream has ended.

``Response.model_dump(mode="json")`` is the canonical JSON documented in the design: the
field names and meanings are a contract. Usage counts are totals and ``None`` means "nobody
reported it" (never ``0``); ``complete`` is true exactly when the provider's end of stream
arrived and no error did.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SkipValidation

from .errors import ErrorKind

__all__ = [
    "Block",
    "Choice",
    "ErrorInfo",
    "OpaqueBlock",
    "RefusalBlock",
    "Response",
    "StopReason",
    "TextBlock",
    "ThinkingBlock",
    "ToolCallBlock",
    "Usage",
]

StopReason = Literal[
    "end_turn",
    "max_tokens",
    "tool_use",
    "stop_sequence",
    "refusal",
    "content_filter",
    "pause_turn",
    "interrupted",
    "error",
]

_FROZEN = ConfigDict(frozen=True)

_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


class Usage(BaseModel):
    """Token counts as totals; ``None`` is "not reported", which is not ``0``.

    ``input_tokens`` counts every prompt token, cached or not; ``cache_read_tokens`` and
    ``cache_write_tokens`` are parts of it. ``output_tokens`` counts every generated token,
    reasoning included; ``reasoning_tokens`` is that part. ``native`` is the provider's own
    usage object, verbatim, from the last snapshot that carried one.
    """

    model_config = _FROZEN

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    # (not validated: it is the provider's object verbatim, and walking it costs per chunk)
    native: Annotated[dict[str, Any] | None, SkipValidation] = Field(
        default=None, exclude=True, repr=False
    )

    def overlay(self, newer: Usage) -> Usage:
        """Merge a later cumulative snapshot: its reported fields win, absent ones keep ours."""
        old, new = self.native, newer.native
        if all(  # the usual case: the newer snapshot reports all we had (no new object needed)
            getattr(self, name) is None or getattr(newer, name) is not None
            for name in _USAGE_FIELDS
        ) and (old is None or (new is not None and old.keys() <= new.keys())):
            return newer
        merged = {
            name: value if (value := getattr(newer, name)) is not None else getattr(self, name)
            for name in _USAGE_FIELDS
        }
        native = self.native
        if newer.native is not None:
            native = newer.native if native is None else {**native, **newer.native}
        return Usage(**merged, native=native)

    @property
    def reported(self) -> bool:
        """Whether any count at all was reported."""
        return any(getattr(self, name) is not None for name in _USAGE_FIELDS)


class TextBlock(BaseModel):
    model_config = _FROZEN

    type: Literal["text"] = "text"
    text: str = ""
    signature: str | None = None
    citations: list[Any] = Field(default_factory=list)
    meta: dict[str, Any] | None = Field(default=None, exclude=True, repr=False)


class ThinkingBlock(BaseModel):
    """Reasoning. A redacted block has ``text == ""``, ``redacted`` and its data as signature."""

    model_config = _FROZEN

    type: Literal["thinking"] = "thinking"
    text: str = ""
    signature: str | None = None
    redacted: bool = False
    meta: dict[str, Any] | None = Field(default=None, exclude=True, repr=False)


class ToolCallBlock(BaseModel):
    """A call the client runs. ``arguments`` is ``None`` when ``raw_arguments`` never parsed."""

    model_config = _FROZEN

    type: Literal["tool_call"] = "tool_call"
    id: str | None = None
    name: str | None = None
    arguments: Any = Field(default_factory=dict)
    raw_arguments: str = ""
    signature: str | None = None
    meta: dict[str, Any] | None = Field(default=None, exclude=True, repr=False)


class RefusalBlock(BaseModel):
    model_config = _FROZEN

    type: Literal["refusal"] = "refusal"
    text: str = ""
    meta: dict[str, Any] | None = Field(default=None, exclude=True, repr=False)


class OpaqueBlock(BaseModel):
    """A block the library does not model (server tools, provider extras), kept verbatim."""

    model_config = _FROZEN

    type: Literal["opaque"] = "opaque"
    kind: str
    raw: Any = None
    meta: dict[str, Any] | None = Field(default=None, exclude=True, repr=False)


Block = Annotated[
    TextBlock | ThinkingBlock | ToolCallBlock | RefusalBlock | OpaqueBlock,
    Field(discriminator="type"),
]


class Choice(BaseModel):
    """One choice of an ``n>1`` reply."""

    model_config = _FROZEN

    index: int
    content: list[Block] = Field(default_factory=list)
    stop_reason: StopReason | None = None
    logprobs: dict[str, list[Any]] | None = None
    native_stop_reason: Any = Field(default=None, exclude=True, repr=False)
    extra: dict[str, Any] = Field(default_factory=dict, exclude=True, repr=False)


class ErrorInfo(BaseModel):
    model_config = _FROZEN

    kind: ErrorKind
    message: str
    raw: str | None = None


class Response(BaseModel):
    """A whole reply: what the non-streamed call returns, in canonical form.

    ``extra`` keeps the message-level fields the wire carried that have no canonical place
    (``system_fingerprint``, ``service_tier``, host extras), so ``to_native`` gives them back;
    ``choice_extra`` does the same for the (first) choice's own fields. ``logprobs`` holds the
    token log-probabilities by channel (``"content"``, ``"refusal"``), when the wire had any.
    """

    model_config = _FROZEN

    provider: str
    model: str | None = None
    id: str | None = None
    content: list[Block] = Field(default_factory=list)
    stop_reason: StopReason | None = None
    complete: bool = False
    usage: Usage = Field(default_factory=Usage)
    stop_details: str | None = None
    choices: list[Choice] = Field(default_factory=list)
    error: ErrorInfo | None = None
    logprobs: dict[str, list[Any]] | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    native_stop_reason: Any = Field(default=None, exclude=True, repr=False)
    choice_extra: dict[str, Any] = Field(default_factory=dict, exclude=True, repr=False)

    @property
    def text(self) -> str:
        """The answer's text: every text block of the (first) choice, joined."""
        return "".join(block.text for block in self.content if isinstance(block, TextBlock))

    @property
    def tool_calls(self) -> list[ToolCallBlock]:
        return [block for block in self.content if isinstance(block, ToolCallBlock)]
