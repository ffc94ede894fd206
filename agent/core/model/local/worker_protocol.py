"""What keel and its model worker process say to each other: one JSON object per line, over the worker's pipes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from keel.agent.core.protocol import TurnTokens

ProgressStage = Literal["assembling", "loading", "ready", "prompt"]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------- keel -> worker


class SamplingSpec(_Message):
    """How one reply is sampled (greedy by default, so runs repeat)."""

    max_tokens: int | None = None
    temperature: float | None = None
    seed: int | None = None
    prose_only: bool = False  # keel asked for an answer: the reply may not open with a call
    record_tokens: bool = False  # send the reply's token ids and logprobs with its Done


class Generate(_Message):
    """Generate one reply: prose streamed as pieces, then at most one tool call."""

    type: Literal["generate"] = "generate"
    id: int
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    sampling: SamplingSpec = SamplingSpec()


class Cancel(_Message):
    """Stop generating the reply `id` (its Done or Failed still follows)."""

    type: Literal["cancel"] = "cancel"
    id: int


Request = Annotated[Generate | Cancel, Field(discriminator="type")]


# ---------------------------------------------------------------- worker -> keel


class Hello(_Message):
    """The worker started: llama.cpp imports and the model file is there or can be assembled."""

    type: Literal["hello"] = "hello"
    pid: int
    llama_cpp_version: str


class Unavailable(_Message):
    """The worker cannot serve the model here (llama-cpp-python or the model's pieces are missing)."""

    type: Literal["unavailable"] = "unavailable"
    message: str


class Progress(_Message):
    """Getting ready (assembling the file, loading it) or reading a long prompt (`done` of `total` tokens)."""

    type: Literal["progress"] = "progress"
    stage: ProgressStage
    id: int | None = None
    done: int = 0
    total: int = 0
    message: str = ""


class Piece(_Message):
    """Text of reply `id`, as it is generated."""

    type: Literal["piece"] = "piece"
    id: int
    text: str


class CallMade(_Message):
    """A tool call the model wrote, read under a grammar of the offered tools."""

    name: str
    arguments: str


class Done(_Message):
    """Reply `id` is complete."""

    type: Literal["done"] = "done"
    id: int
    calls: list[CallMade] = []
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = "stop"
    tokens: TurnTokens | None = None  # asked for with SamplingSpec.record_tokens


class Failed(_Message):
    """Reply `id` could not be generated; `kind` says whether keel can act on it."""

    type: Literal["failed"] = "failed"
    id: int
    kind: Literal["prompt_too_long", "unavailable", "error"]
    message: str


Reply = Annotated[
    Hello | Unavailable | Progress | Piece | Done | Failed, Field(discriminator="type")
]

REQUEST_ADAPTER: TypeAdapter[Request] = TypeAdapter(Request)
REPLY_ADAPTER: TypeAdapter[Reply] = TypeAdapter(Reply)


def encode(message: _Message) -> bytes:
    """One message as its line on the wire."""
    return message.model_dump_json().encode() + b"\n"
