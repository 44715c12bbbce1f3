"""The price list, OpenTelemetry, WebSockets and the compression libraries are optional extras:
the core never imports them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_importing_llm_rx_imports_neither_extra() -> None:
    # bug class: a module-level import of an optional dependency making it a required one
    code = (
        "import sys, llm_rx, llm_rx.operators, llm_rx.sinks, llm_rx.cli, llm_rx.sources\n"
        "from llm_rx import operators as lxo\n"
        "lxo.fan_out(lxo.to_response()); lxo.share()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('genai_prices', 'opentelemetry', 'websockets', 'brotli', 'brotlicffi', 'zstandard')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "[]"
