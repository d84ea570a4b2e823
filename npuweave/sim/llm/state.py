"""LLM requests and their KV cache: per-request arrays, paged KV blocks, admission, preemption.

A request has a prompt of ``prompt`` tokens and produces ``output`` tokens. Its first token
comes from the iteration that finishes its prefill; each later one from one decode step. The
KV cache is paged in blocks of ``block`` tokens (as vLLM does): a request holds
``ceil(kv_tokens / block)`` blocks; admission reserves the blocks of its whole prefill target,
and a decode step that starts a new block takes one more. When a step needs more blocks than
are free, the most recently admitted decoding request is preempted: by **recompute** (its
blocks are freed; later its prompt and the tokens it already produced are prefilled again) or
by **swap** (its KV goes to host memory over the host link and comes back before it resumes;
both copies stall the NPU, priced at ``swap_bw``).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from npuweave.errors import ConfigError
from npuweave.sim.llm.batch import DecodeBatch


class LLMState:
    """Every request of one run and the KV pool (the loop is the only writer).

    Attributes (arrays indexed by request id, in arrival order)
    ----------
    arrival_s, prompt, output : the workload.
    target : tokens the current prefill must reach (prompt, or prompt + produced after a
        recompute preemption).
    done : prefill tokens processed so far; ``kv`` tokens held in the KV cache.
    gen : tokens produced; ``first_s``, ``last_s``, ``finish_s`` token times (``nan`` before).
    preemptions : times preempted; ``swapped`` whether its KV waits in host memory.
    """

    def __init__(self, arrival_s: np.ndarray, prompt: np.ndarray, output: np.ndarray,
                 kv_blocks: int, block: int, max_seqs: int = 256) -> None:
        n = len(arrival_s)
        self.n, self.block, self.max_seqs = n, block, max_seqs
        self.arrival_s = np.asarray(arrival_s, dtype=np.float64)
        self.prompt = np.asarray(prompt, dtype=np.int64)
        self.output = np.asarray(output, dtype=np.int64)
        self.target = self.prompt.copy()
        self.done = np.zeros(n, np.int64)
        self.kv = np.zeros(n, np.int64)
        self.gen = np.zeros(n, np.int64)
        self.first_s = np.full(n, np.nan)
        self.last_s = np.full(n, np.nan)
        self.finish_s = np.full(n, np.nan)
        self.preemptions = np.zeros(n, np.int64)
        self.swapped = np.zeros(n, bool)
        self.max_gap = np.zeros(n)
        self.swap_in_tokens = 0
        self.total_blocks = self.free_blocks = kv_blocks
        self.next_arrival = 0
        self.waiting: deque[int] = deque()
        self.prefilling: list[int] = []   # admitted, prefill unfinished, admission order
        self.decoding = DecodeBatch(max_seqs)  # admitted, prefill finished, admission order
        self.finished = 0
        most = int((self.prompt + self.output).max()) if n else 0
        if self.blocks(most) > kv_blocks:
            raise ConfigError(f"the KV cache ({kv_blocks} blocks of {block} tokens) cannot hold "
                              f"one request of {most} tokens; use a larger NPU memory, a "
                              f"smaller KV format, or shorter --prompt-len/--output-len")

    def blocks(self, tokens: int) -> int:
        return -(-tokens // self.block)

    def arrive(self, now: float) -> None:
        """Move every request that has arrived by ``now`` to the waiting queue."""
        i, n, t = self.next_arrival, self.n, self.arrival_s
        while i < n and t[i] <= now:
            self.waiting.append(i)
            i += 1
        self.next_arrival = i

    def running(self) -> int:
        return len(self.prefilling) + len(self.decoding)

    def try_admit(self, r: int) -> bool:
        """Reserve the blocks of ``r``'s prefill (or swapped-out KV); False when they do not fit."""
        need = self.blocks(int(self.kv[r] if self.swapped[r] else self.target[r]))
        if need > self.free_blocks or self.running() >= self.max_seqs:
            return False
        self.free_blocks -= need
        if self.swapped[r]:
            self.swapped[r] = False
            self.swap_in_tokens += int(self.kv[r])
            self._add_decoding(r)
        elif self.done[r] >= self.target[r]:  # prefilled elsewhere (disaggregated serving)
            self.kv[r] = self.target[r]
            self._add_decoding(r)
        else:
            self.kv[r] = self.target[r]  # reserved up front; ``done`` tracks the real progress
            self.prefilling.append(r)
        return True

    def _add_decoding(self, r: int) -> None:
        self.decoding.add(r, int(self.kv[r]), int(self.gen[r]), int(self.output[r]),
                          float(self.last_s[r]), float(self.max_gap[r]))

    def _leave(self, row: tuple[int, int, int, float, float]) -> int:
        """Write a request's decode columns back to the per-request arrays."""
        r, kv, gen, last, gap = row
        self.kv[r], self.gen[r], self.last_s[r], self.max_gap[r] = kv, gen, last, gap
        return r

    def prefilled(self, r: int, now: float) -> float:
        """``r``'s prefill ended at ``now``: it emits a token and decodes from the next step.

        Returns the gap since its previous token (``nan`` for a first token).
        """
        self.prefilling.remove(r)
        gap = now - self.last_s[r] if self.gen[r] else np.nan
        if not self.gen[r]:
            self.first_s[r] = now
        self.gen[r] += 1
        self.last_s[r] = now
        if gap == gap:
            self.max_gap[r] = max(self.max_gap[r], gap)
        if self.gen[r] < self.output[r]:
            self._add_decoding(r)
        else:
            self.finish(r, now)
        return float(gap)

    def finish(self, r: int, now: float) -> None:
        self.finish_s[r] = now
        self.free_blocks += self.blocks(int(self.kv[r]))
        self.kv[r] = 0
        self.finished += 1

    def finish_decoded(self, done: np.ndarray, now: float) -> None:
        """Free the decoding requests where ``done`` (a mask over the batch) is set."""
        for row in self.decoding.drop(done):
            self.finish(self._leave(row), now)

    def preempt_last(self, swap: bool) -> int:
        """Preempt the most recently admitted decoding request; returns its id."""
        r = self._leave(self.decoding.pop())
        self.free_blocks += self.blocks(int(self.kv[r]))
        self.preemptions[r] += 1
        if swap:
            self.swapped[r] = True
        else:
            self.target[r] = self.prompt[r] + self.gen[r]
            self.done[r] = 0
            self.kv[r] = 0
        self.waiting.appendleft(r)
        return r

    def used_blocks(self) -> int:
        return self.total_blocks - self.free_blocks
