"""safe_link(): only http, https and mailto URLs may become links."""

from __future__ import annotations

import pytest

from llm_rx._links import safe_link


@pytest.mark.parametrize("url", ["https://example.com/a?b=c#d", "http://example.com",
                                 "HTTPS://EXAMPLE.COM", "mailto:someone@example.com",
                                 "https://www.google.com/search?q=weather in Paris"])
def test_safe_link_keeps_a_web_or_mail_url(url: str) -> None:
    assert safe_link(url) == url


@pytest.mark.parametrize("url", [
    "javascript:alert(1)", "JavaScript:alert(1)", "java\tscript:alert(1)",
    "java\nscript:alert(1)", " javascript:alert(1)", "\x00javascript:alert(1)",
    "data:text/html;base64,PHNjcmlwdD4=", "vbscript:msgbox(1)", "file:///etc/passwd",
    "//evil.example/", "/relative/path", "example.com", "",
    "https://example.com/\x1b]8;;x\x07",
])
def test_safe_link_refuses_anything_else(url: str) -> None:
    assert safe_link(url) is None
