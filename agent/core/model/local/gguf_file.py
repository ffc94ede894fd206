"""What a GGUF file says about itself (architecture, name, parameters, chat template), read from its header.

Pure standard library and cheap: keel checks a `keel-local/<path>` file and sizes it for the small-model
profile before anything starts; llama.cpp itself only ever loads it in the model worker.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO

MAGIC = b"GGUF"
# value type -> struct format of a scalar (8: string, 9: array are read apart)
_SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
_STRING, _ARRAY = 8, 9


class NotGguf(ValueError):
    """The file is not a GGUF model (wrong magic, unsupported version, or cut short)."""


@dataclass(frozen=True)
class GgufInfo:
    """The header facts keel uses; `parameters` is the metadata's count, else the tensors' elements summed."""

    path: Path
    size: int  # bytes on disk
    architecture: str
    name: str
    parameters: int
    context_length: int | None
    chat_template: str | None

    @property
    def billions(self) -> float:
        return self.parameters / 1e9


def _unpack(file: BinaryIO, fmt: str) -> int | float | bool:
    size = struct.calcsize("<" + fmt)
    data = file.read(size)
    if len(data) != size:
        raise NotGguf("it ends inside its header")
    value: int | float | bool = struct.unpack("<" + fmt, data)[0]
    return value


def _string(file: BinaryIO) -> str:
    length = int(_unpack(file, "Q"))
    data = file.read(length)
    if len(data) != length:
        raise NotGguf("it ends inside its header")
    return data.decode("utf-8", "replace")


def _value(file: BinaryIO, kind: int) -> object:
    """One metadata value; arrays (the tokenizer's vocabulary) are skipped, not kept."""
    if kind == _STRING:
        return _string(file)
    if kind in _SCALARS:
        return _unpack(file, _SCALARS[kind])
    if kind != _ARRAY:
        raise NotGguf(f"it has a metadata value of unknown type {kind}")
    item, count = int(_unpack(file, "I")), int(_unpack(file, "Q"))
    if item in _SCALARS:
        file.seek(count * struct.calcsize("<" + _SCALARS[item]), os.SEEK_CUR)
    else:
        for _ in range(count):
            _value(file, item)
    return None


def read_gguf_header(path: Path) -> GgufInfo:
    """The file's header facts; NotGguf when it is not a GGUF file, OSError when it cannot be read."""
    with path.open("rb") as raw:
        file: BinaryIO = raw
        if file.read(4) != MAGIC:
            raise NotGguf("it does not start with the GGUF magic bytes")
        version = int(_unpack(file, "I"))
        if version < 2:
            raise NotGguf(f"it is GGUF version {version}; llama.cpp reads version 2 and later")
        tensors, entries = int(_unpack(file, "Q")), int(_unpack(file, "Q"))
        metadata: dict[str, object] = {}
        for _ in range(entries):
            key = _string(file)
            metadata[key] = _value(file, int(_unpack(file, "I")))
        elements = 0
        for _ in range(tensors):
            _string(file)
            dims = [int(_unpack(file, "Q")) for _ in range(int(_unpack(file, "I")))]
            _unpack(file, "I")  # its type
            _unpack(file, "Q")  # its offset
            count = 1
            for dim in dims:
                count *= dim
            elements += count
    architecture = str(metadata.get("general.architecture") or "unknown")
    context = metadata.get(f"{architecture}.context_length")
    template = metadata.get("tokenizer.chat_template")
    counted = metadata.get("general.parameter_count")
    return GgufInfo(
        path=path,
        size=path.stat().st_size,
        architecture=architecture,
        name=str(metadata.get("general.name") or path.stem),
        parameters=int(counted) if isinstance(counted, int) and counted > 0 else elements,
        context_length=int(context) if isinstance(context, int) else None,
        chat_template=template if isinstance(template, str) and template.strip() else None,
    )


@lru_cache(maxsize=16)
def _cached(path: Path, size: int, mtime_ns: int) -> GgufInfo:
    return read_gguf_header(path)


def gguf_info(path: Path) -> GgufInfo:
    """read_gguf_header, read once per version of the file in this process."""
    stat = path.stat()
    return _cached(path, stat.st_size, stat.st_mtime_ns)
