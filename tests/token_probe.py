"""Run as a child process by tests (llama.cpp never loads into pytest's): decode token ids with the embedded
model's tokenizer, and score a sequence with llama.cpp's own logprobs (every position's logits kept).

stdin: {"model": PATH, "decode": [[ids], ...], "score": {"prompt": [ids], "completion": [ids]} | null}
stdout: {"texts": [str, ...], "logprobs": [float, ...] | null}
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    import llama_cpp
    from llama_cpp import Llama

    from keel.agent.core.model.local.llama_loading import build_llama

    asked = json.load(sys.stdin)
    vocab, _ = build_llama(llama_cpp, model_path=asked["model"], vocab_only=True, verbose=False)
    texts = [
        vocab.detokenize(ids, special=True).decode("utf-8", "replace") for ids in asked["decode"]
    ]
    logprobs = None
    if asked.get("score"):
        prompt, completion = asked["score"]["prompt"], asked["score"]["completion"]
        sequence = prompt + completion
        llama, _ = build_llama(  # the worker's AMX-safe way: the default extra buffers crash there
            llama_cpp,
            model_path=asked["model"],
            n_ctx=len(sequence) + 8,
            n_batch=len(sequence) + 8,
            logits_all=True,
            verbose=False,
        )
        llama.eval(sequence)
        rows = Llama.logits_to_logprobs(llama.scores[: len(sequence)])
        logprobs = [float(rows[len(prompt) - 1 + i][token]) for i, token in enumerate(completion)]
    json.dump({"texts": texts, "logprobs": logprobs}, sys.stdout)


if __name__ == "__main__":
    main()
