"""Headless Chromium driven over the DevTools protocol, for the tests where a page is the
party that matters: the example chat page (``tests/examples``), an attacker's page against
``llm-rx serve`` (``tests/serve/test_browser_attacks.py``).

``Chromium(*flags)`` starts one browser (a throw-away profile; extra ``flags`` such as
``--host-resolver-rules=MAP attacker.test 127.0.0.1``); ``evaluate(url, expression)`` opens
``url`` in a new tab, waits for its load event, and gives the value of ``expression`` (a
promise is awaited, bounded); ``close()`` stops it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import threading
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

__all__ = ["FLAGS", "Chromium", "chromium_path"]

# (the flags a headless run in a container needs, and nothing that reaches the network)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_path() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found is not None:
            return found
    pytest.skip("headless Chromium is not installed (apt-get install -y chromium)")


class Chromium:
    """Headless Chromium driven over the DevTools protocol."""

    def __init__(self, *flags: str) -> None:
        # (Chromium's helper processes may still write to the profile as it is removed)
        self._profile = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
        self._process = subprocess.Popen(
            [chromium_path(), *FLAGS, *flags, f"--user-data-dir={self._profile.name}",
             "--remote-debugging-port=0", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert self._process.stderr is not None
        self._browser = ""
        for line in self._process.stderr:  # (Chromium says where it listens, then goes on)
            if line.startswith("DevTools listening on "):
                self._browser = line.split(" on ", 1)[1].strip()
                break
        assert self._browser, "Chromium did not start its DevTools endpoint"
        self._drain = threading.Thread(target=self._process.stderr.read, daemon=True)
        self._drain.start()

    def evaluate(self, url: str, expression: str, timeout: float = 60.0) -> Any:
        """Opens ``url`` in a new tab and, once it loaded, gives the value of ``expression``
        evaluated in it (a promise awaited, within ``timeout`` seconds)."""
        port = self._browser.split(":")[2].split("/")[0]
        target = httpx.put(f"http://127.0.0.1:{port}/json/new?about:blank", timeout=10).json()
        with connect(target["webSocketDebuggerUrl"], open_timeout=10, max_size=None) as ws:
            calls = iter(range(1, 1000))

            def call(method: str, **params: Any) -> dict[str, Any]:
                number = next(calls)
                ws.send(json.dumps({"id": number, "method": method, "params": params}))
                while True:
                    message = json.loads(ws.recv(timeout=timeout))
                    if message.get("id") == number:
                        assert "error" not in message, message
                        result: dict[str, Any] = message["result"]
                        return result

            call("Page.enable")
            call("Page.navigate", url=url)
            while json.loads(ws.recv(timeout=timeout)).get("method") != "Page.loadEventFired":
                pass
            found = call("Runtime.evaluate", expression=expression, awaitPromise=True,
                         returnByValue=True, timeout=int(timeout * 1000))
        assert "exceptionDetails" not in found, found
        return found["result"].get("value")

    def close(self) -> None:
        self._process.terminate()
        self._process.wait(10)
        self._drain.join(10)
        assert self._process.stderr is not None
        self._process.stderr.close()
        self._profile.cleanup()
