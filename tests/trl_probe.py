"""Run in .venv-trl (trl, torch's CPU build, keel editable): keel's rollout_func drives one real GRPOTrainer step
on a tiny Qwen2 model made here (no download), against the scripted server whose URL it is given; prints what
rollout_func returned, the trainer's log and whether the weights moved, as JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def tiny_model_and_tokenizer(vocab: int) -> tuple[Any, Any]:
    """A one-layer Qwen2 and a word-level tokenizer over `vocab` ids ("t0" … ), both made in memory."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    raw = Tokenizer(models.WordLevel(vocab={f"t{n}": n for n in range(vocab)}, unk_token="t0"))
    raw.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, unk_token="t0", pad_token="t1", eos_token="t2"
    )
    config = Qwen2Config(
        vocab_size=vocab, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=4096,
        pad_token_id=1, eos_token_id=2, bos_token_id=2,
    )  # fmt: skip
    return Qwen2ForCausalLM(config), tokenizer


def main() -> None:
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    import keel
    from keel.agent.harness.rollouts.adapters.trl import keel_reward, keel_rollout_func

    asked = json.loads(sys.argv[1])
    torch.manual_seed(0)
    model, tokenizer = tiny_model_and_tokenizer(asked["vocab"])
    task = keel.RolloutTask.model_validate(asked["task"])
    keel_func = keel_rollout_func(
        [task], model="openai/any", api_base=asked["url"], out=Path(asked["out"]), concurrency=1
    )
    returned: list[dict[str, Any]] = []

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        batch = keel_func(prompts, trainer)
        returned.append({"prompts": prompts, **batch})
        return batch

    config = GRPOConfig(
        output_dir=str(Path(asked["out"]) / "trainer"), per_device_train_batch_size=2,
        num_generations=2, max_steps=1, use_cpu=True, report_to=[], logging_steps=1,
        save_strategy="no", max_completion_length=256, bf16=False, learning_rate=1e-3,
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=model, reward_funcs=[keel_reward], args=config, processing_class=tokenizer,
        train_dataset=Dataset.from_list([{"prompt": task.id}] * 4), rollout_func=rollout_func,
    )  # fmt: skip
    before = [parameter.detach().clone() for parameter in model.parameters()]
    trainer.train()
    moved = any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    print(json.dumps({"returned": returned, "log": trainer.state.log_history, "moved": moved}))


if __name__ == "__main__":
    main()
