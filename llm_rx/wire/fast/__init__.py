"""The speed mechanism, and one switch for every shortcut the library takes, to check that
each changes nothing.

The decoders say what their frames mean; the shortcuts that skip the general code live here,
and a decoder declares its frames to them:

- :mod:`.templates`: byte templates, a frame's bytes around the one string that varies
  (``ByteTemplate.learn(data, marker, value)``), and the C-level functions that read a run of
  such frames at once (``split_frames``, ``json_strings``).
- :mod:`.batches`: the engines that decode runs of a template's frames in one step (an SSE
  decoder declares a template with ``_learn(data, marker, value, event_type, block,
  keeps_empty)``: this frame, this varying string, this event), and cut huge reads into
  slices; and a live stream's usual read, one whole frame of the latest template, decoded
  without the framer (``_read_of``), its string handed straight to a consumer that only
  folds (``fold_into``).
- :mod:`.layouts`: the key layouts :class:`~llm_rx.wire.changed.ChangedFields` shares between
  streams.
- :mod:`.spans`: a frame's bytes around a string and an object of counts that both vary.
- :mod:`.openai_chat`, :mod:`.gemini`, :mod:`.ollama`: the frames each of those decoders
  declares (the shape of its last plain chunk: its keys, the values that must stay the same,
  the one delta that varies) and the hot path that reads them.

Elsewhere, behind the same switch: the framers' whole-read splits (``sse``, ``ndjson``,
``json_array``), a whole body handed over in one read decoded as a connection's reads of
64 KiB, the source's loop calling the decoder a provider check wraps directly once the
reply started (``Decoder.settled``), the builder's ``feed_all``/``advance_all`` of a read of
text deltas (and ``feed_all``'s of the deltas of several started blocks, parallel tool
calls), ``llm_rx._blocks.appender`` (a fold's strings appended to their block, for
``to_response()`` after a source and ``reassemble``), the operators
that run in their source's loop (``to_response()``, ``accumulate()``, ``text_only()``,
``thinking_only()``), and the one builder the live displays and ``to_response()`` behind a
``fan_out()`` share. Each must give exactly what the general path gives. With the switch
off none is taken and nothing is shared between streams, so any input can be decoded both
ways and the outcomes compared::

    with fast_paths(False):
        slow = llm_rx.reassemble(data)
    assert llm_rx.reassemble(data) == slow

The switch is scoped, like :mod:`decimal`'s context: a ``ContextVar`` that ``fast_paths()``
sets for its ``with`` block in the current thread or asyncio task only (a task started
inside the block inherits it; another thread, or a task started elsewhere, does not see it).
It is read where a shortcut is chosen, once for a stream, never per frame: when a decoder, a
framer, a ``ChangedFields`` or a ``ResponseBuilder`` is made (each keeps the setting), and
when a pipeline is subscribed (the operators choose then, and a source's reading runs under
the setting its subscription saw, wherever and whenever it runs), so one pipeline never
mixes the two paths.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["active", "fast_paths"]

# Whether shortcuts are taken in this thread / task (``False``: the general path only).
_ACTIVE: ContextVar[bool] = ContextVar("llm_rx_fast_paths", default=True)

#: Whether shortcuts are taken here (in this thread or task): ``True`` unless inside
#: ``fast_paths(False)``.
active = _ACTIVE.get


@contextmanager
def fast_paths(on: bool) -> Iterator[None]:
    """Turn every speed shortcut on or off for the `with` block, in the current thread or
    asyncio task only, then back to what it was.

    Off, each decoder and the builder take the general path, which gives the same events
    (what `tests/wire/test_fast_paths.py` holds). The setting is read once for a stream: a
    decoder when it is made, a pipeline when it is subscribed (its reading then keeps it,
    even if it runs after the block, or on another thread).

    Args:
        on: Whether the shortcuts (byte templates, batches, learned layouts) are taken.
    """
    token = _ACTIVE.set(bool(on))
    try:
        yield
    finally:
        _ACTIVE.reset(token)
