"""Speculation, and the one switch that turns it off, to check that it changes nothing.

The decoders in :mod:`llm_rx.wire` are plain: each frame read by the general rules. Here are
subclasses of some of them that take shortcuts, learnt from the frames the plain decoder
decoded and handing it every frame they do not recognise:

- :mod:`.templates`: byte templates, a frame's bytes around the one string that varies
  (``ByteTemplate.learn(data, marker, value)``), and the C-level functions that read a run of
  such frames at once (``split_frames``, ``json_strings``).
- :mod:`.batches`: the engines that decode runs of a template's frames in one step, cut huge
  reads into slices, and decode a live stream's usual read (one whole frame of the latest
  template) without the framer, its string handed straight to a consumer that only folds
  (``fold_into``).
- :mod:`.spans`: a frame's bytes around a string and an object of counts that both vary.
- :mod:`.anthropic`, :mod:`.openai_chat`, :mod:`.gemini`, :mod:`.ollama`: the decoders with
  shortcuts (the bytes of the last delta frame; the shape
  of the last plain chunk: its keys, the values that must stay the same, the one delta that
  varies), listed by provider in :func:`decoders`.
- :mod:`.responses`: the Responses decoder with shortcuts: a text delta frame as a regular
  expression, its string, sequence number, padding and item id free (kept from reply to
  reply, by shape).

Only the sources (:mod:`llm_rx.sources`) read the switch, and make these decoders when it is
on. Each must give exactly what the plain decoder gives. With the switch off none is made,
so any input can be decoded both ways and the outcomes compared::

    with fast_paths(False):
        slow = llm_rx.reassemble(data)
    assert llm_rx.reassemble(data) == slow

The switch is scoped, like :mod:`decimal`'s context: a ``ContextVar`` that ``fast_paths()``
sets for its ``with`` block in the current thread or asyncio task only (a task started
inside the block inherits it; another thread, or a task started elsewhere, does not see it).
It is read once for a stream, never per frame: when a source's reading makes its decoder,
under the setting its subscription saw (wherever and whenever it runs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..wire.base import Decoder

__all__ = ["active", "compiled", "decoders", "fast_paths"]

# Whether shortcuts are taken in this thread / task (``False``: the plain decoders only).
_ACTIVE: ContextVar[bool] = ContextVar("llm_rx_fast_paths", default=True)

#: Whether shortcuts are taken here (in this thread or task): ``True`` unless inside
#: ``fast_paths(False)``.
active = _ACTIVE.get

#: Whether the compiled core (:mod:`.core`, the C extension) is in use: built, and not turned
#: off by ``LLM_RX_NO_EXTENSIONS=1`` when ``llm_rx.speed`` was imported. ``fast_paths(False)``
#: turns it off with every other shortcut.
compiled: bool = False


@contextmanager
def fast_paths(on: bool) -> Iterator[None]:
    """Turn every speed shortcut on or off for the `with` block, in the current thread or
    asyncio task only, then back to what it was.

    Off, the sources make the plain decoders, which give the same events (what
    `tests/wire/test_fast_paths.py` holds). The setting is read once for a stream: when its
    source's reading makes the decoder, under the setting the pipeline's subscription saw
    (even if it runs after the block, or on another thread).

    Args:
        on: Whether the shortcuts (byte templates, batches, learned layouts) are taken.
    """
    token = _ACTIVE.set(bool(on))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


@cache
def decoders() -> Mapping[str, Callable[[int], Decoder]]:
    """The decoder with shortcuts for each provider that has one (the others' plain
    decoders take none): what a source makes with the switch on."""
    from .anthropic import AnthropicShortcuts
    from .gemini import GeminiShortcuts
    from .ollama import OllamaShortcuts
    from .openai_chat import OpenAIChatShortcuts
    from .responses import ResponsesShortcuts

    found: dict[str, type[Decoder]] = {
        "anthropic": AnthropicShortcuts,
        "openai-chat": OpenAIChatShortcuts,
        "gemini": GeminiShortcuts,
        "ollama": OllamaShortcuts,
        "openai-responses": ResponsesShortcuts,
    }
    if compiled:  # (each over the compiled core; Bedrock's learns only for it)
        from .bedrock import BedrockShortcuts
        from .core import over_core

        found["bedrock-converse"] = BedrockShortcuts
        found = {provider: over_core(cls) for provider, cls in found.items()}
    return MappingProxyType(found)


def _core() -> bool:
    from .core import scan

    return scan is not None


compiled = _core()
