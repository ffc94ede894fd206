"""Ops: what front ends hand the core (a prompt, an interrupt, an approval, ...)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from keel.agent.core.protocol.base import Model, new_op_id


class OpBase(Model):
    """Every op has an id, generated unless the front end names it."""

    id: str = Field(default_factory=new_op_id)


class UserPrompt(OpBase):
    type: Literal["user_prompt"] = "user_prompt"
    text: str
    # image files sent with it (relative to the workspace, or absolute)
    images: list[str] = Field(default_factory=list)


class Continue(OpBase):
    """Go on with the current task without a new message (after a budget stop, a crash or an interrupt)."""

    type: Literal["continue"] = "continue"


class Interrupt(OpBase):
    """Stop the running turn (or drop the queued ones); each is answered by `turn.aborted`."""

    type: Literal["interrupt"] = "interrupt"


ApprovalDecision = Literal["allow_once", "allow_session", "deny"]


class Approve(OpBase):
    type: Literal["approve"] = "approve"
    call_id: str
    decision: ApprovalDecision


class Compact(OpBase):
    """Ask for a summary of the context now (the TUI's /compact)."""

    type: Literal["compact"] = "compact"


class SetBudget(OpBase):
    type: Literal["set_budget"] = "set_budget"
    budget: int | None


class Shutdown(OpBase):
    type: Literal["shutdown"] = "shutdown"


class Undo(OpBase):
    """Put the workspace back before its last turn that changed it, or at checkpoint `checkpoint` (an id
    prefix): the TUI's /undo. Queued behind the running turn; answered by undo.applied (or an error)."""

    type: Literal["undo"] = "undo"
    checkpoint: str = ""


class SetPlanMode(OpBase):
    """Enter or leave plan mode (only the read tools run; the model ends with a plan): queued behind the
    running turn, answered by plan_mode.changed."""

    type: Literal["set_plan_mode"] = "set_plan_mode"
    active: bool


Op = Annotated[
    UserPrompt
    | Continue
    | Interrupt
    | Approve
    | Compact
    | SetBudget
    | Shutdown
    | Undo
    | SetPlanMode,
    Field(discriminator="type"),
]
