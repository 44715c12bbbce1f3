"""A reader in its own process: ``python -m tests.durable.reader URL OFFSET``. Follows the
reply with ``from_durable_stream(..., with_offsets=True)`` from ``OFFSET`` and prints one line
per event, ``offset<TAB>event JSON``, then ``end`` (to be killed after any line)."""

from __future__ import annotations

import sys

import orjson

import llm_rx
from llm_rx.sources import DurableEntry


def main() -> None:
    url, offset = sys.argv[1], sys.argv[2]

    def shown(entry: DurableEntry) -> None:
        event = orjson.dumps(llm_rx.event_to_dict(entry.event)).decode()
        print(f"{entry.offset}\t{event}", flush=True)

    llm_rx.from_durable_stream(url, offset, with_offsets=True, idle_timeout=10).subscribe(
        shown, lambda error: print(f"error {error!r}", flush=True),
        lambda: print("end", flush=True))


if __name__ == "__main__":
    main()
