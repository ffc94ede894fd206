"""Run as a child process by tests (llama.cpp never loads into pytest's): decode token ids with the embedded
model's tokenizer, and score a sequence with llama.cpp's own logprobs (every position's logits kept).

stdin: {"model": PATH, "decode": [[ids], ...], "score": {"prompt": [ids], "completion": [ids]} | null}
stdout: {"texts": [str, ...], "logprobs": [float, ...] | null}
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    from llama_cpp import Llama

    asked = json.load(sys.stdin)
    vocab = Llama(model_path=asked["model"], vocab_only=True, verbose=False)
    texts = [
        vocab.detokenize(ids, special=True).decode("utf-8", "replace") for ids in asked["decode"]
    ]
    logprobs = None
    if asked.get("score"):
        prompt, completion = asked["score"]["prompt"], asked["score"]["completion"]
        sequence = prompt + completion
        llama = Llama(
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
