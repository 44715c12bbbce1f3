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
``fan_out()`` share. Each must give exactly what the general path gives. With ``enabled``
false none is taken and nothing is shared between streams, so any input can be decoded both
ways and the outcomes compared::

    with fast_paths(False):
        slow = llm_rx.reassemble(data)
    assert llm_rx.reassemble(data) == slow

The switch is read where a shortcut is chosen, never per frame: when a decoder, a framer or a
``ChangedFields`` is made (it keeps the setting for its stream), when ``feed_all`` or
``advance_all`` is called, and when an operator is subscribed. It is process-wide and not
thread-safe: flip it only where no other thread is decoding (tests, a debugging session).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["enabled", "fast_paths"]

#: Whether shortcuts are taken (``False``: every input takes the general path).
enabled = True


@contextmanager
def fast_paths(on: bool) -> Iterator[None]:
    """Turn every speed shortcut on or off for the `with` block, then back to what it was.

    Off, each decoder and the builder take the general path, which gives the same events
    (what `tests/wire/test_fast_paths.py` holds); a decoder reads the switch when it is made.

    Args:
        on: Whether the shortcuts (byte templates, batches, learned layouts) are taken.
    """
    global enabled
    before = enabled
    enabled = on
    try:
        yield
    finally:
        enabled = before
