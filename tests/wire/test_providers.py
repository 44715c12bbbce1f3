"""Provider ids are a ``Literal`` type: a misspelt provider is a type error, not a surprise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

import llm_rx
from llm_rx.native import ENCODERS
from llm_rx.wire.providers import (
    ALIASES,
    PROVIDERS,
    UI_STREAMS,
    ProviderAlias,
    ProviderId,
    UIStreamId,
    provider_id,
    stream_id,
)
from llm_rx.wire.registry import DECODERS, make_decoder

ROOT = Path(__file__).resolve().parent.parent.parent

SNIPPET = '''\
import llm_rx

body = b"data: [DONE]\\n\\n"
llm_rx.reassemble(body, "openai-chat")
llm_rx.reassemble(body, "openai")
llm_rx.from_bytes(body, "cohere")
llm_rx.reassemble(body, "opneai-chat")  # line 7
llm_rx.to_native(llm_rx.reassemble(body), "antropic")  # line 8
'''


def test_provider_ids_every_one_decoded_and_encoded() -> None:
    assert get_args(ProviderId) == PROVIDERS
    assert llm_rx.PROVIDERS == PROVIDERS
    assert list(PROVIDERS) == sorted(PROVIDERS)
    assert set(DECODERS) == set(PROVIDERS) | set(UI_STREAMS)  # (the UI streams are read too)
    assert get_args(UIStreamId) == UI_STREAMS == ("ag-ui", "vercel-ui")
    assert not set(UI_STREAMS) & set(PROVIDERS)  # (no non-stream body: no to_native)
    assert set(ENCODERS) == set(PROVIDERS)
    assert set(ALIASES) == set(get_args(ProviderAlias))


def test_provider_ids_aliases_still_work_at_run_time() -> None:
    assert provider_id("openai") == "openai-chat"
    assert provider_id("claude") == "anthropic"
    body = b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
    assert llm_rx.reassemble(body, "openai").text == "hi"
    with pytest.raises(ValueError, match="unknown provider 'opneai'"):
        make_decoder("opneai")  # type: ignore[arg-type]


def test_provider_ids_misspelt_provider_is_a_mypy_error(tmp_path: Path) -> None:
    # bug class: a provider id typed as ``str`` let a misspelling through to run time
    snippet = tmp_path / "snippet.py"
    snippet.write_text(SNIPPET)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(snippet)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors] == ["7", "8"], result.stdout + result.stderr
    assert all("arg-type" in line for line in errors)


def test_stream_ids_name_the_ui_streams_and_every_provider() -> None:
    assert stream_id("ag-ui") == "ag-ui"
    assert stream_id("vercel-ui") == "vercel-ui"
    assert stream_id("claude") == "anthropic"
    with pytest.raises(ValueError, match=r"unknown provider 'ag_ui'.*ag-ui"):
        stream_id("ag_ui")
    with pytest.raises(ValueError):
        provider_id("ag-ui")  # (no provider: no non-stream body to write)
