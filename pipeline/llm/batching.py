"""Continuous batching for the hf backend: requests from any number of threads are decoded together, one
forward pass per step for all of them, each under its own grammar matcher. A request joins at the next step
after it arrives and leaves when its output is complete, so a short request never waits for a long one.

The decoding itself is the sequential loop's, row by row: greedy under the grammar's mask, and where the
grammar allows one continuation only, its tokens go into the next forward pass (jump-forward). One request
alone is decoded exactly as before; several share each step's matrix work.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field

from pipeline.llm.slots import COLUMN_QUANTUM, GRAPH_MIN_WIDTH, SlotCache, Step, StepRunner, use_rows_attention


@dataclass
class Job:
    """One request in the batch: its prompt and grammar, then (once the backend has prepared it) the prompt's
    cached prefix and own tokens and the grammar's matcher (None: free text until a stop token), and what it
    has written so far."""
    system: str
    user: str
    grammar: str | None
    max_new_tokens: int
    stop: frozenset[int]
    jump_forward: bool = True
    prepared: bool = False
    prefix: str = ""
    own_ids: list[int] = field(default_factory=list)
    matcher: object | None = None
    prompt_tokens: int = 0
    new: list[int] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)
    length: int = 0
    stats: dict = field(default_factory=lambda: {"decoded_tokens": 0, "forced_tokens": 0, "forward_s": 0.0,
                                                 "mask_s": 0.0, "steps": 0, "rows_per_step": 0.0})
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def finish(self, error: BaseException | None = None) -> None:
        self.error = error
        steps = self.stats["steps"]
        if steps:
            self.stats["rows_per_step"] = round(self.stats["rows_per_step"] / steps, 2)
        self.done.set()


class BatchDecoder:
    """The forward passes of one backend: whichever thread drives (see `decode`) admits queued jobs into
    free rows, steps every row, and hands each finished job back to the thread that submitted it."""

    def __init__(self, backend, max_rows: int):
        import torch
        import xgrammar as xgr

        self.backend, self.max_rows = backend, max_rows
        model = backend.model
        on_cuda = str(backend.device).startswith("cuda")
        # On CUDA every row and a width most prompts fit are allocated at once: each reallocation means
        # capturing the graphs again.
        self.cache = SlotCache(model.config, model.dtype, backend.device, rows=max_rows if on_cuda else 1,
                               columns=4 * GRAPH_MIN_WIDTH if on_cuda else COLUMN_QUANTUM)
        if not on_cuda:
            use_rows_attention(model)
        self.runner = StepRunner(model, self.cache, packed=not on_cuda, graphs=on_cuda and backend.cuda_graphs)
        self.bitmask = xgr.allocate_token_bitmask(max_rows, backend.vocab_size)
        self._scratch = xgr.allocate_token_bitmask(1, backend.vocab_size)
        self._xgr, self._torch = xgr, torch
        self._queue: deque[Job] = deque()
        self._cond = threading.Condition()
        self.active: list[Job] = []
        self._driver = threading.Lock()  # held by the thread running the forward passes
        self._dedicated = False          # a thread is in `drive`

    def decode(self, job: Job) -> Job:
        """Queue a job and wait for it (any thread); raises what its decoding raised.

        Who runs the forward passes: the thread in `drive` when one is there, else the waiting threads
        themselves, one at a time. Not a thread of the decoder's own: OpenMP starts each parallel region
        far slower from a thread other than the process's first (measured: 50 against 10 microseconds a
        region, a 135M model's step 44 against 27 ms on 2 cores), so the forward passes belong on the main
        thread of whatever process runs them: a CLI's, a worker's, or a server's that calls `drive`."""
        with self._cond:
            self._queue.append(job)
            self._cond.notify_all()
        while not job.done.is_set():
            if not self._dedicated and self._driver.acquire(blocking=False):
                try:
                    while not job.done.is_set():
                        self._iterate_once()
                finally:
                    self._driver.release()
                    with self._cond:
                        self._cond.notify_all()  # another waiting thread takes over
                continue
            with self._cond:  # woken when jobs finish or the driving thread lets go
                while not job.done.is_set() and (self._dedicated or self._driver.locked()):
                    self._cond.wait()
        if job.error is not None:
            raise job.error
        return job

    def drive(self, stop: threading.Event) -> None:
        """Run every forward pass in this thread until `stop` is set (a server's main thread)."""
        with self._driver:
            self._dedicated = True
            try:
                while not stop.is_set():
                    with self._cond:
                        if not self._queue and not self.active:
                            self._cond.wait(timeout=0.5)  # woken by a job; the timeout only to look at `stop`
                            continue
                    self._iterate_once()
            finally:
                self._dedicated = False
                with self._cond:
                    self._cond.notify_all()  # waiting callers drive again

    def _iterate_once(self) -> None:
        with self._cond:
            room = self.max_rows - len(self.active)
            joining = [self._queue.popleft() for _ in range(min(room, len(self._queue)))]
        with self.backend._lock:  # the prompt cache and the model, shared with warm-up
            finished = self._iterate(joining)
        if finished:
            with self._cond:
                self._cond.notify_all()  # their threads are waiting

    def _iterate(self, joining: list[Job]) -> int:
        """Admit the joining jobs into rows, then one step of every row (the new rows' prompts with the old
        rows' next tokens); how many jobs finished."""
        failed = 0
        for job in joining:
            try:
                self._admit(job, row=len(self.active))
            except Exception as exc:  # noqa: BLE001 - the job's caller gets the error
                job.finish(exc)
            if job.done.is_set():
                failed += 1
            else:
                self.active.append(job)
        if self.active:
            self._advance(self.active)
        return self._release() + failed

    def _admit(self, job: Job, row: int) -> None:
        started = time.perf_counter()
        if not job.prepared:
            self.backend.prepare(job)
        self.cache.reserve(row + 1, self.cache.columns)
        if job.prefix:
            prefix_ids, state, computed = self.backend._prefix(job.prefix)
            job.length = self.cache.load(row, state)
            job.stats["prompt_tokens_computed"] = computed + len(job.own_ids)
        else:
            job.stats["prompt_tokens_computed"] = len(job.own_ids)
        job.pending = list(job.own_ids)
        job.prompt_tokens = job.length + len(job.pending)
        limit = getattr(self.backend.model.config, "max_position_embeddings", None)
        if limit and job.length + len(job.pending) + job.max_new_tokens > limit:
            raise ValueError(f"the prompt ({job.length + len(job.pending)} tokens) and {job.max_new_tokens} new "
                             f"tokens exceed the model's {limit} positions")
        job.stats["admit_s"] = time.perf_counter() - started
        if job.max_new_tokens <= 0 or not job.pending:
            job.finish()

    def _advance(self, jobs: list[Job]) -> None:
        torch, xgr = self._torch, self._xgr
        step = Step([job.pending for job in jobs], [job.length for job in jobs],
                    longest=max(job.length + len(job.pending) for job in self.active))
        t0 = time.perf_counter()
        try:
            logits = self.runner.run(step)
        except Exception as exc:  # noqa: BLE001 - every job of the failed step gets the error
            for job in jobs:
                job.finish(exc)
            return
        t1 = time.perf_counter()
        for i, job in enumerate(jobs):
            job.length += len(job.pending)
            if job.matcher is not None:
                job.matcher.fill_next_token_bitmask(self.bitmask, i)
            else:
                self.bitmask[i].fill_(-1)  # every token allowed
        xgr.apply_token_bitmask_inplace(logits, self.bitmask[:len(jobs)].to(logits.device, non_blocking=True))
        tokens = torch.argmax(logits, dim=-1).tolist()  # the step's one wait for the device
        mask_s = time.perf_counter() - t1
        for job, token in zip(jobs, tokens):
            job.stats["forward_s"] += t1 - t0
            job.stats["mask_s"] += mask_s
            job.stats["steps"] += 1
            job.stats["rows_per_step"] += len(jobs)
            self._take(job, token)

    def _take(self, job: Job, token: int) -> None:
        """The sequential loop's bookkeeping for one chosen token."""
        job.stats["decoded_tokens"] += 1
        matcher = job.matcher
        if matcher is not None:
            if not matcher.accept_token(token) or matcher.is_terminated():  # rejected cannot happen under a mask
                job.finish()
                return
        elif token in job.stop:
            job.finish()
            return
        job.new.append(token)
        run = (self.backend._forced_run(matcher, job.max_new_tokens - len(job.new), job.jump_forward)
               if matcher is not None else [])
        job.stats["forced_tokens"] += len(run)
        job.new.extend(run)
        job.pending = [token, *run]
        while (job.jump_forward and matcher is not None and len(job.new) < job.max_new_tokens
               and not matcher.is_terminated()):
            # Jump-forward by token: where the grammar allows one token only, the model's choice is known
            # without its logits; take it now, and where it is the stop token, the output is complete.
            only = self._only_token(matcher)
            if only is None or not matcher.accept_token(only):
                break
            if matcher.is_terminated():
                break
            job.new.append(only)
            job.pending.append(only)
            job.stats["forced_tokens"] += 1
        if len(job.new) >= job.max_new_tokens or (matcher is not None and matcher.is_terminated()):
            job.finish()

    def _only_token(self, matcher) -> int | None:
        """The one token the matcher allows next, or None where it allows more."""
        matcher.fill_next_token_bitmask(self._scratch, 0)
        words = self._scratch[0].nonzero()
        if len(words) != 1:
            return None
        index = int(words[0])
        word = int(self._scratch[0, index]) & 0xFFFFFFFF
        return index * 32 + word.bit_length() - 1 if word & (word - 1) == 0 else None

    def _release(self) -> int:
        """Drop finished rows; the last row moves into each freed place so the rows in use stay [0, n)."""
        released = 0
        for row in range(len(self.active) - 1, -1, -1):
            if not self.active[row].done.is_set():
                continue
            last = len(self.active) - 1
            if row != last:
                self.cache.move(last, row, self.active[last].length)
                self.active[row] = self.active[last]
            self.active.pop()
            released += 1
        return released
