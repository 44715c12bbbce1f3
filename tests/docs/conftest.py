"""The documentation's tests: the site's strict build, its reference, and its examples."""

from __future__ import annotations

from tests.durable.conftest import durable_server
from tests.redis.conftest import redis_server, server

# (a real redis-server for the Redis page's example, the Durable Streams reference server
# for its page's)
__all__ = ["durable_server", "redis_server", "server"]
