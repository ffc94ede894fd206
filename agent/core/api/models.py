"""The public surface of the model stack: the embedded models, their files and workers, and which models need
litellm."""

from __future__ import annotations

from keel.agent.core.model.client import litellm_module
from keel.agent.core.model.local.assemble import ModelFileStatus, model_status, said_missing
from keel.agent.core.model.local.catalog import EMBEDDED_MODELS, EmbeddedModel, default_model
from keel.agent.core.model.local.gguf_file import gguf_info
from keel.agent.core.model.local.model_file import (
    file_model_name,
    file_problem,
    local_model_name,
    resolve_file,
)
from keel.agent.core.model.local.names import file_of, is_embedded
from keel.agent.core.model.local.spec import models_dir
from keel.agent.core.model.local.worker_client import last_crash
from keel.agent.core.model.openai_http import is_direct_model

__all__ = [
    "EMBEDDED_MODELS",
    "EmbeddedModel",
    "ModelFileStatus",
    "default_model",
    "file_model_name",
    "file_of",
    "file_problem",
    "gguf_info",
    "is_direct_model",
    "is_embedded",
    "last_crash",
    "litellm_module",
    "local_model_name",
    "model_status",
    "models_dir",
    "resolve_file",
    "said_missing",
]
