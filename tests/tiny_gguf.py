"""A second GGUF model for tests, written with llama.cpp's `gguf` package: a few MB, llama architecture.

With the embedded model's tokenizer copied in, its weights make it a bigram machine: attention and MLP add
nothing, so each next token depends on the last one alone. After TRIGGER, the last token of its own chat
template's generation prompt, it says REPLY and ends; after anything else it ends at once. So a reply of
REPLY proves llama.cpp ran this file with this file's template.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

TRIGGER = (
    "<|fim_middle|>"  # a special token of the Qwen vocabulary no chat template of Qwen's ends with
)
REPLY_TOKENS = ("Hello", "Ġfrom", "Ġtiny")
REPLY = "Hello from tiny"
END = "<|im_end|>"
TEMPLATE = (
    "{%- for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n"
    "{% endfor %}{%- if add_generation_prompt %}" + TRIGGER + "{% endif %}"
)
WIDTH, LAYERS, HEADS, FFN, CONTEXT = 32, 1, 2, 64, 4096


def _strings(reader: gguf.GGUFReader, key: str) -> list[str]:
    field = reader.fields[key]
    return [bytes(field.parts[index]).decode("utf-8") for index in field.data]


def _scalar(reader: gguf.GGUFReader, key: str) -> int:
    return int(reader.fields[key].parts[-1][0])


def _header(writer: gguf.GGUFWriter, name: str, parameter_count: int | None) -> None:
    writer.add_name(name)
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(WIDTH)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(WIDTH // HEADS)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    if parameter_count is not None:
        writer.add_uint64("general.parameter_count", parameter_count)


def _blocks(writer: gguf.GGUFWriter) -> None:
    """Layers that add nothing to the residual stream (their output projections are zero)."""
    for layer in range(LAYERS):
        for part in ("attn_norm", "ffn_norm"):
            writer.add_tensor(f"blk.{layer}.{part}.weight", np.ones(WIDTH, dtype=np.float32))
        for part, shape in (
            ("attn_q", (WIDTH, WIDTH)),
            ("attn_k", (WIDTH, WIDTH)),
            ("attn_v", (WIDTH, WIDTH)),
            ("attn_output", (WIDTH, WIDTH)),
            ("ffn_gate", (FFN, WIDTH)),
            ("ffn_up", (FFN, WIDTH)),
            ("ffn_down", (WIDTH, FFN)),
        ):
            writer.add_tensor(f"blk.{layer}.{part}.weight", np.zeros(shape, dtype=np.float32))


def _finish(writer: gguf.GGUFWriter) -> None:
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


SMALL_VOCABULARY = ["a", "b", "c", END]
SMALL_PARAMETERS = len(SMALL_VOCABULARY) * WIDTH + LAYERS * (
    2 * WIDTH + 4 * WIDTH * WIDTH + 3 * FFN * WIDTH
)


def write_small_gguf(
    target: Path, template: str | None = TEMPLATE, parameter_count: int | None = None
) -> Path:
    """A GGUF with a made-up four-token vocabulary and SMALL_PARAMETERS weights: a header for keel to read
    (llama.cpp is never asked to run it), written in a moment."""
    writer = gguf.GGUFWriter(target, "llama")
    _header(writer, "keel small test model", parameter_count)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(SMALL_VOCABULARY)
    writer.add_token_types([1, 1, 1, 3])
    if template is not None:
        writer.add_chat_template(template)
    writer.add_tensor("token_embd.weight", np.zeros((len(SMALL_VOCABULARY), WIDTH), np.float32))
    _blocks(writer)
    _finish(writer)
    return target


def write_tiny_gguf(
    target: Path,
    tokenizer_from: Path,
    template: str | None = TEMPLATE,
    parameter_count: int | None = None,
) -> Path:
    """The tiny model at target, its tokenizer copied from the GGUF at tokenizer_from."""
    source = gguf.GGUFReader(tokenizer_from)
    tokens = _strings(source, "tokenizer.ggml.tokens")
    writer = gguf.GGUFWriter(target, "llama")
    _header(writer, "keel tiny test model", parameter_count)
    writer.add_tokenizer_model(_strings(source, "tokenizer.ggml.model")[0])
    writer.add_tokenizer_pre(_strings(source, "tokenizer.ggml.pre")[0])
    writer.add_token_list(tokens)
    writer.add_token_types([int(t) for t in source.fields["tokenizer.ggml.token_type"].contents()])
    writer.add_token_merges(_strings(source, "tokenizer.ggml.merges"))
    writer.add_eos_token_id(tokens.index(END))
    writer.add_bos_token_id(_scalar(source, "tokenizer.ggml.bos_token_id"))
    writer.add_pad_token_id(_scalar(source, "tokenizer.ggml.padding_token_id"))
    writer.add_add_bos_token(False)
    if template is not None:
        writer.add_chat_template(template)

    chain = [tokens.index(TRIGGER), *(tokens.index(token) for token in REPLY_TOKENS)]
    elsewhere = len(chain)
    embedding = np.zeros((len(tokens), WIDTH), dtype=np.float16)
    embedding[:, elsewhere] = 1  # every token but the chain's sits in one direction
    output = np.zeros((len(tokens), WIDTH), dtype=np.float16)
    for slot, token in enumerate(chain):
        embedding[token] = 0
        embedding[token, slot] = 1
        following = chain[slot + 1] if slot + 1 < len(chain) else tokens.index(END)
        output[following, slot] = 4
    output[tokens.index(END), elsewhere] = 4
    writer.add_tensor("token_embd.weight", embedding)
    writer.add_tensor("output_norm.weight", np.ones(WIDTH, dtype=np.float32))
    writer.add_tensor("output.weight", output)
    _blocks(writer)
    _finish(writer)
    return target
