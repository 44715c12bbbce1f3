"""``partial_json()``: a tool call's arguments, or a JSON answer, parsed so far as it streams."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeAlias

import reactivex
from pydantic import BaseModel, TypeAdapter, ValidationError
from reactivex import Observable, abc

from ..errors import StructuredOutputError
from ..events import BlockStart, BlockStop, Event, MessageStop, TextDelta, ToolArgsDelta
from ..fold.partial import JSON_START, partial_parser

__all__ = ["GROWTH", "PartialJson", "PartialValue", "Schema", "Schemas", "partial_json"]

#: The text is parsed again once it grew by this fraction since the last parse: the whole
#: stream then costs a bounded number of passes over its final text (about ``1 + 1 / GROWTH``
#: of them), not one per delta (which is quadratic in its length).
GROWTH = 0.25

Schema: TypeAlias = "type[Any] | TypeAdapter[Any]"
Schemas: TypeAlias = "Schema | Mapping[str, Schema] | Mapping[str | None, Schema]"


class PartialValue(NamedTuple):
    """The value of block ``index`` parsed so far (or validated: then the model).

    ``id`` and ``name`` are the tool call's (``None`` for a JSON answer in a text block);
    ``done`` says the block ended and ``value`` is final.
    """

    index: int  # type: ignore[assignment]  # shadows tuple.index(), on purpose
    id: str | None
    name: str | None
    value: Any
    done: bool


def _adapter(schema: Schema | None) -> TypeAdapter[Any] | None:
    if schema is None or isinstance(schema, TypeAdapter):
        return schema
    return TypeAdapter(schema)


def _dumped(value: Any) -> Any:
    return value.model_dump() if isinstance(value, BaseModel) else value


@dataclass
class _Block:
    id: str | None
    name: str | None
    tool: bool  # a tool call's arguments (always JSON), else a text block
    json: bool = True  # (a text that opens as prose, or a free-form tool input, is none)
    opened: bool = False  # its first character that is no blank arrived (json is known)
    skip: int = 0  # (what comes before the JSON: blanks, a Markdown code fence's line)
    parts: list[str] = field(default_factory=list)
    size: int = 0
    parsed_at: int = 0
    last: Any = None
    has_last: bool = False


@dataclass
class PartialJson:
    """The pure state of `partial_json()` for one reply: ``feed(event)`` gives the values
    to emit; it raises `StructuredOutputError` for a finished block whose text is no JSON
    or fails the schema."""

    schema: Schemas | None = None
    _parse: Callable[[str], Any] = field(default_factory=partial_parser)
    _blocks: dict[int, _Block] = field(default_factory=dict)
    _adapters: dict[str | None, TypeAdapter[Any] | None] = field(default_factory=dict)

    def _schema_for(self, name: str | None) -> TypeAdapter[Any] | None:
        if name not in self._adapters:
            schema: Any = self.schema
            if isinstance(schema, Mapping):  # (tool name, or None for the answer -> schema)
                schema = schema.get(name)
            self._adapters[name] = _adapter(schema)
        return self._adapters[name]

    def feed(self, event: Event) -> list[PartialValue]:
        if isinstance(event, BlockStart):
            if event.kind in ("tool_call", "text"):
                self._blocks[event.index] = _Block(event.id, event.name, event.kind == "tool_call")
            return []
        if isinstance(event, ToolArgsDelta | TextDelta):
            block = self._blocks.get(event.index)
            if block is None:  # (a delta whose block start never came)
                block = self._blocks[event.index] = _Block(
                    None, None, isinstance(event, ToolArgsDelta)
                )
            return self._grow(event.index, block, event[1])
        if isinstance(event, BlockStop):
            block = self._blocks.pop(event.index, None)
            return [] if block is None else self._final(event.index, block)
        if isinstance(event, MessageStop):  # (blocks left open end with the reply)
            out: list[PartialValue] = []
            for index in sorted(self._blocks):
                out += self._final(index, self._blocks.pop(index))
            return out
        return []

    def _grow(self, index: int, block: _Block, text: str) -> list[PartialValue]:
        if not block.json:
            return []
        block.parts.append(text)
        block.size += len(text)
        if not block.opened:  # (until then the text is blanks, or a fence line: short)
            raw = "".join(block.parts)
            opening = _fenced_opening(raw) if not block.tool else raw.lstrip()
            if opening is None or not opening.lstrip():
                return []  # (a fence line, or blanks: not known yet)
            block.opened = True
            block.skip = len(raw) - len(opening)
            block.json = opening.lstrip().startswith(JSON_START)
            if not block.json:
                block.parts = []
                return []
        if block.size < block.parsed_at * (1 + GROWTH) + 1:
            return []
        block.parsed_at = block.size
        joined = "".join(block.parts)
        block.parts = [joined]
        try:
            value = self._parse(_unfenced(joined, block.skip))
        except ValueError:  # (a prefix jiter cannot read yet: wait for more)
            return []
        adapter = self._schema_for(block.name)
        if adapter is not None:
            try:
                value = adapter.validate_python(value, experimental_allow_partial=True)
            except ValidationError:  # (not valid so far: nothing to show yet)
                return []
        if block.has_last and _dumped(value) == _dumped(block.last):
            return []
        block.last, block.has_last = value, True
        return [PartialValue(index, block.id, block.name, value, False)]

    def _final(self, index: int, block: _Block) -> list[PartialValue]:
        if not block.json or not (block.opened or block.tool):
            return []  # (a text block of prose, or of blanks; a free-form tool input)
        whole = "".join(block.parts)
        text = _unfenced(whole, block.skip)
        if not text:
            value: Any = {}  # a call without argument fragments has no arguments
        else:
            try:
                value = json.loads(text)
            except ValueError as error:
                raise StructuredOutputError(
                    f"block {index}'s text is no JSON: {error}", whole, index=index
                ) from None
        adapter = self._schema_for(block.name)
        if adapter is not None:
            try:
                value = adapter.validate_python(value)
            except ValidationError as error:
                raise StructuredOutputError(
                    f"block {index}'s value does not validate: {error.error_count()} error(s)",
                    whole, index=index, errors=error.errors(include_url=False),
                ) from None
        return [PartialValue(index, block.id, block.name, value, True)]


def _fenced_opening(raw: str) -> str | None:
    """A text block's text from where its JSON may open: after its blanks, and after a
    Markdown fence line (```` ```json ```` or ```` ``` ````) when it opens with one — which
    models write around a JSON answer very often; ``None`` while the fence line has not
    ended (it is not known yet what follows)."""
    opening = raw.lstrip()
    if not opening.startswith("`"):
        return opening
    line, newline, rest = opening.partition("\n")
    if not newline:
        return None if "```".startswith(line[:3]) else opening
    if line.startswith("```") and line[3:].strip().lower() in ("", "json"):
        return rest
    return opening


def _unfenced(text: str, skip: int) -> str:
    """The JSON part of a block's text: the whole text, or for a fenced answer (``skip`` its
    fence line) what comes before its closing fence. A JSON text holds no raw newline, so
    the first newline followed by a backtick is the fence's (a partial one at the very end
    too)."""
    if not skip:
        return text
    text = text[skip:]
    cut = text.find("\n`")
    return text if cut < 0 else text[:cut]


def partial_json(
    schema: Schemas | None = None,
) -> Callable[[Observable[Event]], Observable[PartialValue]]:
    """The value of each tool call's arguments, and of a JSON answer, parsed so far.

    ```text
    events:  -S-b(0,call_1)-a('{"q": "ab')-a('c", "n": 1')-a('2}')-e(0)-M-|
    partial_json()
    result:  --------------P({q:"ab"})----P({q:"abc"})--------P({q:"abc",n:12},done)-|
    ```

    A block counts as JSON when its text opens with ``{`` or ``[`` — also inside a Markdown
    code fence (```` ```json ````, which models often write around a JSON answer: the fence
    lines are not part of the value); other text (prose, a free-form tool input) is left
    alone; a tool call without any text is ``{}``.
    ``schema`` (a pydantic model, any type, or a ``TypeAdapter``; or a mapping of tool
    name, ``None`` for the answer, to one) validates each value in partial mode, and a value
    that does not validate so far is not emitted; the final one is validated in full.
    A finished block whose text is no JSON or fails its schema is an ``on_error``
    [`StructuredOutputError`][llm_rx.StructuredOutputError] carrying the whole text.

    Values never go backwards: a number at the very end of the text is left out until the
    text shows it ended, and a value equal to the last one is not emitted again. The last
    value of a block (``done``) is ``json.loads`` of its text; a block the stream never
    ended gets none. The text is re-parsed (by ``jiter``, partial mode) only once it grew by
    `GROWTH` since the last parse, so a long answer costs a few passes over its text.

    Args:
        schema: What each value is validated as (see above); ``None``: any JSON.

    Returns:
        An operator for ``.pipe()``.
    """

    def operator(source: Observable[Event]) -> Observable[PartialValue]:
        def subscribe(
            observer: abc.ObserverBase[PartialValue], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            state = PartialJson(schema)
            failed = False

            def on_next(event: Event) -> None:
                nonlocal failed
                if failed:
                    return
                try:
                    out = state.feed(event)
                except Exception as error:  # noqa: BLE001 - the block's text, or bad upstream
                    failed = True
                    observer.on_error(error)
                    return
                for value in out:
                    observer.on_next(value)

            def on_error(error: Exception) -> None:
                if not failed:
                    observer.on_error(error)

            def on_completed() -> None:
                if not failed:
                    observer.on_completed()

            return source.subscribe(on_next, on_error, on_completed, scheduler=scheduler)

        return reactivex.create(subscribe)

    return operator
