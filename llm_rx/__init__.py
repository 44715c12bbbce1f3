"""llm-rx: LLM provider streams as ReactiveX observables of typed events.

::

    import llm_rx
    from llm_rx import operators as lxo

    events = llm_rx.from_file("reply.sse")          # provider sniffed from the bytes
    response = llm_rx.reassemble(body)              # the same engine, no Rx needed
    events.pipe(lxo.text_only()).subscribe(print)
"""

from ._aiter import to_aiter
from ._reassemble import reassemble
from ._translate import translate
from .builder import ResponseBuilder, Snapshot
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
from .native import from_native, to_native
from .native.messages import MessageDrop, to_message
from .operators import PartialValue, StreamMetrics
from .response import (
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
    from_file,
    from_httpx,
    from_sdk,
    from_websocket,
)
from .wire.providers import ProviderId, ProviderName
from .wire.registry import PROVIDERS, make_decoder, sniff

__version__ = "0.1.0"

__all__ = [
    "PROVIDERS",
    "BlockStart",
    "BlockStop",
    "CancelledStreamError",
    "Choice",
    "ChoiceEnd",
    "CitationDelta",
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
