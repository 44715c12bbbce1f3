"""The build of llm-rx's one optional C extension, ``llm_rx.speed._scan`` (the metadata is in
setup.cfg). Where it cannot be built (no compiler, no Python headers) the package installs as
pure Python, which gives the same events, and says so once; ``LLM_RX_NO_EXTENSIONS=1`` skips
the build."""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuild(build_ext):
    """A build that never fails the install: a failure is reported once, in one line."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # noqa: BLE001 - (no compiler: its errors share no class)
            self._skipped(error)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as error:  # noqa: BLE001 - (a compiler error, missing headers)
            self._skipped(error)

    @staticmethod
    def _skipped(error: Exception) -> None:
        print(f"llm-rx: the C extension was not built ({error}); installing pure Python, which "
              "gives the same results more slowly", file=sys.stderr)


extensions = [] if os.environ.get("LLM_RX_NO_EXTENSIONS") else [
    Extension("llm_rx.speed._scan", ["llm_rx/speed/_scan.c", "llm_rx/speed/_strings.c"],
              depends=["llm_rx/speed/_scan.h"], extra_compile_args=["-O2"]),
]
setup(ext_modules=extensions, cmdclass={"build_ext": OptionalBuild})
