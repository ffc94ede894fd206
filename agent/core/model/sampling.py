"""What one model call asks of sampling over the model's own settings: a strategy's way to make a call that
asks again differ from the one it repeats (the same request under greedy or fixed-seed sampling gets the same
reply back)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class CallSampling(BaseModel):
    """A call's temperature and seed; None leaves the model's (or the server's) own."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float | None = None
    seed: int | None = None

    def fields(self) -> dict[str, float | int]:
        """The ones set, by the names OpenAI's request body and litellm give them."""
        return self.model_dump(exclude_none=True)
