"""Which decoder reads which provider's stream; telling the provider when it is not given,
and checking it when it is.

Provider ids (:data:`~llm_rx.wire.providers.ProviderId`): ``anthropic``,
``bedrock-converse``, ``cohere``, ``gemini``, ``gemini-interactions``, ``ollama``, ``openai-chat``,
``openai-completions``, ``openai-responses``, all decoded here and recognised by
:func:`~llm_rx.wire.sniff.sniff`; so are the browser protocols
(:data:`~llm_rx.wire.providers.UI_STREAMS`: ``ag-ui``, ``vercel-ui``), read as replies. A
decoder made for a given provider checks the first frames too: a body that is plainly
another provider's stream (or no stream at all) fails at its first frame, not after the whole
body was read and dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..errors import LlmRxError, NonStreamBodyError, WireFormatError
from ..events import Event
from .ag_ui import AgUIDecoder
from .anthropic import AnthropicDecoder
from .base import Decoder, attach_events
from .bedrock import BedrockDecoder
from .cohere import CohereDecoder
from .gemini import GeminiDecoder
from .gemini_interactions import GeminiInteractionsDecoder
from .ollama import OllamaDecoder
from .openai_chat import OpenAIChatDecoder
from .openai_completions import OpenAICompletionsDecoder
from .openai_responses import OpenAIResponsesDecoder
from .providers import PROVIDERS, ProviderName, StreamId, stream_id
from .sniffing import SNIFF_LIMIT, HeadScanner, looks_nonstream, sniff
from .sse import DEFAULT_MAX_FRAME
from .vercel_ui import VercelUIDecoder

__all__ = [
    "DECODERS",
    "PROVIDERS",
    "SNIFF_LIMIT",
    "CheckedDecoder",
    "SniffingDecoder",
    "looks_nonstream",
    "make_decoder",
    "sniff",
]

# Readers of binary messages: the first byte of text fails them, so a text body is held until
# the scanner's first frame tells whose stream it is (the error is then the same however the
# body was cut; the scanner bounds what is held).
_BINARY = frozenset({"bedrock-converse"})

DECODERS: dict[StreamId, Callable[[int], Decoder]] = {
    "openai-chat": OpenAIChatDecoder,
    "openai-completions": OpenAICompletionsDecoder,
    "anthropic": AnthropicDecoder,
    "ollama": OllamaDecoder,
    "bedrock-converse": BedrockDecoder,
    "openai-responses": OpenAIResponsesDecoder,
    "gemini": GeminiDecoder,
    "gemini-interactions": GeminiInteractionsDecoder,
    "cohere": CohereDecoder,
    "ag-ui": AgUIDecoder,
    "vercel-ui": VercelUIDecoder,
}


#: The decoder to make for each provider (`DECODERS`, or a caller's table of subclasses).
Decoders = Mapping[str, Callable[[int], Decoder]]


def _new(provider: StreamId, max_frame: int, decoders: Decoders | None = None) -> Decoder:
    factory = (decoders or DECODERS).get(provider) or DECODERS.get(provider)
    if factory is None:
        raise WireFormatError(f"the {provider!r} wire format is not supported by this release")
    return factory(max_frame)


def make_decoder(
    provider: ProviderName,
    max_frame: int = DEFAULT_MAX_FRAME,
    *,
    decoders: Decoders | None = None,
) -> Decoder:
    """A fresh decoder for `provider`, checking that the body is that provider's stream.

    Args:
        provider: An id from `PROVIDERS`, or an alias (`"openai"`, `"claude"`).
        max_frame: The longest frame read, in bytes; a longer one is a `FrameTooLargeError`.
        decoders: The decoder class to make for each provider, where it is not the plain
            one of `DECODERS` (the sources give subclasses that take shortcuts).

    Returns:
        A `CheckedDecoder`: a body that is plainly another provider's stream (or no stream)
            fails at its first frame.
    """
    name = stream_id(provider)
    return CheckedDecoder(_new(name, max_frame, decoders), name)


def _nonstream_error(provider: str, head: bytes, expected: str | None = None) -> WireFormatError:
    """A non-stream body: the expected provider's (or, none expected, any provider's) is a
    ``NonStreamBodyError``, read as the reply it is; another provider's is refused."""
    stream = f"a {expected} event stream" if expected else "a stream"
    message = f"the body is a non-stream {provider} response (one JSON object), not {stream}"
    if expected is not None and expected != provider:
        return WireFormatError(message, head[:200])
    return NonStreamBodyError(message, head[:200], provider=provider)


class _Wrapper(Decoder):
    """A decoder handing the work to ``inner`` (once there is one)."""

    provider = "unknown"
    inner: Decoder | None

    @property
    def started(self) -> bool:
        return self.inner is not None and self.inner.started

    @started.setter
    def started(self, value: bool) -> None:
        pass

    @property
    def finished(self) -> bool:
        return self._failed or (self.inner is not None and self.inner.finished)

    @finished.setter
    def finished(self, value: bool) -> None:
        if value:  # (finished from outside: an error the decoder did not raise itself)
            self._failed = True

    def __init__(self) -> None:
        self._failed = False
        super().__init__()

    def _fail_with(self, error: LlmRxError) -> LlmRxError:
        self._failed = True
        return attach_events(error, [])


# Where each provider's reader ends its first frame, for the look at the head: an NDJSON
# line, an SSE event. Bedrock's binary messages are told by their first byte (text is no
# event stream: the line that tells whose it is decides).
_FIRST_FRAME: dict[str, str] = {"ollama": "line", "bedrock-converse": "line"}


