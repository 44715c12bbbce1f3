"""The public surface: names are a contract."""

from __future__ import annotations

import importlib

import pytest

import llm_rx
from llm_rx import operators


def test_all_is_sorted_and_complete() -> None:
    names = [name for name in llm_rx.__all__ if name not in ("PROVIDERS", "__version__")]
    assert names == sorted(names, key=str.lower) or names == sorted(names)
    for name in llm_rx.__all__:
        assert hasattr(llm_rx, name), name
    # (not identifiers: the '@py_builtins' pytest's assertion rewriting adds to the modules
    # of a distribution that registers a pytest plugin, as llm-rx does with llm_rx.testing)
    public = {name for name in vars(llm_rx) if name.isidentifier() and not name.startswith("_")}
    modules = {"cli", "data", "encoders", "errors", "events", "fold", "native", "operators", "read",
               "response", "serve", "sinks", "sources", "speed", "testing", "wire"}
    assert public - modules - set(llm_rx.__all__) == set()


@pytest.mark.parametrize(
    "name", ["from_bytes", "from_file", "from_async_bytes", "reassemble", "to_native"]
)
def test_design_names_exist(name: str) -> None:
    assert callable(getattr(llm_rx, name))


def test_operators_exist() -> None:
    assert callable(operators.to_response)
    assert callable(operators.text_only)


@pytest.mark.parametrize(
    "module",
    ["llm_rx.wire", "llm_rx.operators", "llm_rx.sources", "llm_rx.sinks", "llm_rx.native",
     "llm_rx.encoders"],
)
def test_submodule_all_resolves(module: str) -> None:
    mod = importlib.import_module(module)
    for name in mod.__all__:
        assert hasattr(mod, name), f"{module}.{name}"


def test_no_provider_names_in_operators_and_sinks() -> None:
    from pathlib import Path

    root = Path(llm_rx.__file__).parent
    for folder in ("operators", "sinks"):
        for path in (root / folder).glob("*.py"):
            text = path.read_text().lower()
            for provider in ("anthropic", "openai", "gemini", "ollama", "bedrock", "groq"):
                assert provider not in text, f"{path.name} names {provider}"


@pytest.mark.parametrize("data", ["reply.sse", "data: [DONE]\n\n"])
def test_reassemble_str_message_says_how_to_pass_a_file_or_the_bytes(data: str) -> None:
    with pytest.raises(TypeError) as raised:
        llm_rx.reassemble(data)  # type: ignore[arg-type]
    message = str(raised.value)
    assert "pathlib.Path" in message
    assert "bytes" in message


@pytest.mark.parametrize("name", ["LogprobsDelta", "Snapshot", "StreamMetrics"])
def test_public_api_exports_the_types_events_and_operators_give(name: str) -> None:
    assert name in llm_rx.__all__
    assert isinstance(getattr(llm_rx, name), type)
