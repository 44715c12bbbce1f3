"""A seeded mutation fuzzer over the recorded captures (``python3 -m tests.fuzz``).

``mutators`` changes a capture's bytes, frames or the JSON values inside them; ``checks``
holds the invariants a mutated body must keep; ``run`` makes cases from seeds, runs them and
reduces a failing body.
"""
