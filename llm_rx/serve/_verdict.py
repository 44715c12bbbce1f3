"""A verdict on a client: its own code run against the emulator under each fault, and what it
got wrong said in llm-rx's terms.

``check_client(server, client)`` queues one scripted reply (reasoning with a signature, text,
a tool call, usage) and calls ``client(server)`` once as it is, then once under each fault.
The client makes its request (any endpoint, any wire, streamed or not) and returns what it
concluded, as an ``llm_rx.Response`` (llm-rx's sources give one; a client of its own builds
one with ``llm_rx.testing.reply(...)``, whose ``complete`` is true) or raises. Raising is
always a fair answer to a fault; returning is judged:

``called a cut stream complete``
    the fault left the reply unfinished (no end of stream, an error, a broken frame, a
    refusal) and the result says ``complete``;
``kept a partial tool call as final``
    a result that says ``complete`` holds a tool call whose arguments are not the script's;
``lost usage``
    a finished reply's token counts did not come back as the wire carried them;
``dropped a signature``
    the wire carried the reasoning's signature and the result does not have it;
``lost content``
    a finished reply's text or tool calls are not the script's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..read.from_native import from_native
from ..read.reassemble import reassemble
from ..response import Response
from ._endpoints import Endpoint, find_endpoint, wants_stream
from ._queue import scripted_pieces
from ._scripted import reply, settled

if TYPE_CHECKING:
    from ._server import EmulatorThread

__all__ = ["FAULTS", "Finding", "Verdict", "check_client", "default_script"]

Client = Callable[["EmulatorThread"], Response]

#: the faults a client is run under, by the name the verdict gives them
FAULTS = ("cut in a tool call", "cut before the end", "in-band error", "malformed frame",
          "rate limited (429)")


def default_script() -> Response:
    """The reply every run gets: signed reasoning, text, one tool call and usage."""
    return reply("Checking the weather in Paris.", thinking="The user wants the weather.",
                 tool_calls=[("get_weather", {"city": "Paris", "unit": "celsius"})],
                 usage={"input_tokens": 21, "output_tokens": 13}, stop="tool_use")


@dataclass(frozen=True)
class Finding:
    """One thing the client got wrong: under which ``fault`` (``"none"``: the plain run),
    the ``problem`` (one of the module's names) and what was seen."""

    fault: str
    problem: str
    detail: str

    def __str__(self) -> str:
        return f"[{self.fault}] {self.problem}: {self.detail}"


@dataclass(frozen=True)
class Verdict:
    """What ``check_client`` saw: ``findings`` (empty: the client passed) and, per run, what
    the client did (``"returned complete"``, ``"returned incomplete"``, ``"raised X"``)."""

    findings: list[Finding] = field(default_factory=list)
    runs: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.findings

    def __str__(self) -> str:
        lines = [f"{fault:>20}: {outcome}" for fault, outcome in self.runs.items()]
        lines += [str(finding) for finding in self.findings] or ["no finding: the client passed"]
        return "\n".join(lines)

    def assert_ok(self) -> None:
        """Raises ``AssertionError`` with the report when there is any finding."""
        if self.findings:
            raise AssertionError(f"the client mishandled faults:\n{self}")


@dataclass(frozen=True)
class _Plan:
    """Where the faults go in the wire the client asked for, and what that wire carries."""

    in_tool_call: int  # a byte inside the frame that carries the tool call's arguments
    last_frame: int  # where the last frame starts
    expected: Response  # the scripted reply as llm-rx reads it from that wire


def _plan(script: Response, endpoint: Endpoint, streamed: bool, target: str | None) -> _Plan:
    pieces = scripted_pieces(script, endpoint, streamed, target)
    body = b"".join(pieces)
    call = script.tool_calls[0] if script.tool_calls else None
    words = re.findall(r"[A-Za-z0-9_]{3,}", call.raw_arguments) if call else []
    marker = words[-1].encode() if words else b""  # (the arguments' last word)
    at = body.find(marker) if marker else -1
    if at < 0:  # (no call or escaped beyond recognition: the middle of the body)
        at = len(body) // 2
    expected = reassemble(body, endpoint.provider) if streamed else from_native(body,
                                                                              endpoint.provider)
    return _Plan(at, len(body) - len(pieces[-1]), expected)


def _run(server: EmulatorThread, client: Client, script: Response,
         spec: str | None) -> Response | BaseException:
    server.emulator.script.clear()
    server.queue(script)
    before = server.emulator.fault
    server.emulator.fault = spec
    try:
        return client(server)
    except Exception as error:  # noqa: BLE001  (raising is the client's answer: judged)
        return error
    finally:
        server.emulator.fault = before
        server.emulator.script.clear()


def _calls(response: Response) -> list[tuple[str | None, object]]:
    return [(call.name, call.arguments) for call in response.tool_calls]


def _judge_plain(got: Response, expected: Response) -> list[Finding]:
    found: list[Finding] = []
    if got.text != expected.text or _calls(got) != _calls(expected):
        found.append(Finding("none", "lost content", f"text {got.text!r}, calls {_calls(got)}; "
                             f"the wire carried {expected.text!r}, {_calls(expected)}"))
    counts = (got.usage.input_tokens, got.usage.output_tokens)
    wanted = (expected.usage.input_tokens, expected.usage.output_tokens)
    if counts != wanted:
        found.append(Finding("none", "lost usage", f"(input, output) {counts}; the wire "
                             f"carried {wanted}"))
    signed = {s for block in expected.content if (s := getattr(block, "signature", None))}
    kept = {s for block in got.content if (s := getattr(block, "signature", None))}
    if signed - kept:
        found.append(Finding("none", "dropped a signature",
                             f"{len(signed - kept)} of {len(signed)} signature(s) missing"))
    return found


def _judge_fault(fault: str, got: Response, script: Response) -> list[Finding]:
    if not got.complete:
        return []
    found = [Finding(fault, "called a cut stream complete",
                     "the reply did not finish, and the result says complete")]
    wanted = _calls(script)
    for name, arguments in _calls(got):
        if (name, arguments) not in wanted:
            found.append(Finding(fault, "kept a partial tool call as final",
                                 f"{name}({arguments!r}) is not the call sent"))
    return found


def _outcome(result: Response | BaseException) -> str:
    if isinstance(result, BaseException):
        return f"raised {type(result).__name__}"
    return "returned complete" if result.complete else "returned incomplete"


def check_client(server: EmulatorThread, client: Client, *,
                 script: Response | None = None, faults: Sequence[str] = FAULTS) -> Verdict:
    """Runs ``client(server)`` once as it is, then once under each of ``faults`` (names from
    :data:`FAULTS`), each time with ``script`` (default: :func:`default_script`) queued; the
    server's queue and standing fault are as they were after it."""
    from ._replies import target

    script = settled(script or default_script())
    verdict = Verdict()
    seen = server.emulator.journal.added
    plain = _run(server, client, script, None)
    verdict.runs["none"] = _outcome(plain)
    asked = [(entry, endpoint) for entry in server.emulator.journal.since(seen)
             if entry.method == "POST" and (endpoint := find_endpoint(entry.path, entry.query))]
    entry, endpoint = asked[-1] if asked else (None, None)
    if entry is None or endpoint is None:
        verdict.findings.append(Finding("none", "no request", "the client asked for nothing "
                                        "on a provider endpoint"))
        return verdict
    streamed = wants_stream(endpoint, entry.json or {})
    plan = _plan(script, endpoint, streamed, target(endpoint))
    if isinstance(plain, BaseException):
        verdict.findings.append(Finding("none", "lost content",
                                        f"raised {plain!r} on a reply with no fault"))
    else:
        verdict.findings.extend(_judge_plain(plain, plan.expected))
    specs = {"cut in a tool call": f"drop-after={plan.in_tool_call}",
             "cut before the end": f"drop-after={plan.last_frame}",
             "in-band error": f"error-after={plan.in_tool_call}",
             "malformed frame": "malformed",
             "rate limited (429)": "status=429,retry-after=0"}
    for fault in faults:
        result = _run(server, client, script, specs[fault])
        verdict.runs[fault] = _outcome(result)
        if isinstance(result, Response):
            verdict.findings.extend(_judge_fault(fault, result, script))
    return verdict
