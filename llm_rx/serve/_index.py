"""The recorded streams a server answers with, found under folders or given as files.

A capture's id is its path relative to the folder it was found under, without its last
extension, with ``/`` written ``__`` (``anthropic/thinking-signature.sse`` under
``captures/`` is ``anthropic__thinking-signature``); a file given on its own is its name
without the extension. The provider and the form of each are told from its bytes, so a
folder can hold any provider's recordings under any names.

A non-stream body (``NAME.nonstream.json``, as ``llm-rx record`` writes one) is a capture
of the form ``json`` with the id of ``NAME``, when no stream has that id (a stream recorded
beside a comparable call's body keeps its id). Recorded timings (``*.timing.json``), error
bodies and files that are no provider's reply (a browser's AG-UI or AI SDK UI stream
included) are left out.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..wire.nonstream import looks_nonstream
from ..wire.providers import UI_STREAMS, ProviderId, provider_id
from ..wire.registry import SNIFF_LIMIT, sniff
from ._endpoints import capture_form

__all__ = ["Capture", "CaptureIndex", "capture_id"]

_SUFFIXES = {".sse", ".ndjson", ".eventstream", ".json", ".jsonl", ".txt", ".bin"}
NONSTREAM = ".nonstream.json"  # (a non-stream body's name ends so; its form is ``json``)


@dataclass(frozen=True)
class Capture:
    """One recorded reply: its id, file, provider and form (see ``_endpoints``; ``json``: a
    non-stream body)."""

    id: str
    path: Path
    provider: ProviderId
    form: str

    @cached_property
    def data(self) -> bytes:
        return self.path.read_bytes()


def capture_id(name: str) -> str:
    """The id a request may spell either way (``anthropic/x`` or ``anthropic__x``)."""
    return name.strip().strip("/").replace("/", "__")


class CaptureIndex:
    """Captures by id, in the order they were found."""

    def __init__(self, captures: Iterable[Capture]) -> None:
        self._by_id: dict[str, Capture] = {}
        captures = list(captures)
        for capture in [c for c in captures if c.form != "json"] + [c for c in captures
                                                                    if c.form == "json"]:
            self._by_id.setdefault(capture.id, capture)  # (the first of two same ids wins,
            # a stream before a body)

    @classmethod
    def load(cls, paths: Iterable[str | os.PathLike[str]]) -> CaptureIndex:
        """Every capture under each path (a folder, searched recursively, or a file)."""
        found: list[Capture] = []
        for path in map(Path, paths):
            if path.is_dir():
                files = sorted(p for p in path.rglob("*") if p.is_file())
                found.extend(_captures(path, files))
            elif path.is_file():
                found.extend(_captures(path.parent, [path]))
            else:
                raise FileNotFoundError(f"no such capture file or folder: {path}")
        return cls(found)

    def get(self, name: str) -> Capture | None:
        return self._by_id.get(capture_id(name))

    def __iter__(self) -> Iterator[Capture]:
        return iter(self._by_id.values())

    def __len__(self) -> int:
        return len(self._by_id)

    @property
    def ids(self) -> list[str]:
        return list(self._by_id)


def _captures(root: Path, files: Iterable[Path]) -> Iterator[Capture]:
    for path in files:
        body = path.name.endswith(NONSTREAM)
        if path.suffix not in _SUFFIXES or path.name.endswith(".timing.json"):
            continue
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_LIMIT)
        provider = looks_nonstream(head) if body else (sniff(head) or sniff(head + b"\n\n"))
        if provider is None or provider in UI_STREAMS:  # (a browser's stream: no endpoint
            continue  # of a provider answers with one)
        relative = path.relative_to(root).as_posix()
        name = relative[: -len(NONSTREAM)] if body else relative.rsplit(".", 1)[0]
        known = provider_id(provider)
        form = "json" if body else capture_form(known, head)
        yield Capture(capture_id(name), path, known, form)
