"""An Inspect AI eval that runs offline: no model is called.

Each sample carries ``p`` and ``seed`` in its metadata; epoch e of it passes
iff ``default_rng([seed, e]).random() < p``, so a fixed-epoch run and a
curtailed run of the same eval see the same outcome for every epoch they both
run. The solver writes "yes" or "no" as the completion, the scorer grades it
C or I.
"""

from __future__ import annotations

import numpy as np
from inspect_ai import Epochs, Task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, scorer
from inspect_ai.solver import solver


def outcome(p: float, seed: int, epoch: int) -> bool:
    """Epoch ``epoch`` (1-based, as Inspect counts) of a sample with rate p and seed."""
    return bool(np.random.default_rng([seed, epoch]).random() < p)


@solver
def seeded_agent():  # type: ignore[no-untyped-def]
    async def solve(state, generate):  # type: ignore[no-untyped-def]
        ok = outcome(state.metadata["p"], state.metadata["seed"], state.epoch)
        state.output = ModelOutput.from_content("none", "yes" if ok else "no")
        return state

    return solve


@scorer(metrics=[accuracy()])
def said_yes():  # type: ignore[no-untyped-def]
    async def score(state, target):  # type: ignore[no-untyped-def]
        return Score(value=CORRECT if state.output.completion == "yes" else INCORRECT)

    return score


def seeded_task(rates, *, epochs: int, seed: int = 0, reducer=None, metrics=None,
                early_stopping=None) -> Task:
    """A task of len(rates) samples ``s0, s1, ...`` with those rates."""
    samples = [Sample(input="go", id=f"s{i}", metadata={"p": float(p), "seed": seed * 1000 + i})
               for i, p in enumerate(rates)]
    return Task(dataset=samples, solver=seeded_agent(), scorer=said_yes(),
                epochs=Epochs(epochs, reducer) if reducer is not None else epochs,
                metrics=metrics, early_stopping=early_stopping)
