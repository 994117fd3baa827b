"""Stored embeddings for recall by meaning (docs/DECISIONS.md, record 24): one vector per
message, per embedding model, as a compact BLOB of float32, and how far the background work has
come for the model in use.

The vectors are written by the background embedder (agent/recall.py) and read by the hybrid
search (knowledge/search/meaning.py), which scans them exactly in this process. A vector is
stored with the model that made it: vectors of another model are never compared with a query,
and a change of model starts the work again from the first message.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.db import models

Vector = np.ndarray[Any, np.dtype[np.float32]]


class MessageVector(models.Model):
    """A message's embedding by one model (its text: the message's content as stored)."""

    # A message of a private chat never gets one; one made private later loses its vectors.

    message = models.OneToOneField("knowledge.Message", primary_key=True, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)  # "<base url> <model name>": a vector space
    vector = models.BinaryField()  # float32, little-endian, unit length

    class Meta:
        indexes = [models.Index(fields=["model", "message"], name="knowledge_vector_model")]


class EntryVector(models.Model):
    """A memory entry's embedding by one model, found by the entry's text (its sha256): entries
    live in MEMORY.md / USER.md, not in the database, and an edited entry is another text."""

    model = models.CharField(max_length=200)
    digest = models.CharField(max_length=64)  # sha256 of the entry's text
    vector = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["model", "digest"], name="unique_entry_vector")]


class RecallProgress(models.Model):
    """How far the embedder came for one model: every message with an id up to `high_water`
    was embedded or skipped (private, a tool's output, nothing to embed). `worker` / `lease_until`:
    the process embedding now, so several processes never embed the same batch."""

    model = models.CharField(max_length=200, primary_key=True)
    high_water = models.BigIntegerField(default=0)
    embedded = models.PositiveBigIntegerField(default=0)  # vectors written for this model
    worker = models.CharField(max_length=200, blank=True, default="")
    lease_until = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")  # the last failure, in the person's words; "" when fine
    updated_at = models.DateTimeField(auto_now=True)


def pack(vector: list[float] | Vector) -> bytes:
    """A vector as stored: float32, little-endian, scaled to unit length (so a dot product is
    the cosine)."""
    v = np.asarray(vector, dtype="<f4")
    norm = float(np.linalg.norm(v))
    return (v / norm if norm > 0 else v).astype("<f4").tobytes()


def unpack(blob: bytes | memoryview) -> Vector:
    return np.frombuffer(bytes(blob), dtype="<f4")
