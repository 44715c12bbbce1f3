"""The README's retry example runs as written, against a loopback server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import llm_rx

from .captures import capture
from .loopback import server

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def _block_after(heading: str) -> str:
    section = README[README.index(heading):]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def test_readme_retry_example_re_sends_the_request_after_an_http_error() -> None:
    data = capture("openai/chat-gpt41-nano-text.sse").data
    code = _block_after("#### Retries")
    with server(data, status=[503, 200]) as running:
        code = code.replace("https://api.openai.com", running.url)
        scope: dict[str, Any] = {}
        exec(compile(code, "README.md", "exec"), scope)  # (the example itself)
        scope["http"].close()
    assert scope["response"].model_dump() == llm_rx.reassemble(data).model_dump()
    assert running.paths == ["/v1/chat/completions"] * 2
