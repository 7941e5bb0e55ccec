"""Timing workers: each framework measured in a process of its own, rounds alternating
between them. Two OpenMP runtimes in one process (torch's and the one Ember's native
kernels load) spin against each other for milliseconds, so a benchmark that imports both
frameworks into one process measures that contention, not the frameworks.

A benchmark script serves its programs with ``serve`` when run as ``script --worker LIB``
and drives one ``Worker`` per framework from its main process.
"""

from __future__ import annotations

import importlib
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

Program = Callable[[], object]


def serve(lib_name: str, names: Callable[[Any], list[str]],
          program: Callable[[Any, list[str]], Program]) -> None:
    """Answer requests on stdin for one framework: ``names`` (the programs' names, tab
    separated), or a program's fields and a call count (tab separated), answered with the
    microseconds per call. ``program(lib, fields)`` builds a program once per fields."""
    lib = importlib.import_module(lib_name)
    if lib_name == "torch":
        lib.set_num_threads(int(os.environ["BENCH_THREADS"]))
    programs: dict[tuple[str, ...], Program] = {}
    for line in sys.stdin:
        if line.strip() == "names":
            print("\t".join(names(lib)), flush=True)
            continue
        *fields, number = line.rstrip("\n").split("\t")
        key = tuple(fields)
        if key not in programs:
            programs[key] = program(lib, fields)
        fn = programs[key]
        start = time.perf_counter()
        for _ in range(int(number)):
            fn()
        print((time.perf_counter() - start) / int(number) * 1e6, flush=True)


class Worker:
    """``script --worker lib_name`` in a process of its own (torch at ``threads`` intra-op
    threads: Ember's count)."""

    def __init__(self, script: str, lib_name: str, threads: int):
        env = {**os.environ, "BENCH_THREADS": str(threads)}
        self.process = subprocess.Popen([sys.executable, script, "--worker", lib_name],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env=env)

    def _ask(self, line: str) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline()

    def time(self, fields: Sequence[str], number: int) -> float:
        """Microseconds per call of the program ``fields`` over ``number`` calls."""
        return float(self._ask("\t".join([*fields, str(number)])))

    def names(self) -> list[str]:
        return self._ask("names").strip().split("\t")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


# A worker's OpenMP threads spin on for a while after its turn (GNU OpenMP's default: a few
# milliseconds) before they sleep: the next turn waits this long, so that on a machine with
# few cores neither framework is timed against the other's spinning threads.
SETTLE_S = 0.02


def _settled(w: Worker, fields: Sequence[str], number: int) -> float:
    us = w.time(fields, number)
    time.sleep(SETTLE_S)
    return us


def compare(workers: Sequence[Worker], fields: Sequence[str], number: int,
            rounds: int) -> list[float]:
    """Each worker's median microseconds per call of ``fields``, over ``rounds`` rounds
    alternating between the workers (after a warm-up run of each), each turn starting when
    the last one's threads have gone to sleep."""
    for w in workers:  # warm caches, lazy paths and the threads
        _settled(w, fields, max(1, number // 10))
    timed = [[_settled(w, fields, number) for w in workers] for _ in range(rounds)]
    return [statistics.median(r[i] for r in timed) for i in range(len(workers))]
