"""The documentation's tests: the site's strict build, its reference, and its examples."""

from __future__ import annotations

from tests.redis.conftest import redis_server, server

__all__ = ["redis_server", "server"]  # (a real redis-server for the Redis page's example)
