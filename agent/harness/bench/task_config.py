"""task.toml of a Harbor task, as Harbor's task docs describe it: the parts keel runs by, the rest kept."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Section(BaseModel):
    """A table of task.toml: known keys typed, keys of newer Harbor releases kept as they are."""

    model_config = ConfigDict(extra="allow")


class TaskInfo(Section):
    """[task]: the task's package name and description (Harbor registries use them)."""

    name: str | None = None
    description: str = ""


class VerifierSection(Section):
    """[verifier]: how long tests/test.sh may run, and its environment variables."""

    timeout_sec: float = Field(600.0, gt=0)
    env: dict[str, str] = Field(default_factory=dict)


class AgentSection(Section):
    """[agent]: how long the agent may work."""

    timeout_sec: float | None = Field(None, gt=0)


class EnvironmentSection(Section):
    """[environment]: building the environment and what it may use."""

    build_timeout_sec: float = Field(600.0, gt=0)
    docker_image: str | None = None
    cpus: int | None = None
    memory_mb: int | None = None
    storage_mb: int | None = None
    gpus: int | None = None
    env: dict[str, str] = Field(default_factory=dict)
    workdir: str | None = None
    allow_internet: bool | None = None
    network_mode: str | None = None

    @property
    def network(self) -> bool:
        """Whether commands may reach the network (Harbor's default is public)."""
        if self.network_mode is not None:
            return self.network_mode != "no-network"
        return self.allow_internet is not False


class SolutionSection(Section):
    """[solution]: environment variables of solution/solve.sh."""

    env: dict[str, str] = Field(default_factory=dict)


class TaskConfig(Section):
    """The whole task.toml; `version` is the older name of `schema_version`."""

    schema_version: str = "1.0"
    task: TaskInfo | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    verifier: VerifierSection = Field(default_factory=VerifierSection)
    agent: AgentSection = Field(default_factory=AgentSection)
    environment: EnvironmentSection = Field(default_factory=EnvironmentSection)
    solution: SolutionSection = Field(default_factory=SolutionSection)
    source: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _version_is_schema_version(cls, data: Any) -> Any:
        if isinstance(data, dict) and "version" in data:
            data = dict(data)
            data.setdefault("schema_version", str(data.pop("version")))
        return data

    @property
    def category(self) -> str:
        return str(self.metadata.get("category", ""))
