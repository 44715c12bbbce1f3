"""The closed event algebra every decoder emits and every operator consumes.

A reply is a sequence of events:

```text
MessageStart  (MetadataUpdate | BlockStart delta* BlockStop | UsageUpdate | ChoiceEnd
               | Opaque | Custom | Dropped)*  MessageStop
```

``BlockStart.index`` is the block's position in the assembled message (normalised across
providers, unique across choices); every delta names the block it belongs to by that index.
``UsageUpdate`` carries a *cumulative* snapshot: later snapshots overlay earlier ones field by
field (see `llm_rx.response.Usage.overlay`); they are never added.

``Dropped`` is never decoded from a wire: an encoder reports with it what its target could not
carry (and writes nothing for one it is given), so a translation loses nothing silently.

An ``approval_request`` block is a reply that stops to ask: a tool (an MCP server's, an
agent's) runs only once the user says yes. ``BlockStart(index, "approval_request", id, name,
raw=..., meta={"server": ...})`` opens it (``id`` the request's, which the decision names;
``name`` the tool; ``meta["server"]`` the MCP server's label, when there is one; ``raw`` the
wire's item verbatim), ``ToolArgsDelta`` fragments carry the arguments the tool would get,
``BlockStop`` ends it. In a UI stream the request asks about a tool call of the reply:
``meta["tool_call_id"]`` names it. Carried by the Responses wire (``mcp_approval_request``),
the AI SDK UI stream (``tool-approval-request``) and AG-UI (``RUN_FINISHED`` with an
``interrupt`` outcome); every other target reports it `Dropped` (``approval_request``).

``Custom`` is an application's own event beside the model's (a retrieved document, a progress
note, a state change a gateway adds): no provider wire carries one, the UI streams do (the AI
SDK's ``data-<name>`` parts, AG-UI's ``CUSTOM`` events). Every operator passes it on
untouched; the fold to a ``Response`` leaves it out (it is no part of the model's reply).

Events are immutable named tuples: made once per wire frame, they sit on the hot path, and a
tuple is the cheapest typed immutable object Python has. Their kind is part of their
equality and of their hash: ``TextDelta(0, "a") != ThinkingDelta(0, "a")``, and neither
equals the plain tuple ``(0, "a")`` (a set of the two holds two). JSON goes through pydantic:
[`event_to_dict()`][llm_rx.event_to_dict] / [`event_from_dict()`][llm_rx.event_from_dict].
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from pydantic import TypeAdapter

from .response import StopReason, Usage

__all__ = [
    "BlockKind",
    "BlockStart",
    "BlockStop",
    "ChoiceEnd",
    "CitationDelta",
    "Custom",
    "Dropped",
    "Event",
    "EVENT_TYPES",
    "LogprobsDelta",
    "MessageStart",
    "MessageStop",
    "MetadataUpdate",
    "Opaque",
    "RefusalDelta",
    "SignatureDelta",
    "TextDelta",
    "ThinkingDelta",
    "ToolArgsDelta",
    "UsageUpdate",
    "event_from_dict",
    "event_to_dict",
]

BlockKind = Literal[
    "text", "thinking", "redacted_thinking", "tool_call", "refusal", "opaque", "approval_request"
]


class MessageStart(NamedTuple):
    """First event of every reply (also of one that fails before any content)."""

    provider: str
    model: str | None = None
    id: str | None = None


class MetadataUpdate(NamedTuple):
    """Fields the wire carried that the canonical model has no place for
    (``system_fingerprint``, ``service_tier``, host extras); overlaid in arrival order.

    ``choice`` is ``None`` for the message's fields, else the choice the fields belong to.
    """

    fields: Mapping[str, Any]
    choice: int | None = None


class BlockStart(NamedTuple):
    """A content block opens at ``index``.

    ``id``/``name`` are the tool call's when known (an ``approval_request``'s: the request's
    id and the tool's name); ``raw`` is the whole block for ``opaque`` and
    ``approval_request`` blocks; ``meta`` records how the wire spelled the block, so
    ``to_native`` can spell it back the same way; ``choice`` is the choice the block belongs
    to (``n>1``).
    """

    index: int  # type: ignore[assignment]  # shadows tuple.index(), on purpose
    kind: BlockKind
    id: str | None = None
    name: str | None = None
    choice: int = 0
    raw: Any = None
    meta: Mapping[str, Any] | None = None


class TextDelta(NamedTuple):
    """A fragment of the answer's text, for the block at ``index``."""

    index: int  # type: ignore[assignment]  # shadows tuple.index(), on purpose
    text: str


