"""Events as the AI SDK's UI message stream (protocol v1: what ``useChat`` and
``readUIMessageStream`` read), over SSE, from any provider's reply.

Every frame is ``data: <chunk JSON>`` and a blank line; the response carries the header
``x-vercel-ai-ui-message-stream: v1``. ``start`` (the reply's id as ``messageId``, the served
model in ``messageMetadata``) and ``start-step`` open the stream, written before the first
frame that needs them. A text or refusal block is ``text-start`` / ``text-delta`` /
``text-end``; a thinking block ``reasoning-start`` / ``reasoning-delta`` / ``reasoning-end``
(a redacted block, or reasoning that is only encrypted, has no delta); each part's id is its
block's index. A signature goes where the AI SDK's own providers put it, in the part's
``providerMetadata`` (Anthropic ``signature`` / ``redactedData``, OpenAI ``itemId`` and
``reasoningEncryptedContent``, Google ``thoughtSignature``): on an empty delta of a text or
reasoning part at once, on ``tool-input-available`` for a call. A client tool call is
``tool-input-start`` (id, name), a ``tool-input-delta`` per argument fragment, and at the
block's end ``tool-input-available`` with the parsed input (a custom tool's free text as the
string it is); arguments that began as a JSON object and never became one (cut by a limit)
are ``tool-input-error`` instead (the string as it came, and ``errorText``), as the AI SDK
writes a call whose input does not parse: never a call ready to run. A server-side tool is
a call the provider ran (``providerExecuted``), its result ``tool-output-available``. An
approval request is a tool part the AI SDK shows in state ``approval-requested``: the call
it asks about (the reply's own call its ``meta["tool_call_id"]`` names; else written here as
a ``dynamic`` call the provider runs, its input the request's arguments, an MCP server's
label in ``providerMetadata["llm-rx"]["server"]``), then ``tool-approval-request``
(``approvalId`` the request's id, ``toolCallId`` the call). A UI message stream's own tool
chunks that are no client call (read as ``opaque`` blocks: a denial, ``tool-output-denied``;
a call the provider ran and its output) are written back as they came.
Citations are ``source-url`` (a source with an http, https or mailto URL:
``llm_rx._links.safe_link``) or ``source-document`` parts (any other source, with no URL),
each source once. The end: ``finish-step``, ``finish`` (the finish reason by the stop table;
the stop reason and the usage in ``messageMetadata``), then ``data: [DONE]``. A provider
error or a cut source is an ``error`` chunk, then ``data: [DONE]``, never ``finish``; a
cancelled source an ``abort`` chunk. An application's event (`llm_rx.events.Custom`) is a
``data-<name>`` part, its ``data`` as given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ..errors import LlmRxError, ProviderError
from ..events import (
    BlockStart,
    CitationDelta,
    Custom,
    Dropped,
    MessageStart,
    MessageStop,
    MetadataUpdate,
    SignatureDelta,
    ToolArgsDelta,
)
from ..wire.citations import Citation
from ._base import dumps
from ._tables import STOP, vercel_ui_usage
from ._ui import (
    REASONING,
    TEXT,
    TOOL,
    SourceList,
    UIEncoder,
    part_signature,
    signature_metadata,
)

__all__ = ["HEADERS", "VercelUIEncoder"]

#: the response headers the AI SDK's client expects with this stream
HEADERS = {"x-vercel-ai-ui-message-stream": "v1", "cache-control": "no-cache",
           "x-accel-buffering": "no"}

_DONE = b"data: [DONE]\n\n"
_TEXT, _REASONING, _TOOL = TEXT, REASONING, TOOL


def _cut(error: LlmRxError) -> str:
    """What a cut source is said to be (the same words however the source was chunked)."""
    return f"the reply was cut before its end ({error.kind})"


def _cut_call(call: str) -> str:
    """What a call whose arguments were cut before they became JSON is said to be."""
    return f"the arguments of tool call {call} were cut short: they never became JSON"


def _tool_chunk(raw: Any) -> bool:
    """Whether an ``opaque`` block read from a UI message stream is one of its tool chunks
    (``tool-output-denied``, a call the provider ran and its output): written back as it
    came."""
    return isinstance(raw, dict) and str(raw.get("type", "")).startswith("tool-")


def _chunk(payload: dict[str, Any]) -> bytes:
    return b"data: " + dumps(payload) + b"\n\n"


class VercelUIEncoder(UIEncoder):
    provider = "vercel-ui"
    several = True  # (its decoder reads one message after another)

    def __init__(self, dropped: list[Dropped] | None = None) -> None:
        super().__init__(dropped)
        self._args: dict[int, list[str]] = {}  # open tool call -> its argument fragments
        self._signed: dict[int, dict[str, Any]] = {}  # open tool call -> its providerMetadata
        self._choice: dict[str, Any] = {}  # the first choice's own fields (grounding)
        self._sources = SourceList()

    # -- framing -------------------------------------------------------------------------

    def _open(self, out: list[bytes]) -> None:
        if self._opened:
            return
        self._opened = True
        start: dict[str, Any] = {"type": "start"}
        if self.id:
            start["messageId"] = self.id
        if self.model:
            start["messageMetadata"] = {"model": self.model}
        out.append(_chunk(start))
        out.append(_chunk({"type": "start-step"}))

    def _delta_frame(self, kind: str, index: int) -> Callable[[str], bytes]:
        name = "text-delta" if kind == _TEXT else "reasoning-delta"
        part = str(index)

        def frame(sample: str) -> bytes:
            return _chunk({"type": name, "id": part, "delta": sample})

        return frame

    # -- events --------------------------------------------------------------------------

    def _on_start(self, event: MessageStart, out: list[bytes]) -> None:
        pass  # (written lazily: the metadata that follows the start goes with it)

    def _on_metadata(self, event: MetadataUpdate, out: list[bytes]) -> None:
        self._choice.update(event.fields)  # (choice 0 only: the base drops the others)

    def _on_block_start(self, event: BlockStart, out: list[bytes]) -> None:
        index, kind = event.index, event.kind
        self._open(out)
        part = str(index)
        if kind in ("text", "refusal"):
            self._parts[index] = _TEXT
            out.append(_chunk({"type": "text-start", "id": part}))
        elif kind in ("thinking", "redacted_thinking"):
            self._parts[index] = _REASONING
            out.append(_chunk({"type": "reasoning-start", "id": part}))
        elif kind == "tool_call":
            self._parts[index] = _TOOL
            self._args[index] = []
            out.append(_chunk({"type": "tool-input-start", "toolCallId": self._call_id(event),
                               "toolName": event.name or ""}))
        elif self.same and _tool_chunk(event.raw):  # (a UI stream's own: a denial, a call
            out.append(_chunk(dict(event.raw)))  # the provider ran, its output) verbatim
        else:
            self._server_tool(event, out)

    def _server_frames(self, start: BlockStart, call: str, name: str, given: Any,
                       output: Any, out: list[bytes]) -> None:
        if given is not None:
            out.append(_chunk({"type": "tool-input-start", "toolCallId": call,
                               "toolName": name, "providerExecuted": True}))
            frame: dict[str, Any] = {"type": "tool-input-available", "toolCallId": call,
                                     "toolName": name, "input": given, "providerExecuted": True}
            signature = part_signature(start)
            if signature is not None:
                frame["providerMetadata"] = signature_metadata(self.source, start, signature)
            out.append(_chunk(frame))
        if output is not None:
            out.append(_chunk({"type": "tool-output-available", "toolCallId": call,
                               "output": output, "providerExecuted": True}))

    def _on_approval(self, start: BlockStart, arguments: Any, out: list[bytes]) -> None:
        """A tool part in state ``approval-requested``: the call it asks about (written here
        as a call the provider runs, ``dynamic``, when the reply's own is not), then
        ``tool-approval-request`` naming the call, its ``approvalId`` the request's id."""
        self._open(out)
        call, own = self._asked_call(start, out)
        if own is None:
            head = {"toolCallId": call, "toolName": start.name or "", "providerExecuted": True,
                    "dynamic": True}
            available: dict[str, Any] = {"type": "tool-input-available", **head,
                                         "input": arguments}
            server = (start.meta or {}).get("server")
            if isinstance(server, str):
                available["providerMetadata"] = {"llm-rx": {"server": server}}
            out.append(_chunk({"type": "tool-input-start", **head}))
            out.append(_chunk(available))
        out.append(_chunk({"type": "tool-approval-request", "approvalId": start.id or call,
                           "toolCallId": call}))

    def _on_args(self, event: ToolArgsDelta, out: list[bytes]) -> None:
        index = event.index
        fragments = self._args.get(index)
        if fragments is None:
            self.drop("arguments", index, "argument fragments of no open tool call",
                      event.fragment)
            return
        fragments.append(event.fragment)
        call = self._call_id(self.blocks[index])

        def frame(sample: str) -> bytes:
            return _chunk({"type": "tool-input-delta", "toolCallId": call,
                           "inputTextDelta": sample})

        out.append(frame(event.fragment))
        self.learn(index, ToolArgsDelta, frame, texts=fragments)

    def _on_signature(self, event: SignatureDelta, out: list[bytes]) -> None:
        index = event.index
        kind = self._parts.get(index)
        if kind is None:
            self.drop("signature", index, "a signature of no open part", event.signature)
            return
        metadata = signature_metadata(self.source, self.blocks[index], event.signature)
        if kind == _TOOL:
            self._signed[index] = metadata
            return
        name = "text-delta" if kind == _TEXT else "reasoning-delta"
        out.append(_chunk({"type": name, "id": str(index), "delta": "",
                           "providerMetadata": metadata}))

    def _on_citation(self, event: CitationDelta, out: list[bytes]) -> None:
        found = self._sources.of_block(self.source or "", event.citation)
        if found is None:
            self.drop("citation", event.index, "a citation that names no source",
                      event.citation)
            return
        self._open(out)
        out.extend(self._source(source_id, citation) for source_id, citation in found)

    def _source(self, source_id: str, citation: Citation) -> bytes:
        if citation.url is not None:
            frame: dict[str, Any] = {"type": "source-url", "sourceId": source_id,
                                     "url": citation.url}
            if citation.title:
                frame["title"] = citation.title
            return _chunk(frame)
        return _chunk({"type": "source-document", "sourceId": source_id,
                       "mediaType": "text/plain", "title": citation.title or ""})

    def _on_custom(self, event: Custom, out: list[bytes]) -> None:
        self._open(out)
        out.append(_chunk({"type": f"data-{event.name}", "data": event.data}))

    def _on_block_stop(self, start: BlockStart, out: list[bytes]) -> None:
        index = start.index
        kind = self._parts.pop(index, None)
        if kind == _TEXT:
            out.append(_chunk({"type": "text-end", "id": str(index)}))
        elif kind == _REASONING:
            out.append(_chunk({"type": "reasoning-end", "id": str(index)}))
        elif kind == _TOOL:
            raw = "".join(self._args.pop(index, ()))
            call, name = self._call_id(start), start.name or ""
            try:
                given: Any = orjson.loads(raw) if raw.strip() else {}
            except orjson.JSONDecodeError:
                given = raw  # (a custom tool's free text: the input as it came)
            frame: dict[str, Any] = {"type": "tool-input-available", "toolCallId": call,
                                     "toolName": name, "input": given}
            if given is raw and raw.lstrip().startswith("{"):  # (JSON cut short: a limit)
                frame = {"type": "tool-input-error", "toolCallId": call, "toolName": name,
                         "input": raw, "errorText": _cut_call(call)}
            metadata = self._signed.pop(index, None)
            if metadata is not None:
                frame["providerMetadata"] = metadata
            out.append(_chunk(frame))

    def _close_parts(self, out: list[bytes]) -> None:
        for index in list(self._parts):
            self._on_block_stop(self.blocks[index], out)

    def _on_stop(self, event: MessageStop, out: list[bytes]) -> None:
        self._open(out)
        self._close_parts(out)
        found = self._sources.of_message(self.source or "", self.metadata, self._choice)
        out.extend(self._source(source_id, citation) for source_id, citation in found)
        metadata: dict[str, Any] = {"stopReason": event.stop_reason}
        usage = vercel_ui_usage(self.usage) if self.usage is not None else None
        if usage:
            metadata["usage"] = usage
        out.append(_chunk({"type": "finish-step"}))
        out.append(_chunk({"type": "finish",
                           "finishReason": STOP[self.provider].get(event.stop_reason, "other"),
                           "messageMetadata": metadata}))
        out.append(_DONE)

    def _on_error(self, error: ProviderError, out: list[bytes]) -> None:
        self._open(out)
        out.append(_chunk({"type": "error", "errorText": error.message}))
        out.append(_DONE)

    def _on_cut(self, error: LlmRxError, out: list[bytes]) -> None:
        self._open(out)
        if error.kind == "cancelled":  # (stopped on purpose: the AI SDK's abort)
            out.append(_chunk({"type": "abort", "reason": "the reply was cancelled"}))
        else:
            out.append(_chunk({"type": "error", "errorText": _cut(error)}))
        out.append(_DONE)
