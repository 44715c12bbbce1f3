"""``llm-rx record --upstream URL --out DIR [--port N]``, and the recorder in a thread (tests).

::

    with RecorderThread("https://api.openai.com", "recordings") as proxy:
        client = openai.OpenAI(base_url=f"{proxy.url}/v1")   # the real key goes upstream
        ...                                                  # recordings/openai-chat/*.sse
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import TextIO

from .._extras import install_hint
from ._main import add_guard_arguments

__all__ = ["RecorderThread", "add_record_arguments", "run_record"]


def add_record_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--upstream", required=True, metavar="URL",
                        help="the provider's base URL (https://api.openai.com, ...)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="where captures go: DIR/<provider>/<name>.<ext> and "
                        "<name>.timing.json (no request header is ever written)")
    parser.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1")
    parser.add_argument("--port", type=int, default=8001, help="default: 8001; 0: any free port")
    add_guard_arguments(parser)


def run_record(args: argparse.Namespace, out: TextIO) -> int:
    """Proxies and records until SIGINT or SIGTERM; the first line says where it listens."""
    try:
        from ._record import MAX_REQUEST, create_record_app
        from ._server import bind, serve_forever, url_of
    except ImportError as error:  # pragma: no cover (the extra is not installed)
        sys.stderr.write(f"llm-rx record needs the 'serve' extra "
                         f"({install_hint('serve')}): {error}\n")
        return 2
    app = create_record_app(args.upstream, args.out,
                            allow_hosts=[args.host, *args.allow_host])
    sock = bind(args.host, args.port)
    out.write(f"llm-rx record: listening on {url_of(sock)}\n")
    out.write(f"llm-rx record: {args.upstream} -> {args.out}\n")
    out.flush()
    serve_forever(app, sock, max_connections=args.max_connections, max_message=MAX_REQUEST)
    return 0


class RecorderThread:
    """The recording proxy on 127.0.0.1 in a background thread: ``url``, ``saved`` (the
    captures written so far), ``stop()``. ``allow_hosts``: names answered besides loopback
    ones and ``host`` (``"*"``: any); at most ``max_connections`` open at once."""

    def __init__(self, upstream: str, out: str | os.PathLike[str], *,
                 host: str = "127.0.0.1", port: int = 0, allow_hosts: Iterable[str] = (),
                 max_connections: int | None = None) -> None:
        from ._record import MAX_REQUEST, create_record_app
        from ._server import _Server, bind, url_of

        self.app = create_record_app(upstream, Path(out), allow_hosts=[host, *allow_hosts])
        self._sock = bind(host, port)
        self.url = url_of(self._sock)
        self._server = _Server(self.app, max_connections=max_connections,
                               max_message=MAX_REQUEST)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name="llm-rx-record", daemon=True)
        self._thread.start()

    @property
    def saved(self) -> list[Path]:
        return list(self.app.state.recorder.saved)

    def wait(self, count: int, timeout: float = 10.0) -> bool:
        """Whether ``count`` replies were written within ``timeout`` seconds."""
        return bool(self.app.state.recorder.wait(count, timeout))

    def stop(self, timeout: float = 10.0) -> None:
        self._server.should_exit = True
        self._thread.join(timeout)
        self._sock.close()

    def __enter__(self) -> RecorderThread:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()
