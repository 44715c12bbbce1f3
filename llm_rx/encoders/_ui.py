"""What the two browser protocols (``vercel-ui``, ``ag-ui``) share: where a source provider's
signatures go, server tools as calls with their results, and citations as sources.

These targets are no provider's wire: nothing is given back "verbatim" to the same provider
(``same`` is never true), and what the next turn needs rides where each protocol keeps a
provider's opaque data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from .._links import safe_link
from ..events import BlockStart, Dropped, RefusalDelta, TextDelta, ThinkingDelta
from ..response import OpaqueBlock, Response, TextBlock
from ..wire.citations import Citation, citations
from ..wire.server_tools import ServerTool, server_tool
from ._base import Encoder

__all__ = ["METADATA_KEYS", "REASONING", "TEXT", "TOOL", "ServerCalls", "SourceList",
           "UIEncoder", "part_signature", "signature_metadata"]

#: the kinds of an open block's part (message): the answer's text, reasoning, a tool call
TEXT, REASONING, TOOL = "text", "reasoning", "tool"

#: source provider -> (the AI SDK provider's metadata key, the field of a signature, the
#: field of a redacted block's data), as the AI SDK's own providers spell them
METADATA_KEYS: dict[str, tuple[str, str, str]] = {
    "anthropic": ("anthropic", "signature", "redactedData"),
    "bedrock-converse": ("bedrock", "signature", "redactedData"),
    "gemini": ("google", "thoughtSignature", "thoughtSignature"),
    "openai-responses": ("openai", "reasoningEncryptedContent", "reasoningEncryptedContent"),
}


def signature_metadata(source: str | None, start: BlockStart,
                       signature: str) -> dict[str, dict[str, Any]]:
    """The AI SDK ``providerMetadata`` that carries a block's signature back on the next turn
    (a source without an AI SDK provider of its own is named by its llm-rx id)."""
    name = source or "llm-rx"
    key, field, redacted = METADATA_KEYS.get(name, (name, "signature", "redactedData"))
    inner: dict[str, Any] = {redacted if start.kind == "redacted_thinking" else field: signature}
    item = (start.meta or {}).get("item_id") if name == "openai-responses" else None
    if isinstance(item, str):
        inner["itemId"] = item
    return {key: inner}


def part_signature(start: BlockStart) -> str | None:
    """A signature a server tool's part carries on itself (Gemini's ``thoughtSignature`` on an
    ``executableCode`` part)."""
    raw = start.raw
    signature = raw.get("thoughtSignature") if isinstance(raw, Mapping) else None
    return signature if isinstance(signature, str) and signature else None


class ServerCalls:
    """Server-side tool blocks (``opaque``) as calls the provider ran and their results: a
    result names its call (``tool_use_id``) or answers the latest call without one; a block
    that shows what it ran, or says it finished (a ``status``), is its own result."""

    __slots__ = ("_known", "_open")

    def __init__(self) -> None:
        self._open: list[str] = []  # calls without a result yet, in order
        self._known: set[str] = set()

    def read(self, start: BlockStart) -> tuple[str, str, Any, Any] | None:
        """``(call id, tool name, input or None, output or None)`` for a server tool's
        block: a call (with its output when the block holds it too) or a result (input
        ``None``); ``None`` for a result whose call is unknown."""
        raw = start.raw if isinstance(start.raw, Mapping) else {}
        kind = start.name or (raw.get("type") if isinstance(raw.get("type"), str) else None)
        tool = server_tool(OpaqueBlock(kind=kind or "opaque", raw=start.raw))
        if tool.name == kind and tool.input is None and not self._ran(tool):
            return None  # (no tool: a block nobody models, compaction, a fallback notice)
        answers = raw.get("tool_use_id")
        if tool.input is None and (kind or "").endswith("result"):
            call = answers if isinstance(answers, str) and answers in self._known else (
                self._open[-1] if self._open else None)
            if call is None:
                return None
            if call in self._open:
                self._open.remove(call)
            return call, tool.name, None, start.raw
        own = raw.get("id")
        call = own if isinstance(own, str) and own and own not in self._known else (
            f"server_{start.index}")
        self._known.add(call)
        given = raw.get("input", raw.get("action", raw.get("arguments")))
        if isinstance(given, str) or given is None:
            given = {"input": tool.input} if tool.input is not None else {}
        ran = self._ran(tool) or raw.get("status") in ("completed", "failed", "incomplete")
        if not ran:
            self._open.append(call)
        return call, tool.name, given, (start.raw if ran else None)

    @staticmethod
    def _ran(tool: ServerTool) -> bool:
        return tool.results is not None or bool(tool.output) or tool.exit_code is not None


class SourceList:
    """Citations as a reply's sources, each URL (or untitled document) once, numbered in
    order of first appearance. A URL that may not be a link (`llm_rx._links.safe_link`:
    only http, https, mailto) is no URL: the source is a titled document, titled with the
    URL's text when it has no title."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[tuple[str | None, str | None], str] = {}

    def of_block(self, provider: str, raw: Any) -> list[tuple[str, Citation]] | None:
        """The new sources of one citation kept on a text block (``None``: it names none)."""
        found = citations(Response(provider=provider, content=[TextBlock(text="",
                                                                          citations=[raw])]))
        named = [c for c in found[0] if c.url is not None or c.title is not None]
        return self._new(tuple(named)) if named else None

    def of_message(self, provider: str, extra: Mapping[str, Any],
                   choice_extra: Mapping[str, Any]) -> list[tuple[str, Citation]]:
        """The new sources a reply lists on its message or choice (grounding, a list of
        URLs), read at its end."""
        if not extra and not choice_extra:
            return []
        found = citations(Response(provider=provider, content=[TextBlock(text="")],
                                   extra=dict(extra), choice_extra=dict(choice_extra)))
        return self._new(found[0])

    def _new(self, found: tuple[Citation, ...]) -> list[tuple[str, Citation]]:
        out: list[tuple[str, Citation]] = []
        for citation in found:
            if citation.url is not None and safe_link(citation.url) is None:
                # (no link: a titled document, its title the URL's text when it has none)
                citation = replace(citation, url=None, title=citation.title or citation.url)
            if citation.url is None and citation.title is None:
                continue
            key = (citation.url, None if citation.url else citation.title)
            if key in self._seen:
                continue
            source_id = f"source_{len(self._seen)}"
            self._seen[key] = source_id
            out.append((source_id, citation))
        return out


