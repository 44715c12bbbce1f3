"""Credentials in what the emulator keeps of a request: a short hint in their place.

The app under test sends its real key unless its test overrides it (the SDKs read
``OPENAI_API_KEY`` and the others from the environment), and the journal
(``server.requests``, ``GET /_llm_rx/requests``) is read by tests, printed in their
failures and served over HTTP. So the journal keeps of each credential only enough to
recognise it: the scheme of an ``Authorization`` and the first and last four characters
of the secret (``Bearer sk-p…abcd``; a secret under 16 characters is ``…`` alone)::

    headers   authorization, proxy-authorization, x-api-key, api-key, x-goog-api-key,
              x-amz-security-token, cookie (each cookie's value)
    query     key, api_key, api-key, access_token

``--keep-credentials`` (``keep_credentials=True``, the fixture's
``llm_rx_server.keep_credentials()``) keeps them whole, for a test that must assert the
exact key.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["CREDENTIAL_HEADERS", "CREDENTIAL_QUERY", "hint", "redact_headers", "redact_query"]

CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "api-key",
                                "x-goog-api-key", "x-amz-security-token",
                                "ocp-apim-subscription-key"})
# A browser's WebSocket carries OpenAI's key as a subprotocol: ``openai-insecure-api-key.<key>``.
_KEY_PROTOCOL = "openai-insecure-api-key."
CREDENTIAL_QUERY = frozenset({"key", "api_key", "api-key", "access_token"})
_SHOWN = 16  # (a secret this long or longer keeps its first and last four characters)


def hint(secret: str) -> str:
    """What is kept of ``secret``: its first and last four characters around ``…``, or
    ``…`` alone when it is shorter than 16 characters."""
    return f"{secret[:4]}…{secret[-4:]}" if len(secret) >= _SHOWN else "…"


def _authorization(value: str) -> str:
    scheme, space, secret = value.strip().partition(" ")
    return f"{scheme} {hint(secret.strip())}" if space else hint(value.strip())


def _cookies(value: str) -> str:
    kept = []
    for cookie in value.split(";"):
        name, equals, secret = cookie.strip().partition("=")
        kept.append(f"{name}={hint(secret)}" if equals else hint(name))
    return "; ".join(kept)


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` (lower-case names) with each credential's value replaced by its hint."""
    out = {}
    for name, value in headers.items():
        if name in ("authorization", "proxy-authorization"):
            value = _authorization(value)
        elif name == "cookie":
            value = _cookies(value)
        elif name == "sec-websocket-protocol":
            value = ", ".join(
                _KEY_PROTOCOL + hint(token.strip()[len(_KEY_PROTOCOL):])
                if token.strip().startswith(_KEY_PROTOCOL) else token.strip()
                for token in value.split(","))
        elif name in CREDENTIAL_HEADERS:
            value = hint(value.strip())
        out[name] = value
    return out


def redact_query(query: Mapping[str, str]) -> dict[str, str]:
    """``query`` with each credential parameter's value replaced by its hint."""
    return {name: hint(value) if name.lower() in CREDENTIAL_QUERY else value
            for name, value in query.items()}
