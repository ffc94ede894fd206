"""The protocol between the core and its front ends: ops go in, events come out, nothing else crosses.

Ops and events are frozen values (base.py), events with their envelope set where they are made; every name
of the submodules is here, so `from keel.agent.core.protocol import X` needs no line added for a new event."""

from __future__ import annotations

from pydantic import TypeAdapter

from keel.agent.core.protocol.base import *
from keel.agent.core.protocol.error_classes import *
from keel.agent.core.protocol.events import *
from keel.agent.core.protocol.feature_events import *
from keel.agent.core.protocol.ops import *
from keel.agent.core.protocol.ops import Op

OP_ADAPTER: TypeAdapter[Op] = TypeAdapter(Op)
