"""Typed errors and exit codes: each error carries its exit code, and the CLI turns any of them into one line."""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from keel.agent.core.protocol import FinishStatus


class ExitCode(IntEnum):
    """keel's exit codes (the README's "Using it"): what a script or a CI job branches on."""

    OK = 0  # the agent finished
    FAILURE = 1  # the provider failed after retries, an internal error, a declined undo
    USAGE = 2  # a bad flag or argument, a broken config, a model that cannot be used here
    STOPPED = 3  # the budget, the step limit or the loop guard stopped the run (resumable)
    INTERRUPTED = 130  # 128 + SIGINT
    READER_GONE = 141  # 128 + SIGPIPE: stdout's reader went away (`keel run ... | head -1`)

    @staticmethod
    def of_signal(number: int) -> int:
        """128 + N: how a shell reports a process that signal N ended."""
        return 128 + number


_BY_STATUS: dict[str, ExitCode] = {
    "completed": ExitCode.OK,
    "error": ExitCode.FAILURE,
    "budget_exhausted": ExitCode.STOPPED,
    "max_steps": ExitCode.STOPPED,
    "loop_detected": ExitCode.STOPPED,
    "interrupted": ExitCode.INTERRUPTED,
}


def exit_code_for(status: FinishStatus) -> ExitCode:
    """The exit code of a run that ended with `session.finished` of this status."""
    return _BY_STATUS[status]


class KeelError(Exception):
    """Base of keel's own errors; `exit_code` follows the README's exit codes."""

    exit_code: ClassVar[ExitCode] = ExitCode.FAILURE


class UsageError(KeelError):
    """A bad flag, argument or missing input: exit 2."""

    exit_code = ExitCode.USAGE


class ConfigError(KeelError):
    """A broken config file or value: exit 2, naming the file, the key and what is allowed."""

    exit_code = ExitCode.USAGE


class ProviderError(KeelError):
    """The model provider failed for good (after retries, or with an error retrying cannot fix)."""

    exit_code = ExitCode.FAILURE

    def __init__(self, message: str, error_class: str = "ProviderError") -> None:
        super().__init__(message)
        self.error_class = error_class


class RetryableProviderError(ProviderError):
    """A fault worth retrying: 429, 5xx, a timeout, a dropped connection; `retry_after` as the server asked."""

    def __init__(
        self, message: str, error_class: str = "ProviderError", retry_after: float | None = None
    ) -> None:
        super().__init__(message, error_class)
        self.retry_after = retry_after


class ContextWindowExceeded(ProviderError):
    """The provider says the request does not fit the model's context window."""


class ToolsUnsupported(ProviderError):
    """The provider rejected native `tools`; the session switches to the text tool protocol."""


class SessionLogError(KeelError):
    """The session log could not be written or made durable (a full disk, a file-size limit, an I/O error):
    the session stops, exit 1, with the log as it was before the failed write."""

    exit_code = ExitCode.FAILURE


class SessionInUse(UsageError):
    """Another keel process has this session open: two writers would interleave one log (exit 2)."""
