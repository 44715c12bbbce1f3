"""The canonical, provider-neutral response: what a reply is once its stream has ended.

``Response.model_dump(mode="json")`` is the canonical JSON documented in the design: the
field names and meanings are a contract. Usage counts are totals and ``None`` means "nobody
reported it" (never ``0``); ``complete`` is true exactly when the provider's end of stream
arrived and no error did.

The JSON form is lossless: ``Response.model_validate_json(r.model_dump_json()) == r``, and
``to_native`` gives the same body for both. What only the provider's own body needs (the
native stop reason, a choice's own fields, a block's spelling notes, the provider's usage
object) goes under one ``native`` key on each object: ``{"native": {"stop_reason": ...,
"choice_extra": {...}}}`` on the response, ``{"native": {"stop_reason": ..., "extra": {...}}}``
on a choice, ``"native"`` on a block (its ``meta``) and on ``usage``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    AliasPath,
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    SkipValidation,
    model_serializer,
)

from .errors import ErrorKind

__all__ = [
    "ApprovalRequestBlock",
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
    "WITHOUT_NATIVE",
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
_BLOCK = ConfigDict(frozen=True, serialize_by_alias=True)  # (``meta`` is dumped ``native``)


def _meta() -> Any:
    """A block's spelling notes for its provider's own body, written ``native`` in the JSON
    form; either name is read back (the field's own name is the first choice)."""
    return Field(
        default=None,
        validation_alias=AliasChoices("meta", "native"),
        serialization_alias="native",
        repr=False,
    )


def _native(field: str, key: str, **default: Any) -> Any:
    """A field kept for the provider's own body, read back from ``native.<key>`` too."""
    return Field(
        validation_alias=AliasChoices(field, AliasPath("native", key)), repr=False, **default
    )


def _nest(
    data: dict[str, Any], fields: dict[str, str], info: SerializationInfo
) -> dict[str, Any]:
    """Move ``fields`` (dumped name -> key) of a dump under its one ``native`` object (left
    out when none of them was dumped, or when the caller excluded ``native``)."""
    native = {key: data.pop(name) for name, key in fields.items() if name in data}
    if native and not (info.exclude and "native" in info.exclude):
        data["native"] = native
    return data


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
    usage object, verbatim, from the last snapshot that carried one. Any other field (a
    provider's own name, such as ``prompt_tokens``) is a validation error, never a count lost.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")  # (a misspelt count is an error)

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    # (not validated: it is the provider's object verbatim, and walking it costs per chunk)
    native: Annotated[dict[str, Any] | None, SkipValidation] = Field(default=None, repr=False)

    def overlay(self, newer: Usage) -> Usage:
        """Merge a later cumulative snapshot: its reported fields win, absent ones keep ours.

        Args:
            newer: The later snapshot (cumulative, as every decoder reports usage).

        Returns:
            The merged usage; nothing is ever added.
        """
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
    """Answer text, with the citations the provider attached to it.

    ``signature`` is a provider's signature on the text (Gemini's ``thoughtSignature`` on a
    part), kept byte for byte; ``citations`` the canonical citations of this stretch (each a
    dict with its ``type``, the cited ``url`` / ``title`` / snippet where the wire has them,
    and the span's indices); ``meta`` how the provider spelled the block, so ``to_native``
    gives it back.
    """

    model_config = _BLOCK

    type: Literal["text"] = "text"
    text: str = ""
    signature: str | None = None
    citations: list[Any] = Field(default_factory=list)
    meta: dict[str, Any] | None = _meta()


class ThinkingBlock(BaseModel):
    """Reasoning. A redacted block has ``text == ""``, ``redacted`` and its data as signature."""

    model_config = _BLOCK

    type: Literal["thinking"] = "thinking"
    text: str = ""
    signature: str | None = None
    redacted: bool = False
    meta: dict[str, Any] | None = _meta()


class ToolCallBlock(BaseModel):
    """A call the client runs. ``arguments`` is ``None`` when ``raw_arguments`` never parsed."""

    model_config = _BLOCK

    type: Literal["tool_call"] = "tool_call"
    id: str | None = None
    name: str | None = None
    arguments: Any = Field(default_factory=dict)
    raw_arguments: str = ""
    signature: str | None = None
    meta: dict[str, Any] | None = _meta()


class RefusalBlock(BaseModel):
    """A refusal the provider sent apart from the answer (OpenAI's ``refusal`` text)."""

    model_config = _BLOCK

    type: Literal["refusal"] = "refusal"
    text: str = ""
    meta: dict[str, Any] | None = _meta()


class OpaqueBlock(BaseModel):
    """A block the library does not model (server tools, provider extras), kept verbatim."""

    model_config = _BLOCK

    type: Literal["opaque"] = "opaque"
    kind: str
    raw: Any = None
    meta: dict[str, Any] | None = _meta()


class ApprovalRequestBlock(BaseModel):
    """A reply that stops to ask: tool ``name`` runs with ``arguments`` only once the user
    approves request ``id`` (the decision names it: see ``to_message(approvals=...)``).

    ``server`` is the MCP server's label when the tool is one's (Responses
    ``mcp_approval_request``), else ``None``; ``arguments`` the parsed JSON (the string as it
    came when it does not parse); ``raw`` the wire's item verbatim; ``meta`` how the wire
    spelled it (``tool_call_id``: the call of the reply a UI stream's request asks about).
    """

    model_config = _BLOCK

    type: Literal["approval_request"] = "approval_request"
    id: str | None = None
    name: str | None = None
    arguments: Any = None
    server: str | None = None
    raw: Any = None
    meta: dict[str, Any] | None = _meta()


Block = Annotated[
    TextBlock | ThinkingBlock | ToolCallBlock | RefusalBlock | OpaqueBlock | ApprovalRequestBlock,
    Field(discriminator="type"),
]


class Choice(BaseModel):
    """One choice of an ``n>1`` reply."""

    model_config = _FROZEN

    index: int
    content: list[Block] = Field(default_factory=list)
    stop_reason: StopReason | None = None
    logprobs: dict[str, list[Any]] | None = None
    native_stop_reason: Any = _native("native_stop_reason", "stop_reason", default=None)
    extra: dict[str, Any] = _native("extra", "extra", default_factory=dict)

    @model_serializer(mode="wrap")
    def _dump(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        fields = {"native_stop_reason": "stop_reason", "extra": "extra"}
        return _nest(handler(self), fields, info)


class ErrorInfo(BaseModel):
    """Why a reply did not finish, on ``Response.error``: the error's ``kind`` (the
    [`LlmRxError`][llm_rx.LlmRxError] subclass's, e.g. ``incomplete`` or ``provider``), its
    ``message``, ``raw``, the offending frame when there was one, and ``retryable``: whether
    the provider said the same request may succeed later (an HTTP 429, 408, 409 or 5xx, an
    overloaded or rate-limited provider, in its status or in its in-band error frame).
    ``retryable`` is ``False`` when the wire did not say so (a cut stream, a malformed frame);
    JSON written before the field existed reads as ``False``."""

    model_config = _FROZEN

    kind: ErrorKind
    message: str
    raw: str | None = None
    retryable: bool = False


# ``response.model_dump(exclude=WITHOUT_NATIVE)``: the canonical JSON without any ``native``
# place (to compare two replies by what every provider means, not by how one spelled it).
WITHOUT_NATIVE: dict[str, Any] = {
    "native_stop_reason": True,
    "choice_extra": True,
    "usage": {"native": True},
    "content": {"__all__": {"meta": True}},
    "choices": {"__all__": {
        "native_stop_reason": True, "extra": True, "content": {"__all__": {"meta": True}},
    }},
}


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
    native_stop_reason: Any = _native("native_stop_reason", "stop_reason", default=None)
    choice_extra: dict[str, Any] = _native("choice_extra", "choice_extra", default_factory=dict)

    @model_serializer(mode="wrap")
    def _dump(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        fields = {"native_stop_reason": "stop_reason", "choice_extra": "choice_extra"}
        return _nest(handler(self), fields, info)

    @property
    def text(self) -> str:
        """The answer's text: every text block of the (first) choice, joined."""
        return "".join(block.text for block in self.content if isinstance(block, TextBlock))

    @property
    def thinking(self) -> str:
        """The reasoning's text: every thinking block of the (first) choice, joined (a
        redacted block adds nothing: its text is encrypted, in ``signature``)."""
        return "".join(block.text for block in self.content if isinstance(block, ThinkingBlock))

    @property
    def approval_requests(self) -> list[ApprovalRequestBlock]:
        """The requests the reply stopped to ask the user about, in order."""
        return [block for block in self.content if isinstance(block, ApprovalRequestBlock)]

    @property
    def tool_calls(self) -> list[ToolCallBlock]:
        """The calls the client is to run, in order (server-side tools are ``opaque``)."""
        return [block for block in self.content if isinstance(block, ToolCallBlock)]
