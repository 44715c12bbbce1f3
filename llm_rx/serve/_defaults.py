"""The default limits of ``llm-rx serve`` and ``llm-rx record``, each bounded in bytes, time
or count (the standard library only: the command's parser reads them without the server).

==================  ===================================  ==============================
option              what it bounds                        default
==================  ===================================  ==============================
--max-body          a request body, a WebSocket message   16 MiB (413; WebSocket: 1009)
--journal-budget    the bytes of requests the journal     64 MiB (oldest bodies dropped
                    keeps                                 first, then oldest entries)
(queue)             scripted replies waiting              64 MiB and 10,000 (413)
--max-connections   connections open at once              1,024, or a quarter of the
                                                          open-file limit if lower (503)
--idle-timeout      a WebSocket waiting for a message     300 s (closed, code 1001)
==================  ===================================  ==============================
"""

from __future__ import annotations

__all__ = ["IDLE_TIMEOUT", "JOURNAL_BUDGET", "MAX_BODY", "MAX_CONNECTIONS", "QUEUE_BUDGET",
           "default_max_connections"]

MAX_BODY = 16 * 1024 * 1024
JOURNAL_BUDGET = 64 * 1024 * 1024
QUEUE_BUDGET = 64 * 1024 * 1024
IDLE_TIMEOUT = 300.0
MAX_CONNECTIONS = 1024


def default_max_connections() -> int:
    """``MAX_CONNECTIONS``, or a quarter of this process's open-file limit when that is lower
    (a client in the same process needs a file of its own per connection)."""
    try:
        import resource
    except ImportError:  # pragma: no cover (Windows)
        return MAX_CONNECTIONS
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, soft // 4))
