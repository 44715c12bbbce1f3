"""Each provider's own request type for an assistant turn, as the SDKs (and botocore's
service model, for Bedrock, whose SDK has no types) define it: ``check(provider, message)``
raises when the message is not of that type, or carries a field the type does not know."""

from __future__ import annotations

import base64
from functools import cache
from typing import Any, get_args

from pydantic import TypeAdapter
from typing_extensions import is_typeddict

__all__ = ["check"]

# The dialects' reasoning fields a host reads back, beside the OpenAI chat message's own.
DIALECT_FIELDS = ("reasoning_content", "reasoning", "reasoning_details")


@cache
def _adapter(provider: str) -> TypeAdapter[Any]:
    if provider == "openai-chat":
        from openai.types.chat import ChatCompletionAssistantMessageParam

        return TypeAdapter(ChatCompletionAssistantMessageParam)
    if provider == "openai-responses":
        from openai.types.responses import ResponseInputItemParam

        return TypeAdapter(list[ResponseInputItemParam])
    raise AssertionError(provider)


@cache
def _block_params() -> list[Any]:
    """Every TypedDict of the stable block-param union, then the beta one's (blocks of beta
    features: compaction, advisor): the unions also hold response models, which a dict
    validates into as well, so each TypedDict is tried on its own."""
    from anthropic.types import ContentBlockParam
    from anthropic.types.beta import BetaContentBlockParam

    members = [*get_args(ContentBlockParam), *get_args(BetaContentBlockParam)]
    return [member for member in members if is_typeddict(member)]


@cache
def _typed(member: Any) -> TypeAdapter[Any]:
    return TypeAdapter(member)  # (built when first tried: there are some eighty of them)


_BY_TYPE: dict[Any, TypeAdapter[Any]] = {}  # a block's type -> the param type it last was


def _block_param(block: Any) -> None:
    kind = block.get("type") if isinstance(block, dict) else None
    known = _BY_TYPE.get(kind)
    for adapter in [known] if known is not None else []:
        if _round_trips(adapter, block):
            return
    for member in _block_params():
        adapter = _typed(member)
        if _round_trips(adapter, block):
            _BY_TYPE[kind] = adapter
            return
    raise AssertionError(f"no Anthropic block param type is {block}")


def _round_trips(adapter: TypeAdapter[Any], block: Any) -> bool:
    try:
        return bool(_listed(adapter.validate_python(block)) == block)
    except ValueError:
        return False


@cache
def _message_param() -> TypeAdapter[Any]:
    from anthropic.types import MessageParam

    return TypeAdapter(MessageParam)


def _anthropic(message: Any) -> None:
    """A ``MessageParam``: its role, and each block a block param (of a beta feature's type
    where the stable union has none: compaction, fallback, advisor blocks)."""
    assert set(message) == {"role", "content"}
    _message_param().validate_python(message)
    for block in message["content"]:
        _block_param(block)


def _typed_dict(provider: str, message: Any) -> None:
    """Validate, then dump back: a TypedDict drops what it does not know, so a message with
    an unknown field (or a wrong spelling of one) does not come back the same."""
    adapter = _adapter(provider)
    subject = message
    if provider == "openai-chat":
        subject = {key: value for key, value in message.items() if key not in DIALECT_FIELDS}
        if isinstance(subject.get("content"), list):  # Mistral's thinking parts: a dialect
            subject["content"] = [part for part in subject["content"]
                                  if part.get("type") != "thinking"]
    again = _listed(adapter.validate_python(subject))
    assert again == subject, (again, subject)


def _listed(value: Any) -> Any:
    """The validated value with its lazily validated iterables (``Iterable[...]`` fields)
    run through, so each item is validated and comes back as a list."""
    if isinstance(value, dict):
        return {key: _listed(item) for key, item in value.items()}
    if isinstance(value, list | tuple) or hasattr(value, "__next__"):
        return [_listed(item) for item in value]
    return value


@cache
def _bedrock_model() -> Any:
    import botocore.session

    return botocore.session.get_session().get_service_model("bedrock-runtime")


def _shape(shape: Any, value: Any, path: str) -> None:
    kind = shape.type_name
    if shape.metadata.get("document"):
        return  # any JSON value
    if kind == "structure":
        assert isinstance(value, dict), path
        unknown = set(value) - set(shape.members)
        assert not unknown, f"{path}: unknown {sorted(unknown)}"
        for name in shape.required_members:
            assert name in value, f"{path}: missing {name}"
        if shape.metadata.get("union"):
            assert len(value) == 1, f"{path}: a union holds exactly one member"
        for name, item in value.items():
            _shape(shape.members[name], item, f"{path}.{name}")
    elif kind == "list":
        assert isinstance(value, list), path
        for position, item in enumerate(value):
            _shape(shape.member, item, f"{path}[{position}]")
    elif kind == "map":
        assert isinstance(value, dict), path
    elif kind == "string":
        assert isinstance(value, str), path
        if shape.enum:
            assert value in shape.enum, path
    elif kind == "blob":
        assert isinstance(value, bytes | str), path
        if isinstance(value, str):
            base64.b64decode(value, validate=True)
    elif kind in ("integer", "long"):
        assert isinstance(value, int), path
        assert not isinstance(value, bool), path
    elif kind == "boolean":
        assert isinstance(value, bool), path
    elif kind in ("float", "double"):
        assert isinstance(value, int | float), path


def check(provider: str, message: Any) -> None:
    if provider in ("openai-chat", "openai-responses"):
        _typed_dict(provider, message)
    elif provider == "anthropic":
        _anthropic(message)
    elif provider == "gemini":
        from google.genai.types import Content

        Content.model_validate(message)  # (genai's types forbid unknown fields)
    elif provider == "ollama":
        import ollama

        validated = ollama.Message.model_validate(message)
        assert validated.model_dump(exclude_unset=True, mode="json") == message
    elif provider == "bedrock-converse":
        _shape(_bedrock_model().shape_for("Message"), message, "Message")
    elif provider == "gemini-interactions":  # (a stateless interaction's input: its steps)
        from google.genai import interactions
        from pydantic import TypeAdapter

        assert isinstance(message, list)
        request = interactions.CreateModelInteraction.model_validate(
            {"model": "gemini-3-flash", "input": message})
        assert isinstance(request.input, list)
        for step in TypeAdapter(list[interactions.Step]).validate_python(message):
            assert not getattr(step, "is_unknown", False), step
    else:
        raise AssertionError(f"no request type for {provider}")
