"""bench/local_model: the embedded model's decode tokens/s and time to first token, keel's worker vs raw llama-cpp-python.

Paths on the same prompts, interleaved round by round so machine load hits them alike:
  raw      llama_cpp.Llama.create_completion in this process, llama-cpp-python's defaults where they are safe
           (the floor; on a build with AMX kernels the extra weight buffers stay off: see llama_loading.py)
  raw-safe the same with llama.cpp's extra weight buffers off, as keel's worker loads it on AMX machines
  keel     keel's ModelClient -> the model worker process over its pipes (what keel runs)
Each round ends the prompt differently, so every path reads the same new tokens after the prefix it kept from
its last round (as keel's turns do), and the order of the paths rotates from round to round. Only one path
decodes at a time.
Goal: keel decode >= 0.95x raw. Run: python bench/local_model.py [--rounds N] [--tokens N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from keel.agent.core.model.client import ModelClient
from keel.agent.core.model.local.assemble import ensure_model_file
from keel.agent.core.model.local.endpoint import embedded_worker, prepare_embedded_model
from keel.agent.core.model.local.engine import STOP_STRINGS, LocalEngine, Sampling, thread_counts
from keel.agent.core.model.local.llama_loading import EXTRA_BUFFERS_SETTING

TASK = "Write a Python function that parses an ISO date and returns the weekday name, with a docstring and doctests."


def messages(round_number: int) -> list[dict[str, str]]:
    """One conversation's next request: the same start every round, a new ending (as keel's turns are)."""
    return [
        {"role": "system", "content": "You are a helpful coding assistant."},
        {"role": "user", "content": f"{TASK} Call it version {round_number}."},
    ]


@dataclass
class Samples:
    ttft: list[float] = field(default_factory=list)
    decode: list[float] = field(default_factory=list)

    def add(self, started: float, first: float | None, last: float, pieces: int) -> None:
        """Time to the first piece; decode rate between the first and the last piece."""
        if first is None or pieces < 2:
            raise RuntimeError("the model produced fewer than 2 pieces; raise --tokens")
        self.ttft.append(first - started)
        self.decode.append((pieces - 1) / (last - first))


def raw_round(
    engine: LocalEngine, round_number: int, tokens: int
) -> tuple[float, float | None, float, int]:
    """The floor: llama-cpp-python's own streaming on the same rendered prompt and sampling."""
    llama = engine.llama
    sampling = Sampling()
    started = time.perf_counter()
    prompt = engine.prompt_tokens(messages(round_number), None)
    first, last, pieces = None, started, 0
    for piece in llama.create_completion(
        prompt,
        max_tokens=tokens,
        temperature=sampling.temperature,
        repeat_penalty=sampling.repeat_penalty,
        stop=STOP_STRINGS,
        stream=True,
    ):
        if piece["choices"][0]["text"]:
            last = time.perf_counter()
            first = first or last
            pieces += 1
    return started, first, last, pieces


async def client_round(
    client: ModelClient, round_number: int
) -> tuple[float, float | None, float, int]:
    """One streamed reply through keel's model layer; every delta counts as a piece."""
    arrivals: list[float] = []
    started = time.perf_counter()
    await client.complete(
        messages(round_number), None, lambda _text: arrivals.append(time.perf_counter())
    )
    return (
        started,
        arrivals[0] if arrivals else None,
        arrivals[-1] if arrivals else started,
        len(arrivals),
    )


def report(name: str, samples: Samples, floor: Samples) -> None:
    ttft, decode = statistics.median(samples.ttft), statistics.median(samples.decode)
    floor_ttft, floor_decode = statistics.median(floor.ttft), statistics.median(floor.decode)
    print(
        f"  {name:<9} decode {decode:6.1f} tok/s  ({decode / floor_decode:4.2f}x raw)   "
        f"first token {ttft * 1000:7.0f} ms  ({ttft / floor_ttft:4.2f}x raw)"
    )


def loaded_engine(path: Path, context: int, extra_buffers: bool | None) -> LocalEngine:
    """An engine loaded in this process; extra_buffers None lets llama.cpp's build decide (never AMX's path)."""
    import os

    if extra_buffers is False:
        os.environ[EXTRA_BUFFERS_SETTING] = "0"
    engine = LocalEngine(path, context_tokens=context)
    engine.load()
    os.environ.pop(EXTRA_BUFFERS_SETTING, None)
    return engine


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=128)
    options = parser.parse_args()

    endpoint = prepare_embedded_model()
    path = ensure_model_file(target=endpoint.path)
    engines = {
        "raw": loaded_engine(path, endpoint.context_window, extra_buffers=None),
        "raw-safe": loaded_engine(path, endpoint.context_window, extra_buffers=False),
    }
    keel = ModelClient(
        model=endpoint.model,
        retries=0,
        context_window=endpoint.context_window,
        extra={"max_tokens": options.tokens},
    )
    if not engines["raw"].extra_buffers:
        print(
            "this llama.cpp build has AMX kernels: raw loads without extra buffers too (else it crashes)"
        )
    print(
        f"model {path.name}; threads decode/prompt {thread_counts()}; worker pid "
        f"{embedded_worker(endpoint).pid}"
    )
    # The first reply of each pages the weights in (and repacks them where allowed): not what is compared.
    warm_up = time.perf_counter()
    for engine in engines.values():
        raw_round(engine, -1, 8)
    await keel.complete(messages(-1), None, lambda _text: None, max_tokens=8)
    print(f"warm-up (first replies, not counted) {time.perf_counter() - warm_up:.2f} s")
    results = {name: Samples() for name in (*engines, "keel")}
    paths = list(results)
    for number in range(options.rounds):
        shift = number % len(paths)  # each path in each position
        for name in paths[shift:] + paths[:shift]:
            if name == "keel":
                results[name].add(*await client_round(keel, number))
            else:
                results[name].add(*raw_round(engines[name], number, options.tokens))
    print(f"{options.rounds} rounds, {options.tokens} tokens each, medians:")
    for name, samples in results.items():
        report(name, samples, results["raw"])
    ratio = statistics.median(results["keel"].decode) / statistics.median(results["raw"].decode)
    print(f"keel/raw decode ratio: {ratio:.2f} (goal >= 0.95)")


if __name__ == "__main__":
    asyncio.run(main())
