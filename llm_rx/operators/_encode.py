"""``encode(to)``: a reply's events as the target provider's stream bytes, live."""

from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable

from ..encoders import make_encoder
from ..errors import IncompleteStreamError, LlmRxError
from ..events import Dropped, Event
from ..fold.builder import fold_error
from ._adapter import Fold, folded

__all__ = ["EncodeFold", "encode"]


def encode(
    to: str, *, dropped: list[Dropped] | None = None
) -> Callable[[Observable[Event]], Observable[bytes]]:
    """Encode the events as the stream of the target ``to`` (a key of
    ``llm_rx.encoders.ENCODERS``: a provider id, or one's other form): bytes as soon as
    each event's frame can go out (see the wait table in the translation guide).

    ```text
    events:  -S-b-t---t-e-U-M-|          events:  -S-b-t-#
    encode(P)                            encode(P)
    bytes:   -----x---x-x---y|           bytes:   -----x-#    (no terminal frame)
    ```

    Right after a source (``from_bytes``, ``from_file``, ``decode()``) it runs in the
    source's loop: one ``bytes`` value per read, not per event. After the reply's end come
    the target's terminal frames, then completion. When the events fail, the target's error
    frame (for a provider error; nothing that reads as a finished reply for a cut stream) is
    emitted, then the error is passed on, so a gateway both tells its client and knows.

    What the target cannot carry is not written: each such thing is appended, as a
    [`Dropped`][llm_rx.Dropped], to ``dropped`` (the caller's list; one encoder per
    subscription appends to it) — e.g. ``lost = []; events.pipe(encode(target,
    dropped=lost))``.

    Args:
        to: The target: a key of ``llm_rx.encoders.ENCODERS``.
        dropped: A list to append a `Dropped` to for each thing the target cannot carry.

    Returns:
        An operator for ``.pipe()``.
    """
    make_encoder(to)  # (an unknown target is refused here, not at subscription)

    return folded(lambda _source, _scheduler: EncodeFold(to, dropped))


class EncodeFold(Fold[bytes]):
    """One subscription's encoder: a read's frames as one ``bytes`` value (the body of
    `encode`; ``sse_response`` wraps it to give up on a client too slow to read)."""

    def __init__(self, to: str, dropped: list[Dropped] | None) -> None:
        self._encoder = make_encoder(to, dropped)

    def step(self, events: list[Event]) -> tuple[list[bytes], Exception | None]:
        try:
            data = self._encoder.encode(events)
        except Exception as error:  # noqa: BLE001 - a malformed event from upstream
            return [], fold_error(error)
        return ([data] if data else []), None

    def end(self, error: Exception | None) -> tuple[list[bytes], Exception | None]:
        """The terminal bytes, then completion (or the error, passed on)."""
        encoder = self._encoder
        if encoder.finished and error is None:
            return [], None
        typed = error if isinstance(error, LlmRxError) or error is None else (
            IncompleteStreamError(f"the events failed: {type(error).__name__}: {error}"))
        try:
            data = encoder.finish(typed)
        except Exception as failure:  # noqa: BLE001 - the boundary
            return [], fold_error(failure)
        values = [data] if data else []
        if error is None and encoder.stop is None:  # completed without the reply's end: a cut
            error = IncompleteStreamError("the events ended before the reply's end")
        return values, error
