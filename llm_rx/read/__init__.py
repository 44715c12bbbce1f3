"""The blocking and async facades over the engine: a whole body, or an observable, read.

- :mod:`~llm_rx.read.reassemble`: ``reassemble(data)``, a body straight to a ``Response``;
- :mod:`~llm_rx.read.translate`: ``translate(data, to=...)``, a body as another wire's bytes;
- :mod:`~llm_rx.read.from_native`: ``from_native(body)``, a non-stream body as a ``Response``;
- :mod:`~llm_rx.read.to_aiter`: ``to_aiter(observable)``, events as an async iterator.

Each is public at the package root (``llm_rx.reassemble``, ``llm_rx.translate``,
``llm_rx.from_native``, ``llm_rx.to_aiter``). Nothing is imported here, so importing one of
them imports only what it needs.
"""
