"""Seeded mutations of a capture's body: bytes, frames, and JSON values inside frames.

Every mutator takes the random generator, the body (as bytes and as frames) and the other
captures' bodies, and returns the mutated bytes with a short description of what it did
(``None`` when it does not apply to this body). The description and the seed reproduce it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from random import Random
from typing import Any

from .bodies import Body

__all__ = ["MUTATORS", "Mutation", "Raw", "random_value", "truncate"]


Others = Sequence[bytes]  # the other captures' bodies (for splices)


@dataclass(frozen=True)
class Raw:
    """A JSON value given as its text (what the encoder cannot write: a huge number, a deep
    nesting it would refuse)."""

    text: str


@dataclass(frozen=True)
class Mutation:
    name: str
    detail: str
    body: bytes


Found = Mutation | None  # (None: the mutator does not apply to this body)


def _deep(depth: int, rng: Random) -> Raw:
    if rng.random() < 0.5:
        return Raw("[" * depth + "]" * depth)
    return Raw('{"a":' * depth + "1" + "}" * depth)


def random_value(rng: Random) -> Any:
    """A JSON value of a random type, biased to the ones decoders trip on."""
    pick = rng.randrange(20)
    simple: list[Any] = [5, -1, 0, "a", "", [], [1, "x"], {}, {"a": 1}, True, False, None,
                         1.5, [[]], {"type": 7}]
    if pick < len(simple):
        return simple[pick]
    if pick == 15:
        return Raw(str(rng.choice([2**64, 2**70, -(2**63) - 1, 10**40])))
    if pick == 16:
        return _deep(rng.choice([64, 65, 128, 129, 200, 500, 900, 1000, 1024]), rng)
    if pick == 17:
        return "x" * rng.choice([1000, 100_000])
    if pick == 18:
        return Raw(rng.choice(['"\\u0000"', '"\\ud83d\\ude00"', "1e308", "-0", "1E2"]))
    return [random_value(rng)]


def dumps(value: Any) -> bytes:
    """``value`` as one line of JSON, with :class:`Raw` parts written as their text."""
    raws: list[str] = []

    def mark(node: Any) -> Any:
        if isinstance(node, Raw):
            raws.append(node.text)
            return f"\x00RAW{len(raws) - 1}\x00"
        if isinstance(node, dict):
            return {key: mark(item) for key, item in node.items()}
        if isinstance(node, list):
            return [mark(item) for item in node]
        return node

    text = json.dumps(mark(value), ensure_ascii=False, separators=(",", ":"))
    for number, raw in enumerate(raws):
        text = text.replace(json.dumps(f"\x00RAW{number}\x00"), raw)
    return text.encode("utf-8", "surrogatepass")


def _random_path(rng: Random, root: Any) -> list[Any]:
    """A path from ``root`` down to a random node (biased to go deep)."""
    path: list[Any] = []
    node = root
    while isinstance(node, (dict, list)) and node and (not path or rng.random() < 0.8):
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append(key)
        node = node[key]
    return path


def _replace(root: Any, path: list[Any], value: Any) -> Any:
    if not path:
        return value
    node = root
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return root


def _json_frames(body: Body) -> list[int]:
    return [i for i, frame in enumerate(body.frames) if body.payload(frame) is not None]


def _rejoin(body: Body, index: int, frame: bytes) -> bytes:
    frames = list(body.frames)
    frames[index] = frame
    return Body(body.kind, frames).join()


def json_value(rng: Random, data: bytes, body: Body, others: Others) -> Found:
    """A value somewhere in a frame's JSON replaced by one of another type."""
    candidates = _json_frames(body)
    if not candidates:
        return None
    index = rng.choice(candidates)
    root = body.payload(body.frames[index])
    path = _random_path(rng, root)
    if not path and rng.random() < 0.8:  # the whole frame: rarely
        return None
    value = random_value(rng)
    text = dumps(_replace(root, path, value))
    detail = f"frame {index} at {path!r} := {str(value)[:60]}"
    frame = body.with_payload(body.frames[index], text)
    return Mutation("json_value", detail, _rejoin(body, index, frame))


