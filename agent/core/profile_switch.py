"""When a session moves its model to the small-model profile: a model that fails at calls early (keel had to
correct its replies twice within its first six) is treated as the small model it behaves like, whatever its
name or server said, for the rest of the session (a `profile.changed` event, folded, so a resume keeps it)."""

from __future__ import annotations

from keel.agent.core.profile import ModelProfile, small_sampling
from keel.agent.core.state import SessionState
from keel.prompts import plural

EARLY_REPLIES = 6  # the replies of a session that count as its start
EARLY_FAILURES = 2  # corrected replies among them that make it a small model


def early_failures(state: SessionState) -> str | None:
    """Why the session should move to the small profile now, or None (already there, or not failing early)."""
    if state.small_profile or state.replies > EARLY_REPLIES:
        return None
    if state.failed_replies < EARLY_FAILURES:
        return None
    return (
        f"{state.failed_replies} of the model's first {plural(state.replies, 'reply', 'replies')} "
        "had to be corrected"
    )


def as_small(profile: ModelProfile, model: str, api_base: str | None) -> ModelProfile:
    """The profile with the small-model choices: compact, and when served locally a low temperature (if none
    was set) and a reply limit (what agent/core/profile.py gives a model known to be small from the start)."""
    temperature, reply_tokens = small_sampling(model, api_base, profile.temperature)
    update = {"compact": True, "temperature": temperature, "reply_tokens": reply_tokens}
    return profile.model_copy(update=update)
