"""Several concurrent replies on one event bus, in an asyncio app.

Four chat requests go out at once over one ``httpx.AsyncClient``; each reply's events go
onto one ``Subject``, tagged with the reply's key (``lxo.keyed``), so one reply's error is a
value on the bus and reaches only that reply's consumer (``lxo.for_key``). One reply is
abandoned after its first words (disposed: its response is closed), one is cut mid-stream by
the server. A "UI" reads the bus throttled — the text of each 50 ms coalesced, never
dropped — on a thread of its own (``observe_on`` a thread pool), as a GUI toolkit's thread
would. Run it against the emulator::

    llm-rx serve --port 8000 &
    python examples/asyncio_bus.py http://127.0.0.1:8000

(or with no URL: it starts the emulator itself, with the ``serve`` extra installed).
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections import defaultdict
from typing import Any

import httpx
from reactivex import operators as ops
from reactivex.scheduler import ThreadPoolScheduler
from reactivex.scheduler.eventloop import AsyncIOScheduler
from reactivex.subject import Subject

import llm_rx
from llm_rx import operators as lxo

#: The replies asked for: key -> (the capture the emulator answers with, its pace in frames
#: per second, a fault to inject).
REQUESTS: dict[str, tuple[str, int, str | None]] = {
    "weather": ("openai__chat-parallel-tool-calls", 400, None),
    "essay": ("openai__chat-text-basic", 400, None),
    "abandoned": ("openai__chat-text-basic", 20, None),  # (a slow one: left after a word)
    "cut": ("openai__chat-text-basic", 400, "drop-after=700"),
}


class UI:
    """Stands for a GUI: it is updated on its own thread, a batch of text at a time."""

    def __init__(self) -> None:
        self.text: dict[str, str] = defaultdict(str)
        self.updates = 0
        self.threads: set[str] = set()
        self.closed = threading.Event()

    def update(self, batch: list[lxo.Keyed[llm_rx.Event]]) -> None:
        self.updates += 1
        self.threads.add(threading.current_thread().name)
        for item in batch:
            event = item.notification.value if item.notification.kind == "N" else None
            if isinstance(event, llm_rx.TextDelta):
                self.text[str(item.key)] += event.text


async def main(url: str) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    on_loop = AsyncIOScheduler(loop)
    bus: Subject[lxo.Keyed[llm_rx.Event]] = Subject()

    # The UI: every reply's events, coalesced per 50 ms, handed to the UI's own thread.
    ui = UI()
    ui_thread = ThreadPoolScheduler(1)
    bus.pipe(
        ops.buffer_with_time(0.05, scheduler=on_loop),
        ops.filter(bool),
        ops.observe_on(ui_thread),
    ).subscribe(ui.update, on_error=print, on_completed=ui.closed.set)

    # One consumer per reply: its Response, or how it ended.
    done: dict[str, asyncio.Future[llm_rx.Response | str]] = {
        key: loop.create_future() for key in REQUESTS
    }
    for key in REQUESTS:
        def finish(value: llm_rx.Response | str, key: str = key) -> None:
            if not done[key].done():
                done[key].set_result(value)

        bus.pipe(lxo.for_key(key), lxo.to_response()).subscribe(
            finish, lambda error, finish=finish: finish(f"error: {error}"))

    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        async def ask(key: str) -> None:
            capture, pace, fault = REQUESTS[key]
            headers = {"x-llm-rx-pace": str(pace)}
            if fault:
                headers["x-llm-rx-fault"] = fault
            request = http.build_request(
                "POST", "/v1/chat/completions", headers=headers,
                json={"model": capture, "stream": True, "messages": []})
            reply = await http.send(request, stream=True)
            events = llm_rx.from_httpx(reply).pipe(lxo.keyed(key))
            if key != "abandoned":
                events.subscribe(bus.on_next, scheduler=on_loop)  # (on_next: the bus lives on)
                return

            def first_words(item: lxo.Keyed[llm_rx.Event]) -> None:
                bus.on_next(item)
                if isinstance(item.notification.value, llm_rx.TextDelta):
                    subscription.dispose()  # the user closed the tab: the response is closed
                    done[key].set_result("disposed")

            subscription = events.subscribe(first_words, scheduler=on_loop)

        await asyncio.gather(*(ask(key) for key in REQUESTS))
        outcome = {key: await future for key, future in done.items()}
    bus.on_completed()  # (the app shuts down: the UI gets its last batch, then closes)
    await asyncio.to_thread(ui.closed.wait, 10)
    ui_thread.executor.shutdown(wait=True)
    return {"responses": outcome, "ui": ui}


def _run(url: str | None) -> dict[str, Any]:
    if url is not None:
        return asyncio.run(main(url))
    from llm_rx.serve import EmulatorThread

    with EmulatorThread() as emulator:
        return asyncio.run(main(emulator.url))


if __name__ == "__main__":
    result = _run(sys.argv[1] if len(sys.argv) > 1 else None)
    for key, response in result["responses"].items():
        if isinstance(response, llm_rx.Response):
            print(f"{key:10} complete={response.complete} stop={response.stop_reason} "
                  f"text={response.text[:40]!r} tools={[c.name for c in response.tool_calls]}")
        else:
            print(f"{key:10} {response}")
    print(f"UI: {result['ui'].updates} updates on {sorted(result['ui'].threads)}")
