"""A whole body handed over in one read decodes as a connection's 64 KiB reads do: the same
result, at the same cost per byte (the throughput does not depend on the read size)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import llm_rx
from benchmarks import streams
from llm_rx.response import WITHOUT_NATIVE
from llm_rx.sources._engine import new_decoder
from llm_rx.speed import fast_paths
from llm_rx.wire.base import Decoder

BODIES: dict[str, Callable[[], bytes]] = {
    "openai-chat": lambda: streams.openai_chat(3_000),
    "anthropic": lambda: streams.anthropic(3_000),
    "gemini": lambda: streams.gemini(3_000),
    "ollama": lambda: streams.ollama(3_000),
}


@pytest.mark.parametrize("name", sorted(BODIES))
def test_a_whole_body_reassembles_as_its_reads_and_as_the_general_path(name: str) -> None:
    body = BODIES[name]()
    assert len(body) > 256 * 1024  # (large enough to be read in pieces)
    whole = llm_rx.reassemble(body).model_dump(exclude=WITHOUT_NATIVE)
    assert llm_rx.reassemble(streams.chunked(body)).model_dump(exclude=WITHOUT_NATIVE) == whole
    with fast_paths(False):
        assert llm_rx.reassemble(body).model_dump(exclude=WITHOUT_NATIVE) == whole


def test_a_whole_body_is_decoded_in_reads_of_64_kib(monkeypatch: pytest.MonkeyPatch) -> None:
    # bug class: one huge read decoded at once, whose batches run out (about 1.8x the time
    # of the same body in 64 KiB reads)
    sizes: list[int] = []

    def count(decoder: type[Decoder]) -> None:  # (the reads the source hands its decoder)
        original = decoder.decode

        def counted(self: Decoder, chunk: bytes) -> list[llm_rx.Event]:
            if type(self) is decoder:
                sizes.append(len(chunk))
            return original(self, chunk)

        monkeypatch.setattr(decoder, "decode", counted)

    fast = type(new_decoder("gemini").inner)  # type: ignore[attr-defined]
    count(fast)
    with fast_paths(False):
        plain = type(new_decoder("gemini").inner)  # type: ignore[attr-defined]
    assert plain is not fast
    count(plain)
    body = BODIES["gemini"]()
    llm_rx.reassemble(body, "gemini")
    assert max(sizes) == 64 * 1024
    assert sum(sizes) == len(body)
    on = sizes[:]
    sizes.clear()
    with fast_paths(False):  # (one body: slicing a huge read is no shortcut)
        llm_rx.reassemble(body, "gemini")
    assert sizes == on
