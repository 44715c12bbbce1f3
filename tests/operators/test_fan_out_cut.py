"""fan_out on a reply cut short: the interrupted Response, as to_response() alone gives it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import reactivex
from reactivex import operators as ops

import llm_rx
from llm_rx import operators as lxo
from llm_rx.errors import IncompleteStreamError, LlmRxError

from ..captures import capture
from ..loopback import server

TEXT = capture("openai/chat-gpt41-nano-text.sse").data
CUT = TEXT[: len(TEXT) // 2]


def _alone(body: bytes) -> llm_rx.Response:
    return llm_rx.from_bytes(body).pipe(lxo.to_response()).run()


@pytest.mark.parametrize(
    "others",
    [(), (lxo.cost(),), (lxo.trace(),), (lxo.text_only(),), (lxo.accumulate(),),
     (lxo.cost(), lxo.trace(), lxo.text_only())],
    ids=["alone", "cost", "trace", "text_only", "accumulate", "all"],
)
def test_fan_out_a_cut_reply_gives_the_interrupted_response(others: tuple[Any, ...]) -> None:
    response, *rest = llm_rx.from_bytes(CUT).pipe(
        lxo.fan_out(lxo.to_response(), *others)
    ).run()
    alone = _alone(CUT)
    assert not response.complete
    assert response.stop_reason == "interrupted"
    assert response.error is not None
    assert response.error.kind == "incomplete"
    assert response.model_dump() == alone.model_dump()
    assert len(rest) == len(others)


def test_fan_out_a_dropped_connection_gives_the_interrupted_response_and_the_cost() -> None:
    with server(TEXT, drop_after=800) as running, httpx.Client() as client:
        reply = client.send(client.build_request("POST", running.url), stream=True)
        response, cost = llm_rx.from_httpx(reply).pipe(
            lxo.fan_out(lxo.to_response(), lxo.cost())
        ).run()
    assert not response.complete
    assert response.text
    assert not cost.complete


def test_fan_out_without_a_response_branch_still_passes_the_error_on() -> None:
    values: list[Any] = []
    errors: list[Exception] = []
    llm_rx.from_bytes(CUT).pipe(lxo.fan_out(lxo.cost(), lxo.text_only())).subscribe(
        values.append, errors.append
    )
    assert len(values) == 1
    assert not values[0][0].complete
    assert len(errors) == 1
    assert isinstance(errors[0], IncompleteStreamError)


def test_fan_out_an_error_before_anything_arrived_is_still_an_error() -> None:
    body = b'{"error": {"message": "overloaded", "type": "overloaded_error"}}'
    with pytest.raises(LlmRxError):  # (a provider's error body: nothing of a reply arrived)
        llm_rx.from_bytes(body).pipe(
            lxo.fan_out(lxo.to_response(), lxo.cost())
        ).run()


def test_fan_out_a_branchs_own_error_is_still_passed_on() -> None:
    def broken(source: reactivex.Observable[Any]) -> reactivex.Observable[Any]:
        return source.pipe(ops.map(lambda _: 1 / 0))

    with pytest.raises(ZeroDivisionError):
        llm_rx.from_bytes(CUT).pipe(lxo.fan_out(lxo.to_response(), broken)).run()


def test_take_until_instead_of_dispose_keeps_the_response_and_the_cost() -> None:
    events = list(llm_rx.from_bytes(TEXT).pipe(ops.to_list()).run())
    stop = reactivex.Subject[None]()

    def abandon(event: Any) -> None:
        if isinstance(event, llm_rx.TextDelta) and event.text.strip():
            stop.on_next(None)  # (the consumer's "stop": after this event, nothing more)

    response, cost = reactivex.from_iterable(events).pipe(
        ops.do_action(abandon), ops.take_until(stop),
        lxo.fan_out(lxo.to_response(), lxo.cost()),
    ).run()
    assert not response.complete
    assert response.stop_reason == "interrupted"
    assert not cost.complete
    assert cost.served_model == response.model
