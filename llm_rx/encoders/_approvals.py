"""Approval requests on their way to a target: each is held until its block ends (its
arguments arrive as fragments), then given whole to a target that writes approvals
(``Encoder.approvals``); any other target reports it `Dropped` (``approval_request``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..events import BlockStart, ToolArgsDelta
from ..fold.blocks import approval_arguments

if TYPE_CHECKING:
    from ._base import Encoder

__all__ = ["Asking"]


class Asking(dict[int, "list[str] | None"]):
    """The open approval requests: block index -> its argument fragments (``None`` for one
    the target cannot write)."""

    def open(self, encoder: Encoder, start: BlockStart) -> None:
        if encoder.approvals:
            self[start.index] = []
            return
        self[start.index] = None
        raw = start.raw if start.raw is not None else {"id": start.id, "name": start.name}
        encoder.drop("approval_request", start.index,
                     f"{encoder.provider} has no place for an approval request", raw)

    def add(self, event: ToolArgsDelta) -> bool:
        """Keep a fragment of an approval's arguments; ``False``: the delta is no approval's."""
        if event.index not in self:
            return False
        parts = self[event.index]
        if parts is not None:
            parts.append(event.fragment)
        return True

    def end(self, encoder: Encoder, index: int, out: list[bytes]) -> None:
        """The request at ``index`` ended (or the reply did): write it whole."""
        parts = self.pop(index)
        if parts is not None:
            encoder._on_approval(encoder.blocks[index], approval_arguments("".join(parts)),
                                 out)
