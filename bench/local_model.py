"""bench/local_model: the embedded model's decode tokens/s and time to first token, through keel vs raw llama-cpp-python.

Three paths on the same prompts, interleaved round by round so machine load hits them alike:
  raw     llama_cpp.Llama.create_completion on the prompt rendered by the model's template (the floor)
  keel    keel's ModelClient -> litellm -> the in-process `keel-local` provider (what keel runs)
  server  keel's ModelClient -> litellm -> llama-cpp-python's OpenAI-compatible server on 127.0.0.1
          (the alternative that was not chosen; its start-up time is printed too)
Each round puts a different number at the start of the prompt, so no path gets a cached prompt prefix, and
the order of the paths rotates from round to round.
Goal: keel decode >= 0.95x raw. Run: python bench/local_model.py [--rounds N] [--tokens N] [--no-server]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from agent.local.endpoint import embedded_engine, prepare_embedded_model
from agent.local.engine import STOP_STRINGS, LocalEngine, Sampling, thread_counts
from agent.model import ModelClient

TASK = "Write a Python function that parses an ISO date and returns the weekday name, with a docstring and doctests."


def messages(round_number: int) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": f"Session {round_number}. You are a helpful coding assistant."},
        {"role": "user", "content": TASK},
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


def raw_round(engine: LocalEngine, round_number: int, tokens: int) -> tuple[float, float | None, float, int]:
    """The floor: llama-cpp-python's own streaming on the same rendered prompt and sampling."""
    llama = engine.llama
    llama.reset()  # no prompt prefix left over from another path
    sampling = Sampling()
    started = time.perf_counter()
    prompt = engine.prompt_tokens(messages(round_number), None)
    first, last, pieces = None, started, 0
    for piece in llama.create_completion(
        prompt, max_tokens=tokens, temperature=sampling.temperature, repeat_penalty=sampling.repeat_penalty,
        stop=STOP_STRINGS, stream=True,
    ):
        if piece["choices"][0]["text"]:
            last = time.perf_counter()
            first = first or last
            pieces += 1
    return started, first, last, pieces


async def client_round(client: ModelClient, round_number: int) -> tuple[float, float | None, float, int]:
    """One streamed reply through keel's model layer; every delta counts as a piece."""
    arrivals: list[float] = []
    started = time.perf_counter()
    await client.complete(messages(round_number), None, lambda _text: arrivals.append(time.perf_counter()))
    return started, arrivals[0] if arrivals else None, arrivals[-1] if arrivals else started, len(arrivals)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(path: Path, context: int) -> tuple[subprocess.Popen[bytes], str, float]:
    """llama-cpp-python's server on 127.0.0.1 with the same model and threads; returns it, its URL, start-up s."""
    decode_threads, batch_threads = thread_counts()
    port = free_port()
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", str(context), "--n_threads", str(decode_threads),
         "--n_threads_batch", str(batch_threads), "--model_alias", "embedded"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    import httpx

    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                return server, url, time.perf_counter() - started
        except httpx.HTTPError:
            pass
        if server.poll() is not None:
            raise RuntimeError("llama_cpp.server exited; is the [server] extra installed?")
        time.sleep(0.1)
    server.kill()
    raise RuntimeError("llama_cpp.server did not answer within 60 s")


def report(name: str, samples: Samples, floor: Samples) -> None:
    ttft, decode = statistics.median(samples.ttft), statistics.median(samples.decode)
    floor_ttft, floor_decode = statistics.median(floor.ttft), statistics.median(floor.decode)
    print(f"  {name:<8} decode {decode:6.1f} tok/s  ({decode / floor_decode:4.2f}x raw)   "
          f"first token {ttft * 1000:7.0f} ms  ({ttft / floor_ttft:4.2f}x raw)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--no-server", action="store_true", help="skip the llama.cpp server path")
    options = parser.parse_args()

    endpoint = prepare_embedded_model()
    engine = embedded_engine(endpoint)
    load_started = time.perf_counter()
    engine.load()
    print(f"model {endpoint.path.name}; in-process load {time.perf_counter() - load_started:.2f} s; "
          f"threads decode/prompt {thread_counts()}")
    keel = ModelClient(model=endpoint.model, retries=0, extra={"max_tokens": options.tokens})
    server = None
    if not options.no_server:
        server, url, startup = start_server(endpoint.path, endpoint.context_window)
        print(f"llama_cpp.server ready after {startup:.2f} s")
        over_http = ModelClient(model="openai/embedded", api_base=url, retries=0,
                                extra={"max_tokens": options.tokens, "temperature": 0})
    results = {"raw": Samples(), "keel": Samples(), "server": Samples()}
    try:
        # The first reply of a process pages the weights in and repacks them: not what is compared here.
        warm_up = time.perf_counter()
        raw_round(engine, -1, 8)
        if server is not None:
            await over_http.complete(messages(-1), None, lambda _text: None, max_tokens=8)
        print(f"warm-up (first replies, not counted) {time.perf_counter() - warm_up:.2f} s")
        paths = ["raw", "keel", "server"] if server is not None else ["raw", "keel"]
        for number in range(options.rounds):
            shift = number % len(paths)  # each path in each position: none always follows the busy server
            for path in paths[shift:] + paths[:shift]:
                if path == "raw":
                    results["raw"].add(*raw_round(engine, number, options.tokens))
                elif path == "keel":
                    engine.llama.reset()  # no prompt prefix left over from the raw path
                    results["keel"].add(*await client_round(keel, number))
                else:
                    results["server"].add(*await client_round(over_http, number))
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
    print(f"{options.rounds} rounds, {options.tokens} tokens each, medians:")
    report("raw", results["raw"], results["raw"])
    report("keel", results["keel"], results["raw"])
    if server is not None:
        report("server", results["server"], results["raw"])
    ratio = statistics.median(results["keel"].decode) / statistics.median(results["raw"].decode)
    print(f"keel/raw decode ratio: {ratio:.2f} (goal >= 0.95)")


if __name__ == "__main__":
    asyncio.run(main())
