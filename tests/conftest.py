"""Settings every test module shares.

Hypothesis draws new examples on every run; under CI (the ``CI`` environment variable set)
the draws are derandomized, so a submission is judged on the same examples every time it is
run, and a property that fails there fails again when rerun. Run the suite locally (or the
fuzzer, ``python -m tests.fuzz``) to explore new examples.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
