"""RNN sequence-length profiles for PREMA's workloads: the role of PREMA's Figure 9.

PREMA predicts an RNN's time-unrolled output length from its (known) input length with a
profiled lookup table that returns the geometric mean of the output lengths observed for that
input length; the *actual* length of a simulated task is drawn among those observed outputs.
The seed gives no numeric profile, so ours is synthetic, built deterministically from a stated
distribution (``docs/PREMA.md``, "RNN lengths"):

* 1500 profiled samples per model (the seed profiles 1500 sentences and 1500 utterances),
  input lengths uniform over ``inputs`` (``1..max_in``; ASR counts 80 ms segments of eight
  10 ms frames, the listener's output steps after its 8x pyramid).
* Output length ``max(1, round(ratio * in_len * exp(sigma * z)))``, ``z`` standard normal:
  a narrow inter-quartile band with outliers, as Figure 9 shows. ``ratio`` comes from the
  seed's own example (one 4-word English sentence gives 3/7/4 words in Korean/Chinese/Spanish;
  English-German is one-to-one in Fig. 8(c)); speech: one character per 80 ms segment
  (12.5 per second, the zoo's default). Sentiment analysis is linear (Fig. 8(b)): output =
  input, no noise.
* ``max_in`` is calibrated so that the nominal task (``out = ratio * in``) at batch 1 on the
  ``prema`` NPU stays within 45 ms, the top of the seed's stated span of task lengths
  ("0.5 to 45 msecs among the eight DNNs", section IV-D). ``tests/prema/test_predictor.py``
  checks the calibration against the cost model on both sides of each bound.

Examples
--------
>>> prof = profile("rnn-mt1")
>>> prof.expected(10)  # geometric mean of the profiled outputs for 10 input words
10
>>> import numpy as np
>>> prof.draw(np.random.default_rng(0))[0] in prof.inputs
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from npuweave.errors import unknown_name

PROFILE_SAMPLES = 1500
"""Profiled samples per model (the seed's 1500 sentences / utterances)."""

PROFILE_SEED = 20200222
"""Fixed seed of the synthetic profile: the table is data, identical on every run."""

SIGMA = 0.25
"""Log-normal spread of output around ``ratio * input`` (stated assumption, not from the seed)."""

_ENTRIES: dict[str, tuple[str, str, float, float, int, int]] = {
    # name: (zoo model, what, ratio out/in, sigma, max_in, step)
    "rnn-sa": ("lstm-sentiment", "sentiment analysis, tokens (linear)", 1.0, 0.0, 91, 1),
    "rnn-mt1": ("lstm-translation", "translation en->de, words", 1.0, SIGMA, 14, 1),
    "rnn-mt2": ("lstm-translation", "translation en->ko, words", 0.75, SIGMA, 16, 1),
    "rnn-asr": ("lstm-speech", "speech recognition, 80 ms segments (8 frames) -> characters",
                1.0, SIGMA, 47, 1),
}


@dataclass(frozen=True, slots=True)
class LengthProfile:
    """A profiled RNN: observed output lengths for each profiled input length.

    Attributes
    ----------
    name : PREMA task name (``rnn-sa``, ``rnn-mt1``, ``rnn-mt2``, ``rnn-asr``).
    model : zoo model it runs.
    inputs : profiled input lengths, ascending.
    outputs : for each input length, the sorted observed output lengths.
    linear : output length equals input length (nothing to predict).
    """

    name: str
    model: str
    inputs: tuple[int, ...]
    outputs: tuple[tuple[int, ...], ...]
    linear: bool = False

    def observed(self, in_len: int) -> tuple[int, ...]:
        """Output lengths seen for ``in_len`` (``ConfigError`` if it was never profiled)."""
        try:
            return self.outputs[self.inputs.index(in_len)]
        except ValueError:
            from npuweave.errors import ConfigError
            lo, hi = self.inputs[0], self.inputs[-1]
            step = self.inputs[1] - self.inputs[0] if len(self.inputs) > 1 else 1
            raise ConfigError(f"{self.name}: input length {in_len} was not profiled; use "
                              f"{lo}..{hi} in steps of {step}") from None

    def expected(self, in_len: int) -> int:
        """The lookup table: geometric mean of the observed outputs, rounded (at least 1)."""
        seen = np.asarray(self.observed(in_len), dtype=float)
        return max(1, int(round(float(np.exp(np.log(seen).mean())))))

    def draw(self, rng: np.random.Generator) -> tuple[int, int]:
        """``(input length, actual output length)``: a profiled input uniformly, then one of
        its observed outputs uniformly (PREMA section VI)."""
        i = int(rng.integers(len(self.inputs)))
        seen = self.outputs[i]
        return self.inputs[i], int(seen[int(rng.integers(len(seen)))])

    def zoo_params(self, in_len: int, out_len: int) -> dict[str, int]:
        """Build parameters of the zoo model for these lengths."""
        if self.model == "lstm-sentiment":
            return {"seq_len": in_len}
        if self.model == "lstm-speech":  # input counted in 80 ms segments of 8 frames
            return {"seq_len": 8 * in_len, "out_len": out_len}
        return {"seq_len": in_len, "out_len": out_len}


MIX: dict[str, str] = {
    "cnn-an": "alexnet", "cnn-gn": "googlenet", "cnn-vn": "vgg16", "cnn-mn": "mobilenetv1",
    "rnn-sa": "lstm-sentiment", "rnn-mt1": "lstm-translation", "rnn-mt2": "lstm-translation",
    "rnn-asr": "lstm-speech",
}
"""PREMA's eight task types (section III) and the zoo model each runs."""


def task_model(name: str) -> str:
    """The zoo model of a PREMA task name (``UnknownNameError`` otherwise).

    Examples
    --------
    >>> task_model("RNN-MT2")
    'lstm-translation'
    """
    key = name.lower()
    if key not in MIX:
        raise unknown_name("PREMA task", name, list(MIX))
    return MIX[key]


def names() -> list[str]:
    """PREMA's RNN task names that have a length profile."""
    return list(_ENTRIES)


def describe(name: str) -> str:
    """One line: the zoo model and what the lengths count."""
    model, what, *_ = _ENTRIES[_check(name)]
    return f"{model}: {what}"


def _check(name: str) -> str:
    key = name.lower()
    if key not in _ENTRIES:
        raise unknown_name("RNN length profile", name, list(_ENTRIES))
    return key


@cache
def profile(name: str) -> LengthProfile:
    """The (deterministic) length profile of a PREMA RNN task.

    Examples
    --------
    >>> profile("rnn-sa").expected(5)
    5
    """
    key = _check(name)
    model, _, ratio, sigma, max_in, step = _ENTRIES[key]
    inputs = tuple(range(step, max_in + 1, step))  # step is 1 for every profile today
    rng = np.random.default_rng([PROFILE_SEED, list(_ENTRIES).index(key)])
    picks = rng.integers(len(inputs), size=PROFILE_SAMPLES)
    noise = np.exp(sigma * rng.standard_normal(PROFILE_SAMPLES))
    outs: list[list[int]] = [[] for _ in inputs]
    for i, f in zip(picks.tolist(), noise.tolist()):
        outs[i].append(max(1, int(round(ratio * inputs[i] * f))))
    for i, seen in enumerate(outs):  # every profiled input has at least its nominal output
        if not seen:
            seen.append(max(1, int(round(ratio * inputs[i]))))
    return LengthProfile(key, model, inputs, tuple(tuple(sorted(o)) for o in outs),
                         linear=sigma == 0.0)


def nominal(name: str, in_len: int) -> int:
    """``ratio * in_len`` rounded: the noise-free output length used for the calibration."""
    _, _, ratio, *_ = _ENTRIES[_check(name)]
    return max(1, int(round(ratio * in_len)))


def max_input(name: str) -> int:
    """The calibrated largest profiled input length."""
    return _ENTRIES[_check(name)][4]
