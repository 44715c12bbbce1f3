"""OpenAI Responses API streams (``response.*`` events over SSE) and their hosts.

Every host in the captures decodes with no options: OpenAI, Bedrock's "mantle" endpoint,
DeepSeek, xAI and OpenRouter, and so does a server that follows the Open Responses
specification to the letter (its ``response.reasoning.delta`` / ``.done`` are OpenAI's
``response.reasoning_text.*``). Each host's departures from the specification, all read as
they are (``to_native`` of a host's reply gives its fields and extras back):

- OpenAI: older recordings lack ``completed_at``, ``presence_penalty``,
  ``frequency_penalty`` (and, older still, events' ``sequence_number``); hosted tools
  (``web_search``, ``file_search``, ``code_interpreter``, ``image_generation``,
  ``apply_patch``, custom tools) are items and tools the specification does not define;
  ``usage.input_tokens_details.cache_write_tokens``.
- DeepSeek: ``text.verbosity: null``; no ``[DONE]``; extra ``content_filters``,
  ``moderation``, ``prompt_cache_retention``; item ids are UUIDs.
- OpenRouter: ``null`` ``temperature``, ``top_p`` and ``truncation``; no ``text``,
  ``completed_at``, ``presence_penalty``, ``frequency_penalty``, ``top_logprobs``; SSE
  comments (keep-alives) and a ``[DONE]`` after the terminal event (ignored: the terminal
  ``response.*`` event decides); extra ``output_text``; usage with ``cost``, ``is_byok``,
  ``cost_details``.
- xAI: no ``instructions``, ``error``, ``completed_at``, ``background``, ``service_tier``,
  ``truncation``, ``max_tool_calls``, ``presence_penalty``, ``frequency_penalty``,
  ``top_logprobs``, ``prompt_cache_key``, ``safety_identifier``; ``null`` ``temperature`` and
  ``top_p``; reasoning as summary parts; usage with ``num_sources_used``,
  ``num_server_side_tools_used``.
- Perplexity (Agent API): extra progress events ``response.reasoning.started``,
  ``.search_queries``, ``.search_results``, ``.fetch_url_queries``, ``.fetch_url_results``,
  ``.stopped``: opaque events, kept.
- Bedrock ("mantle"): one ``call_id`` reused by calls of different items (each item stays
  its own call); extra ``moderation``, ``prompt_cache_retention``.

Blocks, in output order (each output item reserves its position when it is added):

- ``message`` items: one ``text`` block per ``output_text`` part (annotations as citations,
  logprobs on the ``content`` channel) and one ``refusal`` block per ``refusal`` part.
- ``reasoning`` items: one ``thinking`` block per summary part and per ``reasoning_text``
  part; ``encrypted_content`` is the signature of the item's first block. It is read from the
  item's ``response.output_item.done`` and from nowhere else (PITFALLS 17: the copies in
  ``output_item.added`` and ``response.completed`` are encrypted again and differ). An item
  with no text at all is one block: ``redacted_thinking`` when it is encrypted, else an empty
  ``thinking`` block. Reasoning blocks end with their item (the signature comes last).
- ``function_call`` and ``custom_tool_call`` items: a ``tool_call`` block (``id`` is the
  ``call_id``); arguments (a custom tool's ``input``) from the deltas, or from the ``.done``
  event alone when no delta came.
- Every other item (web and file search, code interpreter, MCP, image generation, and the
  client-run ``computer_call``, ``shell_call``, ``apply_patch_call``...): an ``opaque`` block,
  ``kind`` the item type, ``raw`` the item verbatim from its ``output_item.done``. Their
  progress events are folded into that item; an item cut before its ``.done`` is given as it
  stood, its streamed code, arguments or diff applied. A client-run item makes the stop
  ``tool_use``.

Text from a ``.done`` event (or from the ``output_item.done``) is used only for a part that
had no delta; deltas that disagree with it (a proxy dropped some) make the reply not complete
(a :class:`ProtocolError` at the terminal event, content and usage kept), the part's end
appended from the ``.done`` text where the deltas brought its beginning. Each block's
``meta`` keeps the item's and the part's fields: ``to_native`` groups the items as they came.

End of stream: ``response.completed`` is complete (``tool_use`` when a client-run item
arrived, ``refusal`` after a refusal, else ``end_turn``). ``response.incomplete`` is the
provider ending the reply normally but early: complete, with ``stop_reason`` from
``incomplete_details.reason`` (``max_output_tokens`` -> ``max_tokens``, ``content_filter``),
that reason as ``stop_details``, and all the content (PITFALLS 23: not a crash, not a
success); ``steered`` (the reply cut short by the client's next input) is ``interrupted``.
``response.failed`` and an ``error`` event are in-band provider errors: what arrived is
kept, then :class:`ProviderError`. Usage is read from those terminal responses only, never
from ``response.created``/``in_progress`` (PITFALLS 6). EOF before a terminal event is a
truncation. After a terminal event (never after an error) a ``response.created``
(``queued``, ``in_progress``) starts the next response on the stream (WebSocket mode),
decoded afresh, and an ``error`` is the next request refused; any other frame there
(OpenRouter's ``[DONE]``) is ignored. A ``response.created`` of another id while a response
is open starts the next one there, the open one not complete.

The start is ``response.created`` (``response.queued`` or ``response.in_progress`` for a
background reply). A stream without one is a tail: a late subscriber's, or a stream resumed
with ``starting_after``. It decodes (a delta for an item never announced opens it, the
terminal response fills in the model and id), but it is not the whole reply, so at its
terminal event a :class:`ProtocolError` says the start was not seen (``complete`` false,
the content kept). Sequence numbers starting above 0 are no reason to take it as whole: they
say where the tail starts, not that what came before is here. To reassemble a resumed reply,
decode the first connection's bytes followed by the resumed ones: the start is then seen.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..errors import IncompleteStreamError, LlmRxError, ProtocolError
from ..events import (
    Event,
    MessageStart,
    MessageStop,
    MetadataUpdate,
    Opaque,
    UsageUpdate,
)
from ..response import StopReason
from ._checks import MAX_DEPTH, SHALLOW
from ._responses_items import (
    CLIENT_ITEMS,
    INCOMPLETE,
    ITEM_STREAMS,
    NEXT,
    PARTS,
    SNAPSHOT_FIELDS,
    TOOL_ITEMS,
    Item,
    Part,
    call_fields,
    error_message,
    pending_block,
    usage_from_responses,
)
from ._responses_parts import PartFrames
from .base import SSEPayloadDecoder
from .http import in_band_error
from .sniffing import foreign_frame
from .sse import SSEEvent

__all__ = ["OpenAIResponsesDecoder", "usage_from_responses"]

_loads = orjson.loads


class OpenAIResponsesDecoder(PartFrames, SSEPayloadDecoder):
    """The OpenAI Responses API stream: typed SSE events of output items and their parts."""

    provider = "openai-responses"

    several = True  # (WebSocket mode: one response after another on a socket)
    next_types = NEXT

    def __init__(self, max_frame: int = 16 * 1024 * 1024) -> None:
        super().__init__(max_frame)
        self._fresh()
        self._handlers = {
            "response.output_text.delta": self._text_delta,
            "response.function_call_arguments.delta": self._args_delta,
            "response.custom_tool_call_input.delta": self._args_delta,
            "response.function_call_arguments.done": self._args_done,
            "response.custom_tool_call_input.done": self._args_done,
            "response.output_text.annotation.added": self._annotation,
            "response.content_part.added": self._part_added,
            "response.reasoning_summary_part.added": self._part_added,
            "response.content_part.done": self._part_done,
            "response.reasoning_summary_part.done": self._part_done,
            "response.output_item.added": self._item_added,
            "response.output_item.done": self._item_done,
            "response.created": self._snapshot_event,
            "response.in_progress": self._snapshot_event,
            "response.queued": self._snapshot_event,
            "response.completed": self._terminal,
            "response.incomplete": self._terminal,
            "response.failed": self._failed,
            "error": self._error,
        }
        for prefix in PARTS:
            self._handlers.setdefault(prefix + ".delta", self._delta)
            self._handlers[prefix + ".done"] = self._text_done

    def _fresh(self) -> None:
        """The state of one response, at its start."""
        self._items: dict[Any, Item] = {}
        self._hot: dict[tuple[Any, str, Any], Part] = {}  # (output, channel, number) -> part
        self._next_block = 0
        self._snapshot: dict[str, Any] = {}
        self._model: str | None = None
        self._id: str | None = None
        self._client_items = False
        self._refusal = False
        self._lost: ProtocolError | None = None
        self._had_start = False  # response.created (or queued / in_progress) arrived

    # -- frames ----------------------------------------------------------------------------

    def _event(self, event: SSEEvent, out: list[Event]) -> None:
        data = event.data
        try:
            frame = _loads(data)
        except orjson.JSONDecodeError:
            if data == b"[DONE]":
                return  # OpenRouter's sentinel: the terminal response event decides
            frame = self._json(event)  # raises the error the base class would
        if frame.__class__ is not dict or (  # (a frame that may be nested too deep: walked)
            len(data) > SHALLOW and data.count(b"{") + data.count(b"[") > MAX_DEPTH
        ):
            frame = self._json(event)  # (the typed error, or the depth walked)
        kind = frame.get("type")
        if kind == "response.output_text.delta" and self.started:  # (the usual frame)
            self._text_delta(frame, data, out)
            return
        if not isinstance(kind, str):
            kind = event.event
        if not self.started:
            foreign = foreign_frame(event.data, self.provider)
            if foreign is not None:
                raise foreign
            self._begin(frame, out)
        handler = self._handlers.get(kind)
        if handler is not None:
            handler(frame, event.data, out)
        elif kind in ITEM_STREAMS:
            self._item_stream(ITEM_STREAMS[kind], frame)
        elif not self._folded(frame):
            out.append(Opaque(kind, frame))

    def _eof(self, out: list[Event]) -> None:
        self._emit_pending(out, stop=False)
        raise IncompleteStreamError("the stream ended before response.completed")

    def _fail(self, error: LlmRxError, out: list[Event], *, start: bool) -> LlmRxError:
        if self.started and not self.finished:
            self._emit_pending(out, stop=False)
        return super()._fail(error, out, start=start)

    # -- message level ---------------------------------------------------------------------

    def _begin(self, frame: dict[str, Any], out: list[Event]) -> None:
        response = frame.get("response")
        response = response if isinstance(response, dict) else {}
        model, id_ = response.get("model"), response.get("id")
        self._start(out, model, id_)
        self._model = model if isinstance(model, str) and model else None
        self._id = id_ if isinstance(id_, str) and id_ else None

    def _snapshot_event(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        """``response.created``/``in_progress``/``queued``: metadata only (a usage there is
        not the reply's: PITFALLS 6). Each is the reply's start: its head arrived; a
        ``response.created`` of another response while this one is open starts that one."""
        response = frame.get("response")
        new_id = response.get("id") if isinstance(response, dict) else None
        if (self._had_start and frame.get("type") == "response.created" and self._id
                and isinstance(new_id, str) and new_id and new_id != self._id):
            self._emit_pending(out, stop=False)  # (this one ends here, not complete)
            for part in [p for item in self._items.values() for p in item.parts.values()]:
                part.open = False  # (its blocks never end: nothing more is read into them)
            self._fresh()
            self._begin(frame, out)
        self._had_start = True
        if isinstance(response, dict):
            self._metadata(response, out)

    def _metadata(self, response: dict[str, Any], out: list[Event]) -> None:
        model, id_ = response.get("model"), response.get("id")
        fill_model = isinstance(model, str) and model and not self._model
        fill_id = isinstance(id_, str) and id_ and not self._id
        if fill_model or fill_id:  # a resumed stream: the model and id come late
            self._model = self._model or (model if fill_model else None)
            self._id = self._id or (id_ if fill_id else None)
            out.append(MessageStart(self.provider, self._model, self._id))
        snapshot = self._snapshot
        changed = {
            key: value
            for key, value in response.items()
            if key not in SNAPSHOT_FIELDS and (key not in snapshot or snapshot[key] != value)
        }
        if changed:
            snapshot.update(changed)
            out.append(MetadataUpdate(changed))

    def _close_response(self, response: Any, out: list[Event], *, stop: bool) -> None:
        """What every terminal response gives: metadata, usage, pending opaque items."""
        if isinstance(response, dict):
            self._metadata(response, out)
            usage = response.get("usage")
            if isinstance(usage, dict):
                out.append(UsageUpdate(usage_from_responses(usage)))
        self._emit_pending(out, stop=stop)

    def _terminal(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        response = frame.get("response")
        self._close_response(response, out, stop=True)
        for item in self._items.values():
            self._close_all(item, out)  # a block still open at the end is closed implicitly
        if isinstance(response, dict):
            self._check_output(response.get("output"), raw)
        if not self._had_start:
            raise ProtocolError("the reply ended, but its start (response.created) was not seen: "
                                "only its tail arrived", raw)
        if self._lost is not None:
            raise self._lost
        self.finished = True
        if frame.get("type") == "response.incomplete":
            details = response.get("incomplete_details") if isinstance(response, dict) else None
            reason = details.get("reason") if isinstance(details, dict) else None
            words = reason if isinstance(reason, str) and reason else None
            out.append(MessageStop(INCOMPLETE.get(words or "", "max_tokens"), words,
                                   "incomplete"))
            return
        stop: StopReason = (
            "tool_use" if self._client_items else "refusal" if self._refusal else "end_turn"
        )
        out.append(MessageStop(stop, None, "completed"))

    def _failed(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        response = frame.get("response")
        self._close_response(response, out, stop=False)
        error = response.get("error") if isinstance(response, dict) else None
        raise in_band_error(error_message(error, "the response failed"), raw, error)

    def _error(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        status = frame.get("status")  # (a WebSocket error event's HTTP status)
        status = status if type(status) is int else None
        nested = frame.get("error")
        if isinstance(nested, dict):
            raise in_band_error(error_message(nested), raw, nested, status=status)
        flat = {**frame, "type": None}
        raise in_band_error(error_message(flat), raw, flat, status=status)

    # -- items -----------------------------------------------------------------------------

    def _reserve(self, item: Item | None = None) -> int:
        """The item's reserved position (used by its first block), else the next one."""
        if item is not None and item.reserved is not None:
            index, item.reserved = item.reserved, None
            return index
        index = self._next_block
        self._next_block += 1
        return index

    def _new_item(self, key: Any, body: dict[str, Any]) -> Item:
        item = self._items[key] = Item(key, body, self._reserve())
        if item.type in CLIENT_ITEMS:
            self._client_items = True
        return item

    def _item(self, frame: dict[str, Any], implied: str, *, delta: bool) -> Item:
        """The item a frame is about; one never announced (a resumed stream) is opened."""
        key = frame.get("output_index")
        if key is None:
            key = frame.get("item_id")
        item = self._items.get(key)
        if item is None:
            item = self._new_item(key, {"type": implied, "id": frame.get("item_id")})
        elif item.done and delta:
            raise ProtocolError(
                f"a delta for output item {key}, which already ended", orjson.dumps(frame)
            )
        return item

    def _item_added(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        body = frame.get("item")
        if not isinstance(body, dict):
            raise ProtocolError("response.output_item.added without an item", raw)
        key = frame.get("output_index", body.get("id"))
        if key in self._items:
            raise ProtocolError(f"output item {key} was added twice", raw)
        item = self._new_item(key, body)
        if item.type in TOOL_ITEMS:
            self._open(item, ("args", 0), "tool_call", out, **call_fields(body))

    def _item_done(self, frame: dict[str, Any], raw: bytes, out: list[Event]) -> None:
        body = frame.get("item")
        if not isinstance(body, dict):
            raise ProtocolError("response.output_item.done without an item", raw)
        key = frame.get("output_index", body.get("id"))
        item = self._items.get(key) or self._new_item(key, body)
        if item.done:
            return
        item.done = True
        kind = item.type
        if kind == "message":
            parts = body.get("content") or ()
            for key, part in zip(self._numbered(item, "content", len(parts)), parts, strict=True):
                if isinstance(part, dict):
                    self._part_whole(item, key, part, out, close=True, raw=raw)
        elif kind == "reasoning":
            self._reasoning_done(item, body, out, raw)
        elif kind in TOOL_ITEMS:
            args = item.parts.get(("args", 0)) or self._open(
                item, ("args", 0), "tool_call", out, **call_fields(body)
            )
            self._args_whole(args, body.get(TOOL_ITEMS[kind]), out, item, raw)
        else:
            item.pending = None
            out += pending_block(self._reserve(item), kind, body, item.id, stop=True)
        self._close_all(item, out)

    def _emit_pending(self, out: list[Event], *, stop: bool) -> None:
        """Opaque items that never got their ``.done``, as they stood."""
        for item in self._items.values():
            if item.pending is not None and not item.done:
                out += pending_block(self._reserve(item), item.type, item.as_it_stands(),
                                     item.id, stop=stop)
                item.pending = None
