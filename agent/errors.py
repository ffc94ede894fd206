"""Typed errors: each carries its exit code, and the CLI turns any of them into one clear line."""

from __future__ import annotations


class KeelError(Exception):
    """Base of keel's own errors; `exit_code` follows DESIGN's contract."""

    exit_code = 1


class UsageError(KeelError):
    """A bad flag, argument or missing input: exit 2."""

    exit_code = 2


class ConfigError(KeelError):
    """A broken config file or value: exit 2, naming the file, the key and what is allowed."""

    exit_code = 2


class ProviderError(KeelError):
    """The model provider failed for good (after retries, or with an error retrying cannot fix)."""

    exit_code = 1

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
