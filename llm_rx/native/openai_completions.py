"""A ``Response`` as an OpenAI legacy ``text_completion`` body (``/v1/completions``)."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..response import Block, Response, StopReason, TextBlock
from ._shared import choice_bodies, usage_body
from ._tables import BODY_STOP, openai_completions_body_usage

__all__ = ["to_openai_completions"]

_FINISH = BODY_STOP["openai-completions"]  # (a stop after calls a plain stop)


def _choice(
    index: int,
    blocks: list[Block],
    reason: StopReason | None,
    native: Any,
    logprobs: dict[str, list[Any]] | None,
    extra: dict[str, Any],
    same_provider: bool,
) -> dict[str, Any]:
    """One choice: the text of its text blocks (a completion has nothing else)."""
    finish = native if same_provider and isinstance(native, str) else (
        _FINISH.get(reason, "stop") if reason is not None else None
    )
    out: dict[str, Any] = {
        "text": "".join(block.text for block in blocks if isinstance(block, TextBlock)),
        "index": index,
        "logprobs": dict(logprobs) if same_provider and logprobs else None,
        "finish_reason": finish,
    }
    if same_provider:
        for key, value in extra.items():
            out.setdefault(key, value)
    return out


def to_openai_completions(response: Response) -> dict[str, Any]:
    """The ``text_completion`` body; ``n>1`` replies give every choice."""
    same = response.provider == "openai-completions"
    extra = dict(response.extra) if same else {}
    body: dict[str, Any] = {
        "id": response.id or "",
        "object": "text_completion",
        "created": extra.pop("created", 0),
        "model": response.model or "",
    }
    body["choices"] = choice_bodies(response, partial(_choice, same_provider=same))
    usage = usage_body(response.usage, same, openai_completions_body_usage)
    if usage is not None:
        body["usage"] = usage
    for key, value in extra.items():
        body.setdefault(key, value)
    return body