class ThinkingDelta(NamedTuple):
    """A fragment of reasoning text, for the thinking block at ``index``."""

    index: int  # type: ignore[assignment]  # shadows tuple.index(), on purpose
    text: str


class RefusalDelta(NamedTuple):
    """A fragment of a refusal (OpenAI's ``refusal`` text), for the block at ``index``."""

    index: int  # type: ignore[assignment]  # shadows tuple.index(), on purpose
    text: str


class SignatureDelta(NamedTuple):
    """A whole signature (or redacted data) for block ``index``: assigned, never merged."""

    index: int  # type: ignore[assignment]  # shadows tuple.index(), on purpose
    signature: str


class ToolArgsDelta(NamedTuple):
    """A fragment of a tool call's argument string, verbatim."""

    index: int  # type: ignore[assignment]  # shadows tuple.index(), on purpose
    fragment: str


class CitationDelta(NamedTuple):
    """One citation (provider shape, verbatim) attached to text block ``index``."""

    index: int  # type: ignore[assignment]  # shadows tuple.index(), on purpose
    citation: Any


class LogprobsDelta(NamedTuple):
    """Token log-probabilities for choice ``choice``, provider items verbatim, appended to
    the ``channel`` (``"content"``, ``"refusal"``) they describe."""

    choice: int
    channel: str
    items: tuple[Any, ...]


class BlockStop(NamedTuple):
    """The block at ``index`` ended: nothing more arrives for it (a tool call is final now)."""

    index: int  # type: ignore[assignment]  # shadows tuple.index(), on purpose


class UsageUpdate(NamedTuple):
    """A cumulative usage snapshot: its non-``None`` fields overlay earlier ones."""

    usage: Usage


class ChoiceEnd(NamedTuple):
    """Choice ``choice`` finished; ``native`` is the provider's own finish value."""

    choice: int
    stop_reason: StopReason
    native: Any = None


class MessageStop(NamedTuple):
    """The provider's end of stream arrived: the last event of a complete reply.

    ``details`` says in words why (the provider's explanation, or why a value was inferred);
    ``native`` is the provider's own stop value, kept so ``to_native`` can reproduce it.
    """

    stop_reason: StopReason
    details: str | None = None
    native: Any = None


class Opaque(NamedTuple):
    """A message-level frame the library does not model, passed through verbatim."""

    kind: str
    raw: Any


class Dropped(NamedTuple):
    """Something a translation's target cannot carry, left out by a documented rule.

    ``what`` names it (``"signature"``, ``"citation"``, ``"opaque:server_tool_use"``);
    ``index`` is the block it belonged to (``None`` for a message-level frame); ``reason``
    says why in words; ``raw`` is the value that was left out, verbatim.
    """

    what: str
    index: int | None  # type: ignore[assignment]  # shadows tuple.index(), on purpose
    reason: str
    raw: Any = None


class Custom(NamedTuple):
    """An application's event beside the model's: ``name`` says what it is (``"source"``,
    ``"progress"``), ``data`` is any JSON value, carried verbatim.

    Written by the UI targets (``vercel-ui``: a ``data-<name>`` part; ``ag-ui``: a
    ``CUSTOM`` event with ``name`` and ``value``) and read back from them; a provider wire
    has no place for one, so its encoder reports a `Dropped` (``what`` ``"custom:<name>"``).
    It never equals an `Opaque` with the same fields.
    """

    name: str
    data: Any = None


