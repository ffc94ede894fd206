"""Run in .venv-skyrl (skyrl-train installed without its GPU dependencies, keel editable): keel's SkyRL generator
against the real skyrl_train.generators.base types; prints the output it checked as JSON.

skyrl_train.generators' __init__ imports the trainer's torch stack, so base.py (types only) is loaded from its
file under its own module name, as the package would name it."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any


def skyrl_base() -> Any:
    package = importlib.util.find_spec("skyrl_train")
    assert package is not None and package.submodule_search_locations
    path = Path(package.submodule_search_locations[0]) / "generators" / "base.py"
    spec = importlib.util.spec_from_file_location("skyrl_train.generators.base", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    from pydantic import TypeAdapter

    from keel.agent.harness.rollouts.adapters.skyrl import KeelGenerator
    from keel.agent.harness.rollouts.api import RolloutTask

    asked = json.loads(sys.argv[1])
    base = skyrl_base()

    class Generator(KeelGenerator, base.GeneratorInterface):  # type: ignore[misc]
        """keel's generator as a GeneratorInterface: instantiable only if it implements generate."""

    task = RolloutTask.model_validate(asked["task"])
    generator = Generator(model="openai/any", api_base=asked["url"], concurrency=1, out=Path(asked["out"]))  # fmt: skip
    batch = {
        "prompts": [[{"role": "user", "content": "fix calc.py"}]] * 2,
        "env_classes": ["keel"] * 2,
        "env_extras": [{"keel_task": task.model_dump(mode="json")}] * 2,
        "sampling_params": None,
        "trajectory_ids": [base.TrajectoryID(task.id, 0), base.TrajectoryID(task.id, 1)],
        "batch_metadata": base.BatchMetadata(global_step=1, training_phase="train"),
    }
    TypeAdapter(base.GeneratorInput).validate_python(batch, strict=True)
    out = asyncio.run(generator.generate(batch))
    assert set(out) == set(base.GeneratorOutput.__annotations__), sorted(out)
    TypeAdapter(base.GeneratorOutput).validate_python(out, strict=True)
    ids = out["trajectory_ids"]
    assert all(type(i) is base.TrajectoryID for i in ids)
    report = {**out, "trajectory_ids": [[i.to_string(), i.step] for i in ids]}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
