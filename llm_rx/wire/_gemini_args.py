"""Vertex ``partialArgs``: a function call's arguments streamed value by value at JSON paths,
written out as the JSON text of the arguments as they arrive."""

from __future__ import annotations

import re
from typing import Any

import orjson

__all__ = ["PartialArgs"]

_PATH = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['([^']*)'\]|\[\"([^\"]*)\"\]")


class PartialArgs:
    """Vertex ``partialArgs`` written as the JSON text of the arguments, as they arrive.

    Each value is placed at its ``jsonPath``, opening and closing objects and arrays on the
    way; a string with ``willContinue`` stays open for the next fragment at the same path.
    Paths arrive depth first; one that goes back into a container already closed would give a
    repeated key (the text is never rewritten).
    """

    __slots__ = ("open_string", "stack")

    def __init__(self) -> None:
        self.stack: list[list[Any]] = []  # open containers: [path segment, is array, count]
        self.open_string: tuple[Any, ...] | None = None

    def add(self, arg: dict[str, Any]) -> str:
        path = tuple(
            int(m[2]) if m.lastindex == 2 else m[m.lastindex or 1]
            for m in _PATH.finditer(str(arg.get("jsonPath", "")))
        )
        more = bool(arg.get("willContinue"))
        text = arg.get("stringValue")
        out = ""
        if self.open_string is not None:
            if path == self.open_string and isinstance(text, str):
                out = orjson.dumps(text).decode()[1:-1]
                if not more:
                    out += '"'
                    self.open_string = None
                return out
            out = '"'
            self.open_string = None
        if isinstance(text, str):
            value = orjson.dumps(text).decode()
        elif "numberValue" in arg or "boolValue" in arg:
            value = orjson.dumps(arg.get("numberValue", arg.get("boolValue"))).decode()
        elif "nullValue" in arg:
            value = "null"
        else:
            return out
        if not path:
            return out
        if not self.stack:
            out += "{"
            self.stack.append(["$", False, 0])
        *containers, leaf = path
        common = 0
        for segment, entry in zip(containers, self.stack[1:], strict=False):
            if entry[0] != segment:
                break
            common += 1
        while len(self.stack) > common + 1:
            out += "]" if self.stack.pop()[1] else "}"
        for depth in range(common, len(containers)):
            out += self._member(containers[depth])
            is_array = isinstance(path[depth + 1], int)
            out += "[" if is_array else "{"
            self.stack.append([containers[depth], is_array, 0])
        out += self._member(leaf)
        if isinstance(text, str) and more:
            self.open_string = path
            return out + value[:-1]
        return out + value

    def _member(self, segment: Any) -> str:
        parent = self.stack[-1]
        out = "," if parent[2] else ""
        parent[2] += 1
        return out if isinstance(segment, int) else out + orjson.dumps(segment).decode() + ":"

    def close(self) -> str:
        out = '"' if self.open_string is not None else ""
        while self.stack:
            out += "]" if self.stack.pop()[1] else "}"
        return out
