"""A follower in its own process: ``python -m tests.redis.follower PORT KEY [AFTER]``:
prints the Response JSON of the reply it follows from Redis."""

from __future__ import annotations

import sys

import redis

from llm_rx import operators as lxo
from llm_rx.sources import from_redis


def main() -> None:
    port, key = int(sys.argv[1]), sys.argv[2]
    after = sys.argv[3] if len(sys.argv) > 3 else "0"
    client = redis.Redis(port=port, socket_timeout=10)
    response = from_redis(client, key, after=after, heartbeat_timeout=20).pipe(
        lxo.to_response()
    ).run()
    print(response.model_dump_json(), flush=True)


if __name__ == "__main__":
    main()
