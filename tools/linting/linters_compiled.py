"""Go and Rust checkers for the lint engine: gofmt on every edit, go vet and cargo check on request (offline)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from keel.tools.linting.linter_process import (
    FAST_TIMEOUT,
    PROJECT_TIMEOUT,
    CheckOutcome,
    LinterJail,
    first_line,
    run_process,
)
from keel.tools.linting.syntax_check import Diagnostic, relative_path

_POSITIONED = re.compile(r"^(?:vet: )?(.+?\.(?:go|rs)):(\d+):(\d+): (.*)$")


def _nearest_dir_with(path: Path, marker: str, root: Path) -> Path | None:
    for parent in path.parents:
        if (parent / marker).is_file():
            return parent
        if parent == root:
            break
    return None


def _positioned(text: str, cwd: Path, root: Path, source: str) -> list[Diagnostic]:
    """Diagnostics from `file:line:col: message` lines (gofmt, go vet)."""
    diagnostics = []
    for line in text.splitlines():
        if match := _POSITIONED.match(line.strip()):
            path = Path(os.path.realpath(cwd / match[1]))
            diagnostics.append(
                Diagnostic(
                    path=relative_path(path, root),
                    line=int(match[2]),
                    col=int(match[3]),
                    message=match[4],
                    source=source,
                )
            )
    return diagnostics


async def check_gofmt(files: list[Path], root: Path, jail: LinterJail) -> CheckOutcome:
    """`gofmt -e`: Go's own parser, fast enough for every edit."""
    gofmt = shutil.which("gofmt")
    if gofmt is None:
        return CheckOutcome()
    result = await run_process(jail, [gofmt, "-e", "-l", *map(str, files)], root, FAST_TIMEOUT)
    return CheckOutcome(_positioned(result.stderr, root, root, "gofmt"), set(files))


async def check_go_vet(files: list[Path], root: Path, jail: LinterJail) -> CheckOutcome:
    """`go vet` on the packages holding the files (type errors included), one run per module."""
    go = shutil.which("go")
    if go is None:
        return CheckOutcome()
    modules: dict[Path, set[str]] = {}
    for path in files:
        module = _nearest_dir_with(path, "go.mod", root)
        if module is not None:
            package = relative_path(path.parent, module)
            modules.setdefault(module, set()).add("." if package == "." else f"./{package}")
    outcome = CheckOutcome()
    env = {"GOTOOLCHAIN": "local", "GOPROXY": "off"}  # lint never downloads
    for module, packages in modules.items():
        result = await run_process(
            jail, [go, "vet", *sorted(packages)], module, PROJECT_TIMEOUT, env
        )
        found = _positioned(result.stderr, module, root, "go vet")
        if result.returncode != 0 and not found:
            outcome.note = f"go vet failed in {relative_path(module, root) or '.'}: " + first_line(
                "\n".join(line for line in result.stderr.splitlines() if not line.startswith("#"))
            )
        outcome.diagnostics.extend(found)
    return outcome


def _cargo_file(file_name: str, crate: Path, root: Path) -> Path:
    """rustc names files relative to the cargo workspace root, which may be above the crate."""
    for base in (crate, *crate.parents):
        if (base / file_name).is_file():
            return Path(os.path.realpath(base / file_name))
        if base == root:
            break
    return crate / file_name


async def check_cargo(files: list[Path], root: Path, jail: LinterJail) -> CheckOutcome:
    """`cargo check` errors for the crates holding the files (offline: lint never downloads)."""
    cargo = shutil.which("cargo")
    if cargo is None:
        return CheckOutcome()
    crates = {crate for path in files if (crate := _nearest_dir_with(path, "Cargo.toml", root))}
    outcome = CheckOutcome()
    for crate in sorted(crates):
        argv = [cargo, "check", "--message-format=json", "--offline", "--quiet"]
        result = await run_process(
            jail, argv, crate, PROJECT_TIMEOUT, {"CARGO_TERM_COLOR": "never"}
        )
        found = []
        for line in result.stdout.splitlines():
            try:
                item = json.loads(line)
            except json.JSONDecodeError:
                continue
            message = item.get("message") or {}
            spans = [s for s in message.get("spans", []) if s.get("is_primary")]
            is_error = item.get("reason") == "compiler-message" and message.get("level") == "error"
            if not is_error or not spans:
                continue
            found.append(
                Diagnostic(
                    path=relative_path(_cargo_file(spans[0]["file_name"], crate, root), root),
                    line=spans[0]["line_start"],
                    col=spans[0]["column_start"],
                    message=message.get("message", ""),
                    code=(message.get("code") or {}).get("code", ""),
                    source="cargo",
                )
            )
        if result.returncode != 0 and not found:
            outcome.note = f"cargo check failed in {relative_path(crate, root)}: " + first_line(
                result.stderr
            )
        outcome.diagnostics.extend(found)
    return outcome
