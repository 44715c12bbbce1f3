"""An application's event (`Custom`) survives the Redis round trip, in its place."""

from __future__ import annotations

from typing import Any

import reactivex as rx
from reactivex import operators as ops

from llm_rx import sinks as lxs
from llm_rx.events import Event
from llm_rx.sources import from_redis
from tests.redis.conftest import RedisServer
from tests.redis.helpers import DEADLINE
from tests.test_custom_events import EVENTS


def test_redis_custom_events_survive_the_round_trip(server: RedisServer) -> None:
    client: Any = server.client()
    rx.from_iterable(EVENTS).pipe(lxs.to_redis(client, "k")).run()
    read: list[Event] = from_redis(client, "k", heartbeat_timeout=DEADLINE).pipe(
        ops.to_list()).run()
    assert read == EVENTS
