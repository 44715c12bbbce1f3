"""Who may talk to the emulator and the recorder: not a web page the developer happens to open.

A server on 127.0.0.1 is reachable from every page the browser beside it shows. Two doors
are closed here, on every route (provider endpoints, model lists, the Responses WebSocket,
the ``/_llm_rx`` control routes, the recorder's proxy):

- **DNS rebinding.** A page whose name rebinds to 127.0.0.1 is same-origin with the server:
  it can read any answer. Its requests carry its own name in ``Host``, so a request whose
  ``Host`` is not a loopback name (``localhost``, ``*.localhost``) or address
  (``127.0.0.0/8``, ``::1``), the address the connection came in on, or a name allowed
  (the ``--host`` served, each ``--allow-host``) is refused 403.
- **Cross-site requests.** A browser sends ``Origin`` with every cross-origin request (a
  form's ``POST``, a ``fetch``, a WebSocket); one whose host is not allowed as above, or
  ``null`` (a sandboxed frame, a file), is refused 403. (The control routes also take only
  ``application/json`` bodies: ``_models.py``.) No answer carries a CORS header, so no page
  of another origin can read one.

A refusal is answered in the shape of the endpoint asked (``error_body``; a WebSocket
upgrade gets the HTTP answer instead of ``101``). ``allow_hosts=["*"]`` (``--allow-host
'*'``) turns both checks off, for a deliberate remote setup on a trusted network.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import orjson
from starlette.datastructures import Headers, QueryParams
from starlette.types import ASGIApp, Receive, Scope, Send

from ._endpoints import find_endpoint
from ._error_bodies import error_body
from ._model_lists import find_model_list
from ._stream import quiet_refusal

__all__ = ["ANY_HOST", "HostGuard", "host_allowed", "provider_of"]

#: The ``allow_hosts`` entry that turns the ``Host`` and ``Origin`` checks off.
ANY_HOST = "*"


def _name(host: str) -> str:
    """The name of a ``Host`` value (``name:port``, ``[v6]:port``), lower case, without the
    port, the brackets or a final dot."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    if host.count(":") == 1:
        host = host.partition(":")[0]
    return host.rstrip(".")


def _loopback(name: str) -> bool:
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def host_allowed(name: str, allowed: frozenset[str], local: str | None = None) -> bool:
    """Whether a request naming ``name`` (a ``Host`` name, without its port) is answered:
    loopback, the address it came in on (``local``), or one of ``allowed``."""
    return (name in allowed or _loopback(name)
            or (local is not None and name == _name(local) and name != ""))


def provider_of(path: str, query: Mapping[str, str], headers: Mapping[str, str]) -> str | None:
    """The provider whose error shape answers a request to ``path`` (``None``: llm-rx's own
    ``{"error": {"message", "type"}}``)."""
    endpoint = find_endpoint(path, query)
    if endpoint is not None:
        return endpoint.provider
    found = find_model_list(path, headers)
    return found[0] if found is not None else None


def _forbidden(provider: str | None, message: str) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    if provider is None:
        body: dict[str, Any] = {"error": {"message": message, "type": "forbidden"}}
        extra: dict[str, str] = {}
    else:
        body, extra = error_body(provider, 403, message)
    data = orjson.dumps(body)
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data)),
               (b"connection", b"close")]
    return data, headers + [(k.lower().encode(), v.encode()) for k, v in extra.items()]


class HostGuard:
    """ASGI middleware: refuses (403, in the endpoint's shape) a request whose ``Host`` or
    ``Origin`` names a host not allowed. ``allowed``: names answered besides loopback ones
    (``"*"``: any)."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str] = (),
                 provider: Callable[[str, Mapping[str, str], Mapping[str, str]],
                                    str | None] = provider_of) -> None:
        self.app = app
        self.allowed = frozenset(_name(name) for name in allowed)
        self._provider = provider

    def refusal(self, headers: Mapping[str, str], local: str | None) -> str | None:
        """Why a request with ``headers`` is refused (``None``: it is not)."""
        if ANY_HOST in self.allowed:
            return None
        host = headers.get("host")
        if host is not None and not host_allowed(_name(host), self.allowed, local):
            return (f"Host {host!r} is not a loopback name or address or a name this server "
                    "was told to answer (a page whose name rebinds to 127.0.0.1 sends its "
                    f"own); start it with --allow-host {_name(host)} to answer it")
        origin = headers.get("origin")
        if origin is None and headers.get("sec-fetch-site") == "cross-site":
            # (a browser's request a page made without an Origin: an <img>, a link's GET)
            return ("a request from another site's page may not use this server "
                    "(--allow-host names a host to answer)")
        if origin is not None:
            parts = urlsplit(origin)
            if (parts.scheme not in ("http", "https") or parts.hostname is None
                    or not host_allowed(parts.hostname.rstrip("."), self.allowed, local)):
                return (f"Origin {origin!r} is another site's: a page there may not use this "
                        "server (--allow-host names a host to answer)")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        server = scope.get("server")
        why = self.refusal(headers, server[0] if server else None)
        if why is None:
            await self.app(scope, receive, send)
            return
        query = QueryParams(scope.get("query_string", b"").decode("latin-1"))
        body, fields = _forbidden(self._provider(scope["path"], query, headers), why)
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 403, "headers": fields})
            await send({"type": "http.response.body", "body": body})
            return
        await receive()  # (websocket.connect)
        if "websocket.http.response" in scope.get("extensions", {}):
            await send({"type": "websocket.http.response.start", "status": 403,
                        "headers": fields})
            await send({"type": "websocket.http.response.body", "body": body})
            quiet_refusal()
        else:  # (the server answers 403 itself)
            await send({"type": "websocket.close", "code": 1008, "reason": why[:120]})