class UIEncoder(Encoder):
    """What both browser protocols' encoders do alike: the open blocks' kinds of part, the
    text, refusal and reasoning deltas (each a frame of its open part, learned for the
    fast path), a tool call's id, and server tools read as calls with their results. Each
    protocol writes its own frames (``_delta_frame``, ``_server_frames``)."""

    #: what a protocol calls an open part (in what is reported dropped)
    unit = "part"
    approvals = True

    def __init__(self, dropped: list[Dropped] | None = None) -> None:
        super().__init__(dropped)
        self._opened = False
        self._parts: dict[int, str] = {}  # open block -> its kind of part
        self._servers = ServerCalls()

    def _call_id(self, start: BlockStart) -> str:
        return start.id or f"call_{start.index}"

    def _asked_call(self, start: BlockStart,
                    out: list[bytes]) -> tuple[str, BlockStart | None]:
        """The id of the tool call an approval request asks about (the call its
        ``meta["tool_call_id"]`` names, else one of its own: the request's id), and the
        reply's own call of that id when it was written already (then only the request is;
        a call still open is ended first: the request asks about its whole input)."""
        named = (start.meta or {}).get("tool_call_id")
        if isinstance(named, str) and named:
            own = next((block for block in self.blocks.values()
                        if block.kind == "tool_call" and self._call_id(block) == named), None)
            if own is not None and own.index in self._parts:
                self._on_block_stop(own, out)
            return named, own
        return start.id or f"approval_{start.index}", None

    def _delta_frame(self, kind: str, index: int) -> Callable[[str], bytes]:
        """How one text (``TEXT``) or reasoning (``REASONING``) delta of a part is framed."""
        raise NotImplementedError

    def _server_frames(self, start: BlockStart, call: str, name: str, given: Any,
                       output: Any, out: list[bytes]) -> None:
        """The frames of a server tool's call (``given``: its input) and its result."""
        raise NotImplementedError

    def _delta(self, event: Any, kind: str, text: str, out: list[bytes]) -> None:
        index = event.index
        if self._parts.get(index) != kind:
            self.drop(kind, index, f"a {kind} delta of a block that is no open {kind} "
                                   f"{self.unit}", text)
            return
        frame = self._delta_frame(kind, index)
        out.append(frame(text))
        self.learn(index, event.__class__, frame)

    def _server_tool(self, start: BlockStart, out: list[bytes]) -> None:
        read = self._servers.read(start)
        if read is None:
            self.drop(f"opaque:{start.name}", start.index,
                      "a block that is no tool, or a server tool's result whose call is not "
                      "in the reply", start.raw)
            return
        call, name, given, output = read
        self._server_frames(start, call, name, given, output, out)

    def _on_text(self, event: TextDelta, out: list[bytes]) -> None:
        self._delta(event, TEXT, event.text, out)

    def _on_refusal(self, event: RefusalDelta, out: list[bytes]) -> None:
        self._delta(event, TEXT, event.text, out)  # (a refusal is the answer's text)

    def _on_thinking(self, event: ThinkingDelta, out: list[bytes]) -> None:
        if self.kind(event.index) == "redacted_thinking":
            self.drop("thinking", event.index, "reasoning text on a redacted block", event.text)
            return
        self._delta(event, REASONING, event.text, out)
