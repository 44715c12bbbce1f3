"""The HTTP guide's examples against the providers themselves (```py blocks, shown, not run
by test_examples: they need keys) run as written, against loopback servers."""

from __future__ import annotations

import re
from typing import Any

import pytest

import llm_rx
from tests.captures import capture
from tests.loopback import server

from .pages import DOCS

PAGE = DOCS / "how-to" / "http-and-sdks.md"
SECTION = PAGE.read_text("utf-8").split("## Against the providers themselves\n", 1)[1]


def _shown() -> list[str]:
    """The section's shown blocks: the SDKs, httpx, the retry."""
    blocks = re.findall(r"^```py\n(.*?)^```", SECTION, re.S | re.M)
    assert len(blocks) == 3
    return blocks


def test_retry_example_re_sends_the_request_after_an_http_error() -> None:
    data = capture("openai/chat-gpt41-nano-text.sse").data
    code = _shown()[2]
    with server(data, status=[503, 200]) as running:
        code = code.replace("https://api.openai.com", running.url)
        # (no real half-second wait here: the backoff itself is tested on virtual time)
        code = code.replace("lxo.retry_backoff()", "lxo.retry_backoff(base_delay=0.0)")
        scope: dict[str, Any] = {}
        exec(compile(code, str(PAGE), "exec"), scope)  # (the example itself)
        scope["http"].close()
    assert scope["response"].model_dump() == llm_rx.reassemble(data).model_dump()
    assert running.paths == ["/v1/chat/completions"] * 2


_ASKED = {  # the page's models, and the bundled capture each is answered with
    "gpt-4.1-mini": "openai__chat-text-basic",
    "claude-sonnet-4-5": "anthropic__thinking-signature",
    "gemini-2.5-flash": "gemini__sse-thought-parts",
}


def _as_written(code: str) -> str:
    for model, capture_id in _ASKED.items():
        code = code.replace(f'model="{model}"', f'model="{capture_id}"')
        code = code.replace(f'"model": "{model}"', f'"model": "{capture_id}"')
    return code.replace("lxs.jupyter_display()", "lxs.jupyter_display(display=_display)")


def _frames(obj: Any, *, display_id: Any = None) -> Any:
    """IPython's ``display(obj, display_id=True)``: a handle whose updates are kept."""
    shown: list[Any] = [obj]

    class Handle:
        def update(self, frame: Any) -> None:
            shown.append(frame)

    _SHOWN.append(shown)
    return Handle()


_SHOWN: list[list[Any]] = []


def test_live_examples_run_as_written_against_llm_rx_serve(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """The section's SDK and httpx examples, word for word but for the models (bundled
    capture ids) and IPython's display, against ``llm-rx serve`` through the environment
    variables the section names."""
    from llm_rx.data import capture_path
    from llm_rx.serve import EmulatorThread

    sdks, with_httpx, _ = _shown()
    with EmulatorThread() as running:
        for name, value in {
            "OPENAI_BASE_URL": f"{running.url}/v1", "ANTHROPIC_BASE_URL": running.url,
            "GOOGLE_GEMINI_BASE_URL": running.url, "OPENAI_API_KEY": "test",
            "ANTHROPIC_API_KEY": "test", "GEMINI_API_KEY": "test",
        }.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
        _SHOWN.clear()
        scope: dict[str, Any] = {"_display": _frames}
        exec(compile(_as_written(sdks), str(PAGE), "exec"), scope)
        for client in ("gpt", "claude", "gemini"):
            scope[client].close()
        gemini = llm_rx.reassemble(capture_path("gemini/sse-thought-parts.sse"))
        assert scope["response"].model_dump() == gemini.model_dump()
        code = _as_written(with_httpx).replace("https://api.anthropic.com", running.url)
        exec(compile(code, str(PAGE), "exec"), scope)
    anthropic = llm_rx.reassemble(capture_path("anthropic/thinking-signature.sse"))
    assert scope["response"].model_dump() == anthropic.model_dump()
    assert len(_SHOWN) == 5  # one display per reply, each ending with the whole reply
    assert all(len(frames) >= 2 for frames in _SHOWN)