def json_delete(rng: Random, data: bytes, body: Body, others: Others) -> Found:
    """A key (or list item) somewhere in a frame's JSON deleted."""
    candidates = _json_frames(body)
    if not candidates:
        return None
    index = rng.choice(candidates)
    root = body.payload(body.frames[index])
    path = _random_path(rng, root)
    if not path:
        return None
    parent = root
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    text = dumps(root)
    return Mutation("json_delete", f"frame {index} del {path!r}",
                    _rejoin(body, index, body.with_payload(body.frames[index], text)))


def byte_flip(rng: Random, data: bytes, body: Body, others: Others) -> Found:
    if not data:
        return None
    out = bytearray(data)
    spots = [rng.randrange(len(out)) for _ in range(rng.choice([1, 1, 2, 8]))]
    for spot in spots:
        out[spot] = rng.choice([out[spot] ^ (1 << rng.randrange(8)), rng.randrange(256)])
    return Mutation("byte_flip", f"at {spots}", bytes(out))


def byte_delete(rng: Random, data: bytes, body: Body, others: Others) -> Found:
    if not data:
        return None
    start = rng.randrange(len(data))
    size = rng.choice([1, 1, 2, 5, 50, 500])
    return Mutation("byte_delete", f"[{start}:{start + size}]", data[:start] + data[start + size :])


_INSERTS = [b"\n", b"\r", b"\r\n", b"\n\n", b"{", b"}", b'"', b"\\", b"data: ", b"event: x\n",
            b": comment\n", b"\x00", b"\xff", b"\xe2\x82", b"[", b"]", b",", b"null", b" "]


def byte_insert(rng: Random, data: bytes, body: Body, others: Others) -> Found:
    spot = rng.randrange(len(data) + 1)
    piece = rng.choice(_INSERTS) if rng.random() < 0.8 else rng.randbytes(rng.randrange(1, 9))
    return Mutation("byte_insert", f"{piece!r} at {spot}", data[:spot] + piece + data[spot:])


def frame_duplicate(rng: Random, data: bytes, body: Body, others: Others) -> Found:
    if not body.frames:
        return None
    index = rng.randrange(len(body.frames))
    frames = list(body.frames)
    frames.insert(rng.randrange(len(frames) + 1), frames[index])
    return Mutation("frame_duplicate", f"frame {index}", Body(body.kind, frames).join())


def frame_swap(rng: Random, data: bytes, body: Body, others: Others) -> Found:
    if len(body.frames) < 2:
        return None
    a, b = rng.sample(range(len(body.frames)), 2)
    frames = list(body.frames)
    frames[a], frames[b] = frames[b], frames[a]
    return Mutation("frame_swap", f"frames {a} and {b}", Body(body.kind, frames).join())


def frame_delete(rng: Random, data: bytes, body: Body, others: Others) -> Found:
    if not body.frames:
        return None
    index = rng.randrange(len(body.frames))
    frames = body.frames[:index] + body.frames[index + 1 :]
    return Mutation("frame_delete", f"frame {index}", Body(body.kind, frames).join())


def splice(rng: Random, data: bytes, body: Body, others: Others) -> Found:
    """A frame of another capture (often another provider's) put among this body's frames."""
    if not others:
        return None
    other = rng.choice(others)
    start = rng.randrange(len(other))
    piece = other[start : start + rng.choice([20, 200, 2000])]
    if body.kind != "json-array" and body.frames:
        frames = list(body.frames)
        spot = rng.randrange(len(frames) + 1)
        frames.insert(spot, piece)
        return Mutation("splice", f"{piece[:40]!r}... as frame {spot}",
                        Body(body.kind, frames).join())
    spot = rng.randrange(len(data) + 1)
    return Mutation("splice", f"{piece[:40]!r}... at {spot}", data[:spot] + piece + data[spot:])


def truncate(rng: Random, data: bytes, body: Body, others: Others) -> Found:
    cut = rng.randrange(len(data) + 1)
    return Mutation("truncate", str(cut), data[:cut])


Mutator = Callable[[Random, bytes, Body, Others], Found]

# (mutator, weight): JSON type mutations dominate, they are what the audit found.
MUTATORS: list[tuple[Mutator, int]] = [
    (json_value, 10), (json_delete, 3), (byte_flip, 1), (byte_delete, 1), (byte_insert, 1),
    (frame_duplicate, 1), (frame_swap, 1), (frame_delete, 1), (splice, 1), (truncate, 2),
]
