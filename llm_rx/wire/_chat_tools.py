"""The tool calls of a chat stream: fragments keyed by index (or, Mistral's, by id with no
index), held until their call's id and name arrive (PITFALLS 37), a legacy
``function_call`` as a call of its own."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from ..events import Event, ToolArgsDelta
from ._chat_tables import Choice
from ._checks import WireTypeError, mapping, optional_string

__all__ = ["ToolCallParts"]


class ToolCallParts:
    """The tool-call parts of :class:`~llm_rx.wire.openai_chat.OpenAIChatDecoder` (which
    opens the blocks)."""

    if TYPE_CHECKING:  # (the decoder's)
        _tool_choice: dict[int, Choice]

        def _open(self, choice: Choice, out: list[Event], kind: Any, **fields: Any) -> int: ...

    def _tool_call(
        self, choice: Choice, position: int, call: dict[str, Any], out: list[Event]
    ) -> None:
        choice.had_tools = True
        call_id = optional_string(call.get("id") or None, "a tool call's id")
        function = mapping(call.get("function") or {}, "a tool call's function")
        key = call.get("index")
        if not isinstance(key, (int, str, type(None))):
            raise WireTypeError(f"a tool call's index is {key!r}")
        if key is None:  # Mistral: no index; each listed call with an id is its own call
            key = ("id", call_id) if call_id else None
        entry = choice.tools.get(key) if key is not None else None
        if entry is not None and call_id and entry[1] and entry[1] != call_id:
            entry = None  # same index, another id: a parallel call, not a continuation
        if entry is None and key is None and call_id is None:
            last = choice.last_tool
            entry = (last, None) if last is not None else None
        arguments = function.get("arguments")
        fragment = arguments if isinstance(arguments, str) or arguments is None else (
            orjson.dumps(arguments).decode())
        if entry is None and key is not None and call_id is None and not function.get("name"):
            if fragment:  # before the call's id and name: held until they come (PITFALLS 37)
                choice.early.setdefault(key, []).append(fragment)
            return
        if entry is None:
            meta = {"type": call["type"]} if call.get("type") else None
            index = self._open(
                choice, out, "tool_call", id=call_id,
                name=optional_string(function.get("name"), "a tool call's name"), meta=meta
            )
            entry = (index, call_id)
            if key is not None:
                replaced = choice.tools.get(key)
                if replaced is not None:
                    self._tool_choice.pop(replaced[0], None)
                choice.tools[key] = entry
                self._tool_choice[index] = choice
                for held in choice.early.pop(key, ()):
                    out.append(ToolArgsDelta(index, held))
        index = entry[0]
        choice.last_tool = index
        if fragment:
            out.append(ToolArgsDelta(index, fragment))

    def _open_early(self, choice: Choice, out: list[Event]) -> None:
        """Calls whose id and name never came, opened without them (their arguments kept)."""
        for key, fragments in choice.early.items():
            index = self._open(choice, out, "tool_call")
            choice.tools[key] = (index, None)
            self._tool_choice[index] = choice
            out.extend(ToolArgsDelta(index, fragment) for fragment in fragments)
        choice.early.clear()
