"""llm-rx: LLM provider streams as ReactiveX observables of typed events.

::

    import llm_rx
    from llm_rx import operators as lxo

    events = llm_rx.from_file("reply.sse")          # provider sniffed from the bytes
    response = llm_rx.reassemble(body)              # the same engine, no Rx needed
    events.pipe(lxo.text_only()).subscribe(print)
"""


import importlib as _importlib
import typing as _typing

__version__ = "0.1.0"

#: Where each public name lives: imported on first use, so ``import llm_rx`` costs almost
#: nothing and a path imports only what it uses (``from_bytes`` never loads the encoders).
_LAZY: dict[str, str] = {
    "PROVIDERS": ".wire.registry",
    "ApprovalRequestBlock": ".response",
    "BlockStart": ".events",
    "BlockStop": ".events",
    "CancelledStreamError": ".errors",
    "Choice": ".response",
    "Cursor": ".wire.resume",
    "ChoiceEnd": ".events",
    "CitationDelta": ".events",
    "Custom": ".events",
    "Dropped": ".events",
    "ErrorInfo": ".response",
    "Event": ".events",
    "FrameTooLargeError": ".errors",
    "IncompleteStreamError": ".errors",
    "LlmRxError": ".errors",
    "LogprobsDelta": ".events",
    "MessageDrop": ".encoders.messages",
    "MessageStart": ".events",
    "MessageStop": ".events",
    "MetadataUpdate": ".events",
    "NonStreamBodyError": ".errors",
    "Opaque": ".events",
    "OpaqueBlock": ".response",
    "PartialValue": ".operators",
    "ProtocolError": ".errors",
    "ProviderError": ".errors",
    "ProviderId": ".wire.providers",
    "ProviderName": ".wire.providers",
    "RefusalBlock": ".response",
    "RefusalDelta": ".events",
    "Response": ".response",
    "ResponseBuilder": ".fold.builder",
    "SignatureDelta": ".events",
    "SinkWriteError": ".errors",
    "Snapshot": ".fold.builder",
    "StopReason": ".response",
    "StreamMetrics": ".operators",
    "StreamTimeoutError": ".errors",
    "StructuredOutputError": ".errors",
    "TextBlock": ".response",
    "TextDelta": ".events",
    "ThinkingBlock": ".response",
    "ThinkingDelta": ".events",
    "ToolArgsDelta": ".events",
    "ToolCallBlock": ".response",
    "Usage": ".response",
    "UsageUpdate": ".events",
    "WireFormatError": ".errors",
    "event_from_dict": ".events",
    "event_to_dict": ".events",
    "from_async_bytes": ".sources",
    "from_bytes": ".sources",
    "from_durable_stream": ".sources",
    "from_file": ".sources",
    "from_httpx": ".sources",
    "from_native": ".read.from_native",
    "from_sdk": ".sources",
    "from_websocket": ".sources",
    "make_decoder": ".wire.registry",
    "reassemble": ".read.reassemble",
    "sniff": ".wire.registry",
    "to_aiter": ".read.to_aiter",
    "to_message": ".encoders.messages",
    "to_native": ".native",
    "translate": ".read.translate",
}
#: The subpackages, also reached as attributes (``llm_rx.operators``).
_SUBMODULES = frozenset({
    "cli", "data", "encoders", "errors", "events", "fold", "native", "operators", "read",
    "response", "serve", "sinks", "sources", "testing", "wire",
})

__all__ = [
    "PROVIDERS",
    "ApprovalRequestBlock",
    "BlockStart",
    "BlockStop",
    "CancelledStreamError",
    "Choice",
    "ChoiceEnd",
    "CitationDelta",
    "Cursor",
    "Custom",
    "Dropped",
    "ErrorInfo",
    "Event",
    "FrameTooLargeError",
    "IncompleteStreamError",
    "LlmRxError",
    "LogprobsDelta",
    "MessageDrop",
    "MessageStart",
    "MessageStop",
    "MetadataUpdate",
    "NonStreamBodyError",
    "Opaque",
    "OpaqueBlock",
    "PartialValue",
    "ProtocolError",
    "ProviderError",
    "ProviderId",
    "ProviderName",
    "RefusalBlock",
    "RefusalDelta",
    "Response",
    "ResponseBuilder",
    "SignatureDelta",
    "SinkWriteError",
    "Snapshot",
    "StopReason",
    "StreamMetrics",
    "StreamTimeoutError",
    "StructuredOutputError",
    "TextBlock",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingDelta",
    "ToolArgsDelta",
    "ToolCallBlock",
    "Usage",
    "UsageUpdate",
    "WireFormatError",
    "__version__",
    "event_from_dict",
    "event_to_dict",
    "from_async_bytes",
    "from_bytes",
    "from_durable_stream",
    "from_file",
    "from_httpx",
    "from_native",
    "from_sdk",
    "from_websocket",
    "make_decoder",
    "reassemble",
    "sniff",
    "to_aiter",
    "to_message",
    "to_native",
    "translate",
]


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(_importlib.import_module(module, __name__), name)
    elif name in _SUBMODULES:
        value = _importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'llm_rx' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if _typing.TYPE_CHECKING:  # (what type checkers and IDEs see: the same names, imported at once)
    from .encoders.messages import MessageDrop, to_message
    from .errors import (
        CancelledStreamError,
        FrameTooLargeError,
        IncompleteStreamError,
        LlmRxError,
        NonStreamBodyError,
        ProtocolError,
        ProviderError,
        SinkWriteError,
        StreamTimeoutError,
        StructuredOutputError,
        WireFormatError,
    )
    from .events import (
        BlockStart,
        BlockStop,
        ChoiceEnd,
        CitationDelta,
        Custom,
        Dropped,
        Event,
        LogprobsDelta,
        MessageStart,
        MessageStop,
        MetadataUpdate,
        Opaque,
        RefusalDelta,
        SignatureDelta,
        TextDelta,
        ThinkingDelta,
        ToolArgsDelta,
        UsageUpdate,
        event_from_dict,
        event_to_dict,
    )
    from .fold.builder import ResponseBuilder, Snapshot
    from .native import to_native
    from .operators import PartialValue, StreamMetrics
    from .read.from_native import from_native
    from .read.reassemble import reassemble
    from .read.to_aiter import to_aiter
    from .read.translate import translate
    from .response import (
        ApprovalRequestBlock,
        Choice,
        ErrorInfo,
        OpaqueBlock,
        RefusalBlock,
        Response,
        StopReason,
        TextBlock,
        ThinkingBlock,
        ToolCallBlock,
        Usage,
    )
    from .sources import (
        from_async_bytes,
        from_bytes,
        from_durable_stream,
        from_file,
        from_httpx,
        from_sdk,
        from_websocket,
    )
    from .wire.providers import ProviderId, ProviderName
    from .wire.registry import PROVIDERS, make_decoder, sniff
    from .wire.resume import Cursor
