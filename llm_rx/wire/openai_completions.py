"""OpenAI legacy Completions streams (``text_completion`` over SSE: ``/v1/completions``).

Served by OpenAI's instruct models and by vLLM, TGI and llama.cpp. A chunk is a chat chunk
with ``choices[].text`` where chat has ``choices[].delta``; everything else (the end at
``[DONE]`` or a finish reason for every choice, the usage chunk with no choices, ``n>1``,
in-band errors) is the chat decoder's, which this one extends. ``logprobs`` is the legacy
object of parallel arrays (``tokens``, ``token_logprobs``, ``top_logprobs``,
``text_offset``): each array is kept as a channel of its own, so the reply's ``logprobs``
is that object again.
"""

from __future__ import annotations

from typing import Any

from ..events import Event, LogprobsDelta
from .openai_chat import OpenAIChatDecoder

__all__ = ["OpenAICompletionsDecoder"]


class OpenAICompletionsDecoder(OpenAIChatDecoder):
    """The legacy `/v1/completions` stream: a choice's `text` read as chat content."""

    provider = "openai-completions"
    foreign_object = "chat.completion.chunk"

    def _choice(self, raw: dict[str, Any], out: list[Event]) -> None:
        text = raw.get("text")
        logprobs = raw.get("logprobs")
        if isinstance(logprobs, dict):
            number = raw.get("index", 0)
            for channel, items in logprobs.items():
                if isinstance(items, list) and items:
                    out.append(LogprobsDelta(number, channel, tuple(items)))
        as_chat = {key: value for key, value in raw.items() if key not in ("text", "logprobs")}
        if isinstance(text, str):
            as_chat["delta"] = {"content": text}
        super()._choice(as_chat, out)
