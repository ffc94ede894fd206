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

    from keel.agent.core.model.local.engine import PREFILL_REPORT_MIN
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
            logits_all=True,
            verbose=False,
        )
        # Read as the worker read a session's first prompt, then one token at a time as it sampled: a batch
        # and a single token take different kernels (repacked weights most of all), whose logits differ by
        # more than the noise the test allows. A long prompt is read up to its last token, which is read alone.
        alone = prompt[-1:] if len(prompt) - 1 >= PREFILL_REPORT_MIN else []
        llama.eval(prompt[: len(prompt) - len(alone)])
        for token in [*alone, *completion[:-1]]:
            llama.eval([token])
        rows = Llama.logits_to_logprobs(llama.scores[: len(sequence)])
        logprobs = [float(rows[len(prompt) - 1 + i][token]) for i, token in enumerate(completion)]
    json.dump({"texts": texts, "logprobs": logprobs}, sys.stdout)


if __name__ == "__main__":
    main()
