"""``fast_paths(False)`` is scoped to the current thread or asyncio task (a ``ContextVar``), and
read once for a stream: another thread or task keeps its own setting, and a pipeline
subscribed under the switch stays on the general path wherever and whenever it is read."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from reactivex.scheduler import NewThreadScheduler
from reactivex.subject import Subject
from reactivex.testing import TestScheduler

import llm_rx
from llm_rx import operators as lxo
from llm_rx import speed
from llm_rx.fold.builder import ResponseBuilder
from llm_rx.sources._engine import new_decoder
from llm_rx.speed import active, fast_paths, templates
from llm_rx.speed.batches import TemplateFrames

from ..captures import capture

NAME = "openai/chat-text-basic.sse"
WAIT = 10.0  # seconds a thread may take to reach the other's step (bounded, never slept)


def _refuse(*_: Any, **__: Any) -> Any:
    raise AssertionError("a shortcut was taken under fast_paths(False)")


def _no_shortcuts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(templates.ByteTemplate, "learn", _refuse)
    monkeypatch.setattr(TemplateFrames, "_batch", _refuse)
    monkeypatch.setattr(TemplateFrames, "_read_of", _refuse)
    monkeypatch.setattr(TemplateFrames, "_appender", _refuse)
    monkeypatch.setattr(speed, "decoders", _refuse)


def _shortcuts() -> bool:
    """Whether a source made its decoder here with shortcuts."""
    decoder: Any = new_decoder("openai-chat")
    return isinstance(decoder.inner, TemplateFrames)


def test_fast_paths_two_threads_keep_their_own_setting() -> None:
    # bug class: a process-wide switch: a test's fast_paths(False) flips the emulator's
    # thread (or any other) while it serves
    inside, checked = threading.Event(), threading.Event()
    seen: dict[str, Any] = {}

    def general() -> None:
        with fast_paths(False):
            inside.set()
            seen["general"] = active(), _shortcuts()
            checked.wait(WAIT)
            seen["general, after"] = active()

    thread = threading.Thread(target=general)
    thread.start()
    assert inside.wait(WAIT)
    seen["other"] = active(), _shortcuts()
    checked.set()
    thread.join(WAIT)
    assert seen == {"general": (False, False), "other": (True, True),
                    "general, after": False}
    assert active()


def test_fast_paths_two_tasks_keep_their_own_setting() -> None:
    # bug class: the switch of one asyncio task seen by another on the same loop
    async def main() -> dict[str, Any]:
        inside, checked = asyncio.Event(), asyncio.Event()
        seen: dict[str, Any] = {}

        async def general() -> None:
            with fast_paths(False):
                inside.set()
                await checked.wait()
                seen["general"] = active(), _shortcuts()

        async def other() -> None:
            await inside.wait()
            seen["other"] = active(), _shortcuts()
            checked.set()

        await asyncio.wait_for(asyncio.gather(general(), other()), WAIT)
        return seen

    assert asyncio.run(main()) == {"general": (False, False), "other": (True, True)}


def test_fast_paths_a_task_started_inside_inherits_the_setting() -> None:
    async def setting() -> bool:
        await asyncio.sleep(0)
        return active()

    async def main() -> bool:
        with fast_paths(False):
            task = asyncio.get_running_loop().create_task(setting())
        return await task  # (runs after the block ended)

    assert asyncio.run(main()) is False


def test_fast_paths_pipeline_subscribed_under_the_switch_is_read_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bug class: the switch read per read: a pipeline subscribed under fast_paths(False)
    # and read later (a scheduler's turn) takes the shortcuts, mixing both paths
    data = capture(NAME).data
    expected = llm_rx.reassemble(data).model_dump(mode="json")
    _no_shortcuts(monkeypatch)
    scheduler = TestScheduler()
    values: list[Any] = []
    errors: list[Exception] = []
    with fast_paths(False):
        llm_rx.from_bytes(data, "openai-chat").pipe(lxo.to_response()).subscribe(
            values.append, errors.append, scheduler=scheduler)
    assert values == []  # (nothing read yet)
    scheduler.start()  # the reading runs now, outside the block
    assert errors == []
    assert [value.model_dump(mode="json") for value in values] == [expected]


def test_fast_paths_pipeline_subscribed_under_the_switch_read_on_another_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bug class: a reading run on a scheduler's thread, which has its own (default) setting
    data = capture(NAME).data
    expected = llm_rx.reassemble(data).model_dump(mode="json")
    _no_shortcuts(monkeypatch)
    done = threading.Event()
    values: list[Any] = []
    errors: list[Exception] = []

    def failed(error: Exception) -> None:
        errors.append(error)
        done.set()

    with fast_paths(False):
        llm_rx.from_bytes(data, "openai-chat").pipe(lxo.to_response()).subscribe(
            values.append, failed, done.set, scheduler=NewThreadScheduler())
    assert done.wait(WAIT)
    assert errors == []
    assert [value.model_dump(mode="json") for value in values] == [expected]


def test_fast_paths_pipeline_subscribed_with_shortcuts_keeps_them_under_the_switch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the other way round: subscribed with the shortcuts on, read inside fast_paths(False)
    data = capture(NAME).data
    scheduler = TestScheduler()
    builders: list[ResponseBuilder] = []
    original = ResponseBuilder.__init__

    def kept(self: ResponseBuilder, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        builders.append(self)

    monkeypatch.setattr(ResponseBuilder, "__init__", kept)
    values: list[Any] = []
    llm_rx.from_bytes(data, "openai-chat").pipe(lxo.to_response()).subscribe(
        values.append, scheduler=scheduler)
    with fast_paths(False):
        scheduler.start()
    assert len(builders) == 1
    assert values[0].model_dump(mode="json") == llm_rx.reassemble(data).model_dump(mode="json")


def test_fast_paths_decode_operator_fed_outside_the_switch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bug class: bytes pushed into decode() from outside the block the pipeline was
    # subscribed in: the decoder the sniffer makes at the first bytes, and its framer, took
    # the shortcuts there
    data = capture(NAME).data
    expected = llm_rx.reassemble(data).model_dump(mode="json")
    _no_shortcuts(monkeypatch)
    bus: Subject[bytes] = Subject()
    values: list[Any] = []
    errors: list[Exception] = []
    with fast_paths(False):
        bus.pipe(lxo.decode(), lxo.to_response()).subscribe(values.append, errors.append)
    bus.on_next(data)
    bus.on_completed()
    assert errors == []
    assert [value.model_dump(mode="json") for value in values] == [expected]
