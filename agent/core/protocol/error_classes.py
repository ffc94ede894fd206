"""The closed set of error classes an `error` event names, and how any error's name maps into it."""

from __future__ import annotations

from typing import Literal, get_args

ErrorClass = Literal[
    # the provider's, as it (or litellm) names them
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "BadRequestError",
    "ConflictError",
    "UnprocessableEntityError",
    "ContentPolicyViolationError",
    "RateLimitError",
    "InternalServerError",
    "BadGatewayError",
    "ServiceUnavailableError",
    "Timeout",
    "APIConnectionError",
    "APIError",
    "ContextWindowExceededError",
    "ProviderError",  # any other provider failure
    # the embedded model's
    "ModelWorkerDied",
    "LocalModelUnavailable",
    "LocalModelError",
    # keel's own
    "CheckpointError",
    "McpServerError",  # an MCP server that did not start: its tools are not offered
    "UntrustedConfig",  # an untrusted repository's config keys that would widen permissions, ignored
    "SessionLogError",  # the session log could not be written (a full disk): the session stops
    "InternalError",
]
ERROR_CLASSES: frozenset[str] = frozenset(get_args(ErrorClass))
_ERROR_ALIASES: dict[str, ErrorClass] = {
    "TimeoutError": "Timeout",
    "ConnectionError": "APIConnectionError",
    "ConnectionRefusedError": "APIConnectionError",
    "ConnectionResetError": "APIConnectionError",
    "ContextWindowExceeded": "ContextWindowExceededError",
}


def error_class_of(name: str) -> ErrorClass:
    """The closed-set class for an error's name; a provider class keel does not know is `ProviderError`."""
    if name in ERROR_CLASSES:
        return name  # type: ignore[return-value]
    return _ERROR_ALIASES.get(name, "ProviderError")
