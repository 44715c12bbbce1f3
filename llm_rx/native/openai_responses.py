"""A ``Response`` as an OpenAI Responses ``response`` body (``POST /v1/responses``, no stream).

Blocks decoded from a Responses stream carry their item's id and fields in ``meta``: blocks of
one item are grouped back into it (a message's parts, a reasoning item's summary and text parts
with its ``encrypted_content``), server-tool items are their ``output_item.done`` item
verbatim, and the response's fields come from the stream's last snapshot (``extra``). The
final ``status`` of each item is inferred: ``completed``, or ``incomplete`` for the last item
of an incomplete response. The token logprobs (one list per response) go on the first text
part. A response of another provider is re-encoded from its canonical fields: consecutive
text and refusal blocks make one message, each thinking block a reasoning item (without a
foreign signature, which OpenAI could not read), each tool call a ``function_call``.
"""

from __future__ import annotations

from typing import Any

from ..response import (
    Block,
    OpaqueBlock,
    RefusalBlock,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
)
from ._shared import usage_body

__all__ = ["to_openai_responses"]

_INCOMPLETE = {"max_tokens": "max_output_tokens", "content_filter": "content_filter"}


def _encode_usage(usage: Usage) -> dict[str, Any]:
    prompt = usage.input_tokens or 0
    output = usage.output_tokens or 0
    return {
        "input_tokens": prompt,
        "input_tokens_details": {
            "cached_tokens": usage.cache_read_tokens or 0,
            "cache_write_tokens": usage.cache_write_tokens or 0,
        },
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens or 0},
        "total_tokens": prompt + output,
    }


def _annotation(citation: Any) -> Any:
    """A Responses annotation; an OpenAI chat ``url_citation`` is flattened to one."""
    if isinstance(citation, dict) and isinstance(citation.get("url_citation"), dict):
        return {"type": "url_citation", **citation["url_citation"]}
    return citation


