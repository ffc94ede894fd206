"""Internal errors, keel's own bugs as opposed to the provider's failures: each one's traceback is written to a
diagnostic log under $KEEL_HOME/logs/ (and with --debug to stderr), so no failure is a line without its cause."""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from keel.agent.core.config_files import keel_home

if TYPE_CHECKING:
    from keel.agent.core.protocol import Error, ErrorClass

INTERNAL_ERROR: ErrorClass = "InternalError"  # the error_class of an internal error's event
# Tests only: a fault point's name (see inject_fault) makes keel's own code raise there, as a bug would.
FAULT_ENV = "KEEL_TEST_FAULT"

_debug = False
_held: list[str] | None = None  # --debug's tracebacks, kept back while a UI draws on the terminal


class InjectedFault(RuntimeError):
    """Raised where KEEL_TEST_FAULT says: stands for a bug of keel's in tests of how errors are handled."""


def inject_fault(point: str) -> None:
    """Raise InjectedFault when KEEL_TEST_FAULT names this point; otherwise nothing (one environment look-up)."""
    if os.environ.get(FAULT_ENV) == point:
        raise InjectedFault(f"a fault injected at {point} ({FAULT_ENV})")


def set_debug(on: bool) -> None:
    """`--debug`: internal errors' tracebacks go to stderr as well as to the diagnostic log."""
    global _debug
    _debug = on


@contextmanager
def tracebacks_held() -> Iterator[None]:
    """While a UI holds the terminal, --debug's tracebacks wait; they are printed once it lets go."""
    global _held
    _held = []
    try:
        yield
    finally:
        held, _held = _held, None
        for text in held:
            _print(text)


def log_internal_error(
    exc: BaseException, session_id: str = "", redact: Callable[[str], str] = str
) -> Path | None:
    """Append exc's traceback (secrets redacted) to $KEEL_HOME/logs/<session or time>.log; the file, or None
    when it cannot be written. With --debug the traceback goes to stderr too."""
    text = redact("".join(traceback.format_exception(exc)))
    if _debug:
        if _held is not None:
            _held.append(text)
        else:
            _print(text)
    name = session_id or f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    path = keel_home() / "logs" / f"{name}.log"
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8", errors="replace") as log:
            log.write(f"--- {stamp} internal error (pid {os.getpid()})\n{text}\n")
    except OSError:
        return None
    return path


def describe_internal_error(exc: BaseException, log: Path | None) -> str:
    """One line for a person: what broke, that it is keel's fault, and where its traceback is."""
    where = f"its traceback is in {log}" if log else "its traceback could not be written"
    return f"internal error: {type(exc).__name__}: {exc} ({where}; --debug prints it)"


def internal_error_event(
    exc: BaseException, session_id: str, redact: Callable[[str], str] = str
) -> Error:
    """The fatal `error` event that ends a task keel's own bug broke, its traceback logged."""
    from keel.agent.core.protocol import Error

    message = describe_internal_error(exc, log_internal_error(exc, session_id, redact))
    return Error(error_class=INTERNAL_ERROR, message=redact(message), fatal=True)


def _print(text: str) -> None:
    with suppress(OSError, ValueError):  # stderr is gone or closed
        sys.stderr.write(text if text.endswith("\n") else text + "\n")
        sys.stderr.flush()