class CheckedDecoder(_Wrapper):
    """`inner`, the decoder of the provider given, and a look at the first frames.

    Until the first frames tell whose stream it is, each read goes past a scanner first. A
    frame that only another provider sends is a `WireFormatError` raised from the `decode`
    call that completed it, with the frame, before `inner` reads it, and so is another
    provider's non-stream body; the provider's own non-stream body is a
    `NonStreamBodyError` (the sources then read it as the reply it is), and an error body
    (``{"error": {...}}``) the `ProviderError` `from_native` gives. A body that starts as
    JSON (``{``) is held until the scanner tells what it is, so a reader of lines or of
    binary messages never reads a non-stream body as its own frames: naming the provider
    never does worse than sniffing.

    Args:
        inner: The decoder of the provider given.
        provider: That provider's id.
    """

    def __init__(self, inner: Decoder, provider: StreamId) -> None:
        super().__init__()
        self.inner: Decoder = inner
        self.expected = provider
        self._scanner: HeadScanner | None = HeadScanner(
            first_frame=_FIRST_FRAME.get(provider, "event")
        )
        self._held: list[bytes] = []  # a JSON body's reads, until the scanner tells

    def settled(self) -> Decoder:
        # (once ``inner`` started or finished, ``_check`` drops the scanner at the next read
        # and passes every read on)
        inner = self.inner
        if self._failed or not (self._scanner is None or inner.started or inner.finished):
            return self
        return inner

    def decode(self, chunk: bytes) -> list[Event]:
        scanner = self._scanner
        if scanner is not None:
            self._check(scanner.feed(chunk) is not None)
            if self._failed:
                return []
            told = scanner.first_byte_tells
            undecided = not scanner.decided and (
                told not in (None, self.expected)
                or (self.expected in _BINARY and told != self.expected)
            )
            if scanner.pending_object or undecided:
                # (what the first frame is decides, not where the reads end)
                self._held.append(chunk)
                return []
        if self._held:
            chunk = b"".join([*self._held, chunk])
            self._held = []
        if self._failed:
            return []
        return self.inner.decode(chunk)

    def flush(self) -> list[Event]:
        if self._scanner is not None:
            self._scanner.finish()
            self._check(True)
        if self._failed:
            return []
        if not self._held:
            return self.inner.flush()
        events = self.inner.decode(b"".join(self._held))
        self._held = []
        try:
            return events + self.inner.flush()
        except LlmRxError as error:
            raise attach_events(error, [*events, *error.events]) from None

    def _check(self, told: bool) -> None:
        scanner = self._scanner
        assert scanner is not None
        if self.inner.started or self.inner.finished or scanner.gave_up:
            # its own frames came first (trust them), or it failed by itself already
            self._scanner = None
            return
        if scanner.error is not None:
            self._scanner = None
            raise self._fail_with(scanner.error)
        if scanner.nonstream is not None:
            self._scanner = None
            raise self._fail_with(
                _nonstream_error(scanner.nonstream, scanner.head, self.expected)
            )
        verdict = scanner.verdict
        if told and verdict is not None:
            self._scanner = None
            if verdict.strong and verdict.provider != self.expected:
                raise self._fail_with(WireFormatError(
                    f"the body is not a {self.expected} stream (its first frame is "
                    f"{verdict.provider}'s)",
                    verdict.raw,
                ))


class SniffingDecoder(_Wrapper):
    """Holds the first bytes until they tell the provider, then decodes as it.

    Args:
        max_frame: The longest frame read, in bytes (of the decoder it then makes).
        decoders: The decoder class to make for each provider (see `make_decoder`).
    """

    def __init__(
        self, max_frame: int = DEFAULT_MAX_FRAME, *, decoders: Decoders | None = None
    ) -> None:
        super().__init__()
        self._max_frame = max_frame
        self._decoders = decoders
        self._scanner = HeadScanner()
        self.inner = None

    def settled(self) -> Decoder:
        return self.inner.settled() if self.inner is not None and not self._failed else self

    def decode(self, chunk: bytes) -> list[Event]:
        if self.inner is not None:
            return self.inner.decode(chunk)
        if self._failed:
            return []
        scanner = self._scanner
        verdict = scanner.feed(chunk)
        if verdict is None:
            if scanner.error is not None:
                raise self._fail_with(scanner.error)
            if scanner.nonstream is not None:
                raise self._fail_with(_nonstream_error(scanner.nonstream, scanner.head))
            if scanner.gave_up:
                raise self._fail_with(WireFormatError(
                    "could not tell which provider's stream this is", scanner.head[:200]
                ))
            return []
        self.inner = _new(stream_id(verdict.provider), self._max_frame, self._decoders)
        return self.inner.decode(scanner.head)

    def flush(self) -> list[Event]:
        if self.inner is not None:
            return self.inner.flush()
        if self._failed:
            return []
        scanner = self._scanner
        verdict = scanner.finish()
        head = scanner.head
        if scanner.error is not None:
            raise self._fail_with(scanner.error)
        if scanner.nonstream is not None:
            raise self._fail_with(_nonstream_error(scanner.nonstream, head))
        if verdict is None:
            raise self._fail_with(WireFormatError(
                "could not tell which provider's stream this is" if head.strip()
                else "the stream is empty",
                head[:200] or None,
            ))
        self.inner = _new(stream_id(verdict.provider), self._max_frame, self._decoders)
        events = self.inner.decode(head)
        try:
            return events + self.inner.flush()
        except LlmRxError as error:
            raise attach_events(error, [*events, *error.events]) from None
