"""The benchmark's contenders do the work they are timed for, on small streams of each kind."""

from __future__ import annotations

import pytest

import llm_rx
from benchmarks import run, streams


@pytest.mark.parametrize("number", range(5))
def test_every_llm_rx_contender_gives_the_reassembled_response(number: int) -> None:
    title, make_body, floor, _ = run._cases(300, sdks=False)[number]
    chunks = streams.chunked(make_body())
    expected = run.reassemble(chunks)
    assert expected.complete, title
    for contender in (run.to_response, run.pipeline, run.accumulate, run.accumulate_behind_map,
                      run.fan_out, run.rx_share):
        assert contender(chunks) == expected, (title, contender.__name__)
    text = floor(chunks)  # the floor collects what the reply's blocks hold
    if isinstance(text, dict):
        assert sorted(text.values()) == sorted(b.raw_arguments for b in expected.content)
    else:
        assert text == "".join(getattr(b, "text", "") or getattr(b, "raw_arguments", "")
                               for b in expected.content)


@pytest.mark.parametrize("number", range(5))
def test_every_read_size_contender_gives_the_reassembled_response(number: int) -> None:
    # bug class: a read-size line of the table that times something other than the reply
    title, make_body, _, _ = run._cases(300, sdks=False)[number]
    body = make_body()
    expected = run.reassemble([body])
    contenders = run.by_read_size(body)
    assert len(contenders) == len(run.READ_SIZES)
    for name, contender in contenders.items():
        assert contender([]) == expected, (title, name)


def test_http_benchmark_contenders_read_the_served_stream() -> None:
    import httpx

    from benchmarks import http

    process, base = http._start_server(50)
    try:
        with httpx.Client(timeout=30) as client:
            for path in ("/v1/chat/completions", "/v1/messages"):
                ours = http.from_httpx(client, base + path)()
                assert ours == http.in_memory(client, base + path)(), path
                assert ours.complete, path
    finally:
        http._stop_server(process)


@pytest.mark.parametrize("provider", ["openai-chat", "anthropic"])
def test_live_benchmark_contenders_read_a_frame_per_read(provider: str) -> None:
    # bug class: a per-read line that times reads of several frames (no live read), or a
    # from_httpx contender that does not give the reply
    from benchmarks import live

    body = streams.openai_chat(200) if provider == "openai-chat" else streams.anthropic(200)
    reads = live.live_reads(body)
    assert b"".join(reads) == body
    assert all(read.count(b"\n\n") == 1 and read.endswith(b"\n\n") for read in reads)
    ours = live.ours(provider, reads)
    assert ours.complete
    assert ours == live.in_memory(provider, reads) == llm_rx.reassemble(body)  # type: ignore[arg-type]
    assert live.least(provider, reads).count > 100  # type: ignore[attr-defined]


@pytest.mark.parametrize("number", range(5))
def test_the_encode_contender_gives_the_translated_stream(number: int) -> None:
    _, make_body, _, _ = run._cases(300, sdks=False)[number]
    body = make_body()
    to = run.ENCODE_TO[number]
    assert run.encoder(to)(streams.chunked(body)) == llm_rx.translate(body, to)


def test_every_encoder_contender_gives_the_translated_stream() -> None:
    from benchmarks import encoders

    _, make_body, _, _ = run._cases(300, sdks=False)[1]
    body = make_body()
    chunks = streams.chunked(body)
    for name, contender in encoders.contenders().items():
        if name == "llm_rx.reassemble":
            assert contender(chunks) == llm_rx.reassemble(body)
        else:
            assert contender(chunks) == llm_rx.translate(body, name[len("encode("):-1]), name


@pytest.mark.parametrize("kind", [title for title, _, _ in __import__(
    "benchmarks.sizes", fromlist=["KINDS"]).KINDS])
def test_real_size_streams_reassemble_as_their_floor_reads_them(kind: str) -> None:
    # bug class: a generated stream the decoder reads as something else (cut, another
    # provider, a lost delta) would time an error path, not a reply
    from benchmarks import sizes

    _, make, floor = next(entry for entry in sizes.KINDS if entry[0] == kind)
    first, second = make(50, 0), make(50, 1)
    assert first != second  # ids and padding differ per reply, as real replies' do
    for body in (first, second):
        whole = llm_rx.reassemble(body)
        assert whole.complete, kind
        assert whole.stop_reason == "end_turn", kind
        assert whole.text == floor([body])
        assert len(whole.text) > 50
        assert whole.usage.output_tokens == 50
        assert llm_rx.reassemble([body[i : i + 1024] for i in range(0, len(body), 1024)]) == whole


def test_real_size_benchmark_row_gives_a_ratio_and_its_spread() -> None:
    from benchmarks import real_streams, sizes

    median, q1, q3, micros = sizes.row(real_streams.openai_chat, sizes.floor_openai, 50, 1024, 3)
    assert 0 < q1 <= median <= q3
    assert micros > 0


def test_instruction_benchmark_measures_replies_not_errors() -> None:
    # bug class: a runner measured under callgrind that fails or reads another reply (the
    # counts would be an error path's); valgrind itself is not needed for this check
    from benchmarks import instructions, sizes

    for _, make, floor in sizes.KINDS:
        for n, size in instructions._CONFIGS:
            reads = sizes._reads(make(n, 7), size)
            texts = [run(reads) for _, run in instructions._runners(floor)]
            assert texts[0].text == texts[1].text == texts[2]  # type: ignore[union-attr]
    for _, body, floor in instructions._long_cases():
        chunks = streams.chunked(body)
        assert llm_rx.reassemble(chunks).complete
        assert floor(chunks)
