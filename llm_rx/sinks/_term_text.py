"""The terminal rule: what a provider wrote reaches a terminal as text, never as a command.

Every string that came from the wire (the answer, thinking, a refusal, tool names and
arguments, citations, a server tool's input and output, the model id, an error message)
goes through :func:`terminal_text` before the plain printer, the rich view or the command
line write it. Dropped, never shown:

* the C0 control characters except newline and tab (BEL, backspace, carriage return,
  form feed, ...), and DEL;
* ESC and the whole sequence it starts: CSI (``ESC [`` ... a final byte: cursor moves,
  screen clears, colours), OSC (``ESC ]`` ... up to BEL or ``ESC \\``: window titles,
  OSC 8 hyperlinks, OSC 52 clipboard writes), DCS, SOS, PM and APC strings, and the
  two- and three-character escapes (``ESC c`` resets the terminal);
* the C1 control characters (U+0080 to U+009F), with the sequence an 8-bit CSI, OSC or
  DCS introducer starts;
* the bidirectional overrides and isolates (U+202A to U+202E, U+2066 to U+2069), which
  make text read in an order other than the one it is in.

A string sequence (OSC, DCS...) without its terminator is dropped to the end of its line,
never further: a reply cannot hide the rest of the answer behind an unterminated title.
Text with none of these characters is returned as it is (the same object).
"""

from __future__ import annotations

import re

__all__ = ["terminal_json", "terminal_text"]

#: Any character the rule acts on: a quick test before the substitution.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

_SEQUENCE = re.compile(
    # OSC, DCS, SOS, PM, APC (7- and 8-bit): the string, up to BEL or ST (or the line's end)
    "(?:\x1b[\\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\\\|\x9c)?"
    # CSI (7- and 8-bit): parameters, intermediates, the final byte
    "|(?:\x1b\\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    # any other escape: intermediates, then one final character
    "|\x1b[\x20-\x2f]*[\x30-\x7e]?"
    # a control character alone, a C1 one, a bidirectional override or isolate
    "|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
)


def terminal_text(text: str) -> str:
    """``text`` as a terminal may show it: every control character and escape sequence
    dropped (newline and tab kept); see the module's docstring for the list."""
    if _UNSAFE.search(text) is None:
        return text
    return _SEQUENCE.sub("", text)


#: What JSON may hold raw that a terminal could obey: DEL, the C1 controls, the overrides.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_json(text: str) -> str:
    """JSON ``text`` with what a terminal could obey written as ``\\u`` escapes: the same
    JSON (every string decodes to what it was), safe to print. (The C0 controls and ESC are
    already escaped in any JSON; DEL, C1 and the bidirectional controls need not be.)"""
    if _JSON_UNSAFE.search(text) is None:
        return text
    return _JSON_UNSAFE.sub(lambda found: f"\\u{ord(found.group(0)):04x}", text)
