"""Checks before a headless run or batch that the model can be called at all: exit 2 now, not retries later."""

from __future__ import annotations

import re

from keel.agent.core.api.models import is_direct_model, is_embedded
from keel.agent.core.errors import ConfigError

# Variables that are keys and nothing else: litellm also lists OLLAMA_API_BASE or AWS_* for providers
# that have defaults or other credential sources, and those are not worth refusing a run for.
_KEY_VARIABLE = re.compile(r"_API_KEY$|_API_TOKEN$")
EXAMPLES = "e.g. openai/gpt-4o-mini, anthropic/claude-sonnet-4-5, ollama_chat/qwen2.5-coder:7b"


def check_model(model: str, api_base: str | None) -> None:
    """ConfigError when litellm knows no provider for the model, or the provider's API key is not set.

    Direct OpenAI-compatible servers and the embedded model need neither check (nor litellm's import);
    every other model goes through litellm, which the run imports anyway.
    """
    if is_embedded(model) or is_direct_model(model, api_base):
        return
    from keel.agent.core.api.models import litellm_module

    litellm = litellm_module()
    try:
        litellm.get_llm_provider(model=model, api_base=api_base)
    except Exception:  # noqa: BLE001 - litellm raises its BadRequestError for a name without a provider
        raise ConfigError(_unknown_model(model, api_base)) from None
    if api_base:
        return  # the user's own server may need no key; what it says is reported when it says it
    missing = litellm.validate_environment(model=model).get("missing_keys") or []
    if missing and all(_KEY_VARIABLE.search(name) for name in missing):
        raise ConfigError(
            f"{model} needs {' or '.join(missing)}; set it, or choose another model (keel models)"
        )


def _unknown_model(model: str, api_base: str | None) -> str:
    if api_base:
        return (
            f"unknown model {model!r}: for an OpenAI-compatible server at {api_base} use "
            f"--model openai/{model}; other servers take PROVIDER/MODEL as litellm names them ({EXAMPLES})"
        )
    return (
        f"unknown model {model!r}: name it PROVIDER/MODEL as litellm does ({EXAMPLES}); "
        "`keel models` shows how to use others"
    )
