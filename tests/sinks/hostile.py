"""Replies written by an attacker: every string a provider sends carries markup and terminal
commands. Real wire bytes (Anthropic and OpenAI chat SSE), decoded by the real decoders.

A script in the payload, if it ever ran in a page, writes :data:`MARKER` into the page's
title and body; the payload itself never holds the marker whole (it is joined when run), so
finding it in a page means the script ran.
"""

from __future__ import annotations

from typing import Any

import orjson

MARKER = "PWNED"
RUN = "document.title='PW'+'NED';document.body.setAttribute('data-'+'pwned','PW'+'NED')"

#: HTML that would run :data:`RUN` (each as a browser would take it).
HTML = (f'<img src=x onerror="{RUN}">', f"<script>{RUN}</script>",
        f'</details></sub><svg onload="{RUN}">', f"<iframe srcdoc=\"<script>{RUN}</script>\">",
        f"<a href=\"javascript:{RUN}\">link</a>", "<!-- comment --><style>*{color:red}</style>")
#: Markdown that would make a link or load something.
MARKDOWN = (f"[click me](javascript:{RUN})", f"[ref link][r]\n\n[r]: javascript:{RUN}",
            "<javascript:alert(1)>", "![pixel](https://attacker.invalid/pixel.png)",
            f"`code` then `<img src=x onerror=\"{RUN}\">` inline",
            "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)")
#: Terminal commands: title, clipboard, hyperlink, screen clear, reset, C1, bidi override.
TERMINAL = ("\x1b]0;PWNED-title\x07", "\x1b]2;PWNED-title\x1b\\",
            "\x1b]52;c;UFdORUQtY2xpcGJvYXJk\x07",
            "\x1b]8;;https://attacker.invalid\x1b\\innocent\x1b]8;;\x1b\\",
            "\x1b[2J\x1b[H", "\x1b[1A\x1b[2K", "\x1bc", "\x9b2J", "\x9d0;PWNED\x07",
            "\u202eevil\u202c", "\r\x08\x07\x0b\x0c")

#: Math, which a notebook's renderer reads before the Markdown (nbconvert's mistune, JupyterLab:
#: a ``$$`` can carry a code block's end, and a link after it, out of the code) or after it
#: (MathJax on the page: TeX's ``\href`` makes a link); written as character references too.
MATH = ("$$", f"[dollar link](javascript:{RUN})", "$x$ and $$y$$", r"\(z\) \[w\] \\(v\\)",
        r"\begin{equation}e\end{equation} \eqref{e}", rf"\href{{javascript:{RUN}}}{{tex link}}",
        "`$` and `\\(`", "&#36;x&#x24; &#92;(y&#x5C;) &dollar;z&dollar; &bsol;[w&bsol;]", "$")

EVERYTHING = " ".join((*HTML, *MARKDOWN, *TERMINAL, *MATH))
#: The answer's last words: still shown after everything above.
END = "END-OF-ANSWER"


def _line(text: str) -> str:
    """A one-line hostile string (names, ids, titles)."""
    return f"{text} {EVERYTHING}".replace("\n", " ")


MODEL = _line("model")
TOOL = _line("lookup`")
URL = f"javascript:{RUN}"


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(b"event: " + event["type"].encode() + b"\ndata: " + orjson.dumps(event)
                    + b"\n\n" for event in events)


def _block(index: int, start: dict[str, Any], *deltas: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "content_block_start", "index": index, "content_block": start},
            *({"type": "content_block_delta", "index": index, "delta": delta}
              for delta in deltas),
            {"type": "content_block_stop", "index": index}]


def _opening() -> list[dict[str, Any]]:
    return [{"type": "message_start", "message": {
        "id": _line("msg"), "type": "message", "role": "assistant", "model": MODEL,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1}}}]


