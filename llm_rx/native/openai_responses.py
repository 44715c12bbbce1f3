"""A ``Response`` as an OpenAI Responses ``response`` body (``POST /v1/responses``, no stream).

Blocks decoded from a Responses stream carry their item's id and fields in ``meta``: blocks of
one item are grouped back into it (a message's parts, a reasoning item's summary and text parts
with its ``encrypted_content``), server-tool items are their ``output_item.done`` item
verbatim, and the response's fields come from the stream's last snapshot (``extra``). The
final ``status`` of each item is inferred: ``completed``, or ``incomplete`` for the last item
of an incomplete response. The token logprobs (one list per response) go on the first text
part. A response of another provider is re-encoded from its canonical fields: consecutive
text and refusal blocks make one message (another provider's block that has no item here
does not split it), each thinking block a reasoning item (its text a ``reasoning_text`` part,
its signature or redacted data ``encrypted_content``), each tool call a ``function_call``,
items named as :mod:`._responses_resource` names them, and the response has every field the
Open Responses specification requires: the body equals the ``response.completed`` that
``encode("openai-responses")`` writes for the same reply.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..response import (
    ApprovalRequestBlock,
    Block,
    ErrorInfo,
    OpaqueBlock,
    RefusalBlock,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
)
from ..wire.finished import RESPONSES_FINISHED
from ._responses_resource import (
    approval_item,
    item_id,
    resource,
    resource_usage,
    responses_citation,
)
from ._shared import usage_body
from ._tables import STOP

__all__ = ["to_openai_responses"]

_INCOMPLETE = STOP["openai-responses"]  # (the reasons of an incomplete response)


def _annotation(citation: Any) -> Any:
    """A Responses annotation; an OpenAI chat ``url_citation`` is flattened to one."""
    if isinstance(citation, dict) and isinstance(citation.get("url_citation"), dict):
        return {"type": "url_citation", **citation["url_citation"]}
    return citation


class _Output:
    """Builds the ``output`` list, one item per item id (or per foreign block)."""

    def __init__(self, response: Response, same_provider: bool) -> None:
        self.same = same_provider
        self.response_id = response.id
        self.items: list[dict[str, Any]] = []
        self._by_id: dict[str, dict[str, Any]] = {}
        self._message: dict[str, Any] | None = None  # the open foreign message
        self._logprobs = list((response.logprobs or {}).get("content") or ())

    def _item(self, block: Block, kind: str, **empty: Any) -> dict[str, Any]:
        meta = (block.meta or {}) if self.same else {}
        key = meta.get("item_id")
        if isinstance(key, str) and key in self._by_id:
            return self._by_id[key]
        fields = meta.get("item")
        own = item_id(kind, self.response_id, len(self.items)) if not self.same else ""
        item: dict[str, Any] = {"id": key if isinstance(key, str) else own}
        item.update(fields if isinstance(fields, dict) else {"type": kind})
        for field in ("content", "summary"):
            if field in item:
                item[field] = []  # the meta's empty list stands for the key: never share it
        for field, value in empty.items():
            item.setdefault(field, value)
        if isinstance(key, str):
            self._by_id[key] = item
        self.items.append(item)
        return item

    def _part(self, block: Block, defaults: dict[str, Any]) -> dict[str, Any]:
        template = (block.meta or {}).get("part") if self.same else None
        return dict(template) if isinstance(template, dict) else dict(defaults)

    def add(self, block: Block, index: int) -> None:
        if isinstance(block, (TextBlock, RefusalBlock)):
            self._content(block)
            return
        if isinstance(block, ApprovalRequestBlock):  # (an item of its own, any provider's)
            self._message = None
            number = len(self.items)
            self.items.append(approval_item(block, self.same, item_id(
                "mcp_approval_request", self.response_id, number)))
            return
        if not self.same and not isinstance(block, (ThinkingBlock, ToolCallBlock)):
            return  # (another provider's block: no item here, so no split either)
        self._message = None
        if isinstance(block, ThinkingBlock):
            self._reasoning(block)
        elif isinstance(block, ToolCallBlock):
            self._tool_call(block, index)
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
            if self.same:
                part["annotations"] = [_annotation(citation) for citation in block.citations]
            else:  # only what a Responses annotation can say
                flat = (responses_citation(citation) for citation in block.citations)
                part["annotations"] = [a for a in flat if a is not None]
            if "logprobs" in part:
                part["logprobs"], self._logprobs = self._logprobs, []
            part["text"] = block.text
        item["content"].append(part)

    def _reasoning(self, block: ThinkingBlock) -> None:
        item = self._item(block, "reasoning", summary=[])
        channel = (block.meta or {}).get("channel") if self.same else "content"
        if channel in ("summary", "content") and (self.same or not block.redacted):
            kind = "summary_text" if channel == "summary" else "reasoning_text"
            part = self._part(block, {"type": kind})
            part["text"] = block.text
            item.setdefault(channel, []).append(part)
        if block.signature is not None:
            item["encrypted_content"] = block.signature

    def _tool_call(self, block: ToolCallBlock, index: int) -> None:
        item = self._item(block, "function_call", status="completed")
        raw = block.raw_arguments  # as the wire had it; another provider's no-argument call
        if not self.same and not raw and block.arguments == {}:  # is "{}" here
            raw = "{}"
        item["call_id"] = block.id or ("" if self.same else f"call_{index}")
        item["name"] = block.name or ""
        item["input" if item.get("type") == "custom_tool_call" else "arguments"] = raw


def _statuses(items: list[dict[str, Any]], response: Response, same: bool) -> None:
    """Each item's final status: it ended as the response did (a limit ends the last item,
    of another provider's reply the message still being written); an item of an unfinished
    Responses reply keeps the end its own wire gave it."""
    final = "completed" if response.complete else "in_progress"
    for position, item in enumerate(items):
        if "status" not in item or item.get("type") not in (
            "message", "reasoning", "function_call", "custom_tool_call"
        ):
            continue
        if same and not response.complete and item["status"] in ("completed", "incomplete"):
            continue
        last = position == len(items) - 1 and (same or item.get("type") == "message")
        item["status"] = "incomplete" if last and response.stop_reason in _INCOMPLETE else final


def to_openai_responses(response: Response) -> dict[str, Any]:
    """The ``response`` object (what ``POST /v1/responses`` without ``stream`` returns)."""
    same = response.provider == "openai-responses"
    output = _Output(response, same)
    for index, block in enumerate(response.content):
        output.add(block, index)
    _statuses(output.items, response, same)
    if not same:
        status, details, error = "completed", None, None
        if response.stop_reason in _INCOMPLETE:
            status, details = "incomplete", {"reason": _INCOMPLETE[response.stop_reason]}
        elif response.error is not None:
            status, error = _failure(response.error)
        return resource(
            id=response.id, model=response.model, status=status, fields=response.extra,
            output=output.items, usage=response.usage, error=error,
            incomplete_details=details,
            tools=[b.name or "" for b in response.content if isinstance(b, ToolCallBlock)])
    body: dict[str, Any] = {"id": response.id or "", "object": "response", "created_at": 0}
    body.update(response.extra)
    if response.error is not None and (
        body.get("status") is None or not _said(body["status"], response.error.kind)
    ):
        body["status"], body["error"] = _failure(response.error)  # (the wire's own error)
    body["model"] = response.model or ""
    body["output"] = output.items
    for key, value in (("parallel_tool_calls", True), ("tool_choice", "auto"), ("tools", [])):
        body.setdefault(key, value)
    body["usage"] = usage_body(response.usage, same, _usage_of)
    return _in_order(body)


_HEAD = ("id", "object", "created_at", "status")
_PLACED = ("model", "output", "usage")  # (the fields the stream's snapshot does not keep)


def _in_order(body: dict[str, Any]) -> dict[str, Any]:
    """The body with ``model``, ``output`` and ``usage`` where OpenAI writes them: after the
    four leading fields its keys are in alphabetical order (so a body read back gives the
    same bytes: a ``failed`` body's error frame is the same evidence)."""
    keys = [key for key in body if key not in _PLACED]
    for field in _PLACED:
        later = (n for n, key in enumerate(keys) if key not in _HEAD and key > field)
        keys.insert(next(later, len(keys)), field)
    return {key: body[key] for key in keys}


def _said(status: Any, kind: str) -> bool:
    """Whether a Responses reply's own last status says already how it ended (a ``failed``
    or ``cancelled`` body read back; one ``queued``, or with a status nobody knows, that has
    not finished), so it is kept; an ``error`` event leaves ``in_progress``, which says
    nothing of the failure."""
    if kind == "incomplete":
        return status not in RESPONSES_FINISHED
    return bool(status == ("cancelled" if kind == "cancelled" else "failed"))


def _failure(error: ErrorInfo) -> tuple[str, dict[str, Any] | None]:
    """The status and ``error`` object of a reply that did not finish: ``failed`` with the
    provider's error (its own object when the offending frame was a Responses one: a
    ``response.failed`` or an ``error`` event), ``cancelled``, or ``in_progress`` for a reply
    cut short (no error: nothing failed, it did not end)."""
    if error.kind == "cancelled":
        return "cancelled", None
    if error.kind == "incomplete":
        return "in_progress", None
    return "failed", _error_object(error)


def _error_object(error: ErrorInfo) -> dict[str, Any]:
    try:
        frame = orjson.loads(error.raw) if error.raw else None
    except orjson.JSONDecodeError:
        frame = None
    own: Any = None
    if isinstance(frame, dict) and frame.get("type") == "response.failed":
        response = frame.get("response")
        own = response.get("error") if isinstance(response, dict) else None
    elif isinstance(frame, dict) and frame.get("type") == "error":
        # (a response's error is ``{code, message}``, as the ``response.failed`` after the
        # event and a retrieve of the response have it: the event's ``type`` and ``param``
        # are the event's own)
        nested = frame.get("error")
        source = nested if isinstance(nested, dict) else frame
        own = {key: source[key] for key in ("code", "message") if key in source}
    if isinstance(own, dict) and isinstance(own.get("message"), str):
        return {"code": own.get("code") or "server_error", **{
            key: value for key, value in own.items() if key != "code"}}
    return {"code": "server_error", "message": error.message}


def _usage_of(usage: Usage) -> dict[str, Any]:
    return resource_usage(usage) or {}