class _Output:
    """Builds the ``output`` list, one item per item id (or per foreign block)."""

    def __init__(self, response: Response, same_provider: bool) -> None:
        self.same = same_provider
        self.items: list[dict[str, Any]] = []
        self._by_id: dict[str, dict[str, Any]] = {}
        self._message: dict[str, Any] | None = None  # the open foreign message
        self._logprobs = list((response.logprobs or {}).get("content") or ())

    def _item(self, block: Block, kind: str, **empty: Any) -> dict[str, Any]:
        meta = (block.meta or {}) if self.same else {}
        item_id = meta.get("item_id")
        if isinstance(item_id, str) and item_id in self._by_id:
            return self._by_id[item_id]
        fields = meta.get("item")
        item: dict[str, Any] = {"id": item_id if isinstance(item_id, str) else ""}
        item.update(fields if isinstance(fields, dict) else {"type": kind})
        for key in ("content", "summary"):
            if key in item:
                item[key] = []  # the meta's empty list stands for the key: never share it
        for key, value in empty.items():
            item.setdefault(key, value)
        if isinstance(item_id, str):
            self._by_id[item_id] = item
        self.items.append(item)
        return item

    def _part(self, block: Block, defaults: dict[str, Any]) -> dict[str, Any]:
        template = (block.meta or {}).get("part") if self.same else None
        return dict(template) if isinstance(template, dict) else dict(defaults)

    def add(self, block: Block) -> None:
        if isinstance(block, (TextBlock, RefusalBlock)):
            self._content(block)
            return
        self._message = None
        if isinstance(block, ThinkingBlock):
            self._reasoning(block)
        elif isinstance(block, ToolCallBlock):
            self._tool_call(block)
        elif self.same and isinstance(block, OpaqueBlock) and isinstance(block.raw, dict):
            meta = block.meta or {}
            if "channel" in meta:  # a part type nobody models, in its item
                self._unmodelled_part(block, meta["channel"])
            elif "item_id" in meta:  # an output item verbatim (a wire event is none)
                self.items.append(dict(block.raw))

    def _unmodelled_part(self, block: OpaqueBlock, channel: Any) -> None:
        """A part of a type nobody models, back in its item's list ``channel`` (or in
        ``content`` when the channel names no list, which no decoder writes)."""
        item = self._item(block, "message")
        parts = item.setdefault(channel, []) if isinstance(channel, str) else None
        if not isinstance(parts, list):
            parts = item.setdefault("content", [])
        parts.append(block.raw)

    def _content(self, block: TextBlock | RefusalBlock) -> None:
        if self.same and block.meta:
            item = self._item(block, "message", role="assistant", status="completed")
            item.setdefault("content", [])
        else:
            if self._message is None:
                self._message = self._item(block, "message")
                self._message.update(role="assistant", status="completed", content=[])
            item = self._message
        if isinstance(block, RefusalBlock):
            part = self._part(block, {"type": "refusal"})
            part["refusal"] = block.text
        else:
            part = self._part(block, {"type": "output_text", "annotations": [], "logprobs": []})
            annotations = [_annotation(citation) for citation in block.citations]
            if not self.same:  # only what a Responses annotation can say
                annotations = [a for a in annotations
                               if isinstance(a, dict) and a.get("type") == "url_citation"]
            part["annotations"] = annotations
            if "logprobs" in part:
                part["logprobs"], self._logprobs = self._logprobs, []
            part["text"] = block.text
        item["content"].append(part)

    def _reasoning(self, block: ThinkingBlock) -> None:
        item = self._item(block, "reasoning", summary=[])
        channel = (block.meta or {}).get("channel") if self.same else "summary"
        if channel in ("summary", "content") and (block.text or self.same):
            kind = "summary_text" if channel == "summary" else "reasoning_text"
            part = self._part(block, {"type": kind})
            part["text"] = block.text
            item.setdefault(channel, []).append(part)
        if self.same and block.signature is not None:
            item["encrypted_content"] = block.signature

    def _tool_call(self, block: ToolCallBlock) -> None:
        item = self._item(block, "function_call", status="completed")
        raw = block.raw_arguments  # as the wire had it; another provider's no-argument call
        if not self.same and not raw and block.arguments == {}:  # is "{}" here
            raw = "{}"
        item["call_id"] = block.id or ""
        item["name"] = block.name or ""
        item["input" if item.get("type") == "custom_tool_call" else "arguments"] = raw


def _statuses(items: list[dict[str, Any]], response: Response) -> None:
    """Each item's final status: it ended as the response did."""
    final = "completed" if response.complete else "in_progress"
    for position, item in enumerate(items):
        if "status" not in item or item.get("type") not in (
            "message", "reasoning", "function_call", "custom_tool_call"
        ):
            continue
        last = position == len(items) - 1
        item["status"] = "incomplete" if last and response.stop_reason in _INCOMPLETE else final


def to_openai_responses(response: Response) -> dict[str, Any]:
    """The ``response`` object (what ``POST /v1/responses`` without ``stream`` returns)."""
    same = response.provider == "openai-responses"
    output = _Output(response, same)
    for block in response.content:
        output.add(block)
    _statuses(output.items, response)
    body: dict[str, Any] = {"id": response.id or "", "object": "response", "created_at": 0}
    if same:
        body.update(response.extra)
    else:
        status, details, error = "completed", None, None
        if response.stop_reason in _INCOMPLETE:
            status, details = "incomplete", {"reason": _INCOMPLETE[response.stop_reason]}
        elif response.error is not None:
            status = "failed" if response.error.kind != "incomplete" else "in_progress"
            if response.error.kind == "provider":
                error = {"code": "server_error", "message": response.error.message}
        body.update(status=status, error=error, incomplete_details=details)
    body["model"] = response.model or ""
    body["output"] = output.items
    for key, value in (("parallel_tool_calls", True), ("tool_choice", "auto"), ("tools", [])):
        body.setdefault(key, value)
    body["usage"] = usage_body(response.usage, same, _encode_usage)
    return body