Event = (
    MessageStart
    | MetadataUpdate
    | BlockStart
    | TextDelta
    | ThinkingDelta
    | RefusalDelta
    | SignatureDelta
    | ToolArgsDelta
    | CitationDelta
    | LogprobsDelta
    | BlockStop
    | UsageUpdate
    | ChoiceEnd
    | MessageStop
    | Opaque
    | Custom
    | Dropped
)


def _eq(self: tuple[Any, ...], other: object) -> bool:
    """Equal only to an event of the same kind with the same fields."""
    if self.__class__ is not other.__class__:
        return False if isinstance(other, tuple) else NotImplemented
    return tuple.__eq__(self, other)  # (same class: a tuple)


def _ne(self: tuple[Any, ...], other: object) -> bool:
    """The negation of `_eq` (a tuple's own ``!=`` would ignore the kind)."""
    if self.__class__ is not other.__class__:
        return True if isinstance(other, tuple) else NotImplemented
    return tuple.__ne__(self, other)  # (same class: a tuple)


def _hash(self: tuple[Any, ...]) -> int:
    """The fields' hash mixed with the kind's: two kinds with the same fields hash apart."""
    return hash((self.__class__, tuple.__hash__(self)))


#: Event type name (the ``"type"`` of its JSON form) -> class.
EVENT_TYPES: dict[str, type[Any]] = {
    "message_start": MessageStart,
    "metadata": MetadataUpdate,
    "block_start": BlockStart,
    "text_delta": TextDelta,
    "thinking_delta": ThinkingDelta,
    "refusal_delta": RefusalDelta,
    "signature_delta": SignatureDelta,
    "tool_args_delta": ToolArgsDelta,
    "citation_delta": CitationDelta,
    "logprobs_delta": LogprobsDelta,
    "block_stop": BlockStop,
    "usage": UsageUpdate,
    "choice_end": ChoiceEnd,
    "message_stop": MessageStop,
    "opaque": Opaque,
    "dropped": Dropped,
    "custom": Custom,
}
for _cls in EVENT_TYPES.values():  # (kind-aware comparison: construction is untouched)
    _cls.__eq__ = _eq  # type: ignore[assignment]
    _cls.__ne__ = _ne  # type: ignore[assignment]
    _cls.__hash__ = _hash  # type: ignore[assignment]
_TYPE_NAMES: dict[type[Any], str] = {cls: name for name, cls in EVENT_TYPES.items()}
_ADAPTERS: dict[str, TypeAdapter[Any]] = {
    name: TypeAdapter(cls) for name, cls in EVENT_TYPES.items()
}


def event_to_dict(event: Event) -> dict[str, Any]:
    """The JSON-ready form of an event: ``{"type": "text_delta", "index": 0, "text": "Hi"}``.

    Args:
        event: Any event of the algebra.

    Returns:
        Its JSON form: a dict with the event's ``type`` and its fields.
    """
    out: dict[str, Any] = {"type": _TYPE_NAMES[type(event)]}
    for key, value in event._asdict().items():
        if isinstance(value, Usage):  # lossless: the provider's usage object too
            value = {**value.model_dump(mode="json"), "native": value.native}
        elif isinstance(value, Mapping):
            value = dict(value)
        out[key] = value
    return out


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Validate the JSON form back into an event (pydantic checks every field).

    Args:
        data: A dict that ``event_to_dict`` made (or its JSON, parsed).

    Returns:
        The event, validated by pydantic.
    """
    fields = dict(data)
    name = fields.pop("type", None)
    adapter = _ADAPTERS.get(name) if isinstance(name, str) else None
    if adapter is None:
        raise ValueError(f"unknown event type {name!r}")
    event: Event = adapter.validate_python(fields)
    return event
