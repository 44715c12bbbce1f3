"""Events -> ``Response``: the fold every reading of a reply uses. Pure: no Rx, no I/O.

- :mod:`~llm_rx.fold.builder`: ``ResponseBuilder`` (``feed``, ``build``, ``snapshot``) and
  ``Snapshot``, public as ``llm_rx.ResponseBuilder`` and ``llm_rx.Snapshot``;
- :mod:`~llm_rx.fold.blocks`: a block being assembled (fragments appended, joined when read);
- :mod:`~llm_rx.fold.history`: values replaced over time, readable as they were;
- :mod:`~llm_rx.fold.snapshot`: a reply as it stood at an event's sequence number;
- :mod:`~llm_rx.fold.partial`: a JSON text that is still arriving, read so far.

Nothing is imported here, so importing one of them imports only what it needs.
"""