def anthropic_reply() -> bytes:
    """A complete reply: thinking, two server tools, a cited answer, a tool call."""
    result = {"type": "web_search_result", "title": _line("result"), "url": URL,
              "encrypted_content": "x", "page_age": None}
    cited = {"type": "web_search_result_location", "cited_text": _line("snippet"),
             "url": URL, "title": _line("title"), "encrypted_index": "x"}
    also = {**cited, "url": f"https://example.com/\"><img src=x onerror=\"{RUN}\">"}
    events = [
        *_opening(),
        *_block(0, {"type": "thinking", "thinking": ""},
                {"type": "thinking_delta", "thinking": f"thinking {EVERYTHING}"},
                {"type": "signature_delta", "signature": "sig"}),
        *_block(1, {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
                {"type": "input_json_delta",
                 "partial_json": orjson.dumps({"query": _line("query")}).decode()}),
        *_block(2, {"type": "web_search_tool_result", "tool_use_id": "s1",
                    "content": [result, {**result, "url": "https://example.com/ok"}]}),
        *_block(3, {"type": "server_tool_use", "id": "s2", "name": "bash_code_execution",
                    "input": {}},
                {"type": "input_json_delta", "partial_json": orjson.dumps(
                    {"command": f"echo one\n{EVERYTHING}\necho two"}).decode()}),
        *_block(4, {"type": "text", "text": "", "citations": []},
                {"type": "text_delta", "text": f"Answer: {EVERYTHING}\n\n"},
                {"type": "citations_delta", "citation": cited},
                {"type": "citations_delta", "citation": also}),
        *_block(5, {"type": "text", "text": ""},
                {"type": "text_delta", "text": f"\n\n```\n{EVERYTHING}\n```\n\n{END}"}),
        *_block(6, {"type": "tool_use", "id": "t1", "name": TOOL, "input": {}},
                {"type": "input_json_delta",
                 "partial_json": orjson.dumps({"q": EVERYTHING}).decode()}),
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 20}},
        {"type": "message_stop"},
    ]
    return _sse(events)


def anthropic_error() -> bytes:
    """A reply cut by the provider's error, whose message is hostile."""
    events = [
        *_opening(),
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "text_delta", "text": f"partial {END}"}},
        {"type": "error", "error": {"type": "overloaded_error", "message": _line("error")}},
    ]
    return _sse(events)


def openai_refusal() -> bytes:
    """An OpenAI chat reply that refuses, hostile in its refusal and its model id."""
    chunks = [{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": MODEL,
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
              for delta, finish in (({"role": "assistant", "refusal": ""}, None),
                                    ({"refusal": f"I refuse. {EVERYTHING}\n\n{END}"}, None),
                                    ({}, "stop"))]
    return b"".join(b"data: " + orjson.dumps(chunk) + b"\n\n" for chunk in chunks) \
        + b"data: [DONE]\n\n"


def _link(text: str) -> str:
    return f"[{text}](javascript:{RUN})"


def anthropic_math() -> bytes:
    """A reply whose math would carry code out of its block, where a renderer reads math
    before the Markdown: a ``$$`` in a tool's name and in its arguments, in the prose and in
    a code block after it, an environment opened in thinking and closed in code, each with
    a link after it; a cited title and snippet with ``$``, a URL with a dollar and a backslash."""
    cited = {"type": "web_search_result_location", "cited_text": "costs $5 $$ and `$x$`",
             "url": "https://example.com/a$b\\(c", "title": "Title $$ " + _link("title link"),
             "encrypted_index": "x"}
    events = [
        *_opening(),
        *_block(0, {"type": "thinking", "thinking": ""},
                {"type": "thinking_delta", "thinking": "think \\begin{x} then\n\n"
                 "```\ncode \\end{x} " + _link("thinking link") + "\n```\n"},
                {"type": "signature_delta", "signature": "sig"}),
        *_block(1, {"type": "text", "text": "", "citations": []},
                {"type": "text_delta", "text": "Answer: $5 and $$ math\n\n```\ncode $$ "
                 + _link("code link") + "\n```\n\n`$` and \\(x\\) \\[y\\] "
                 "\\$ \\\\(z\\\\) \\eqref{e} " + MATH[5] + "\n\n"},
                {"type": "citations_delta", "citation": cited}),
        *_block(2, {"type": "tool_use", "id": "t1", "name": "lookup$$", "input": {}},
                {"type": "input_json_delta", "partial_json": orjson.dumps(
                    {"q": "x $$ " + _link("tool link") + " \\begin{y}"}).decode()}),
        *_block(3, {"type": "text", "text": ""},
                {"type": "text_delta", "text": f"$$ {END}"}),
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 20}},
        {"type": "message_stop"},
    ]
    return _sse(events)


#: Each hostile body, by a name (with its file suffix).
BODIES = {"anthropic-reply.sse": anthropic_reply, "anthropic-error.sse": anthropic_error,
          "openai-refusal.sse": openai_refusal, "anthropic-math.sse": anthropic_math}
