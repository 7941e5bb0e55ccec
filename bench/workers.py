"""Timing workers: each framework measured in a process of its own, rounds alternating
between them, the idle one stopped. Two OpenMP runtimes in one process (torch's and the
one Ember's native kernels load) spin against each other for milliseconds, so a benchmark
that imports both frameworks into one process measures that contention, not the
frameworks; and an idle worker's threads keep spinning into the other's turn (torch's
long after its last kernel), so the idle worker is stopped with SIGSTOP until its turn.

A benchmark script serves its programs with ``serve`` when run as ``script --worker LIB``
and drives one ``Worker`` per framework from its main process.
"""

from __future__ import annotations

import importlib
import os
import signal
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
        """Microseconds per call of the program ``fields`` over ``number`` calls: the
        process runs for that turn alone and is stopped (SIGSTOP) between its turns, so
        that its threads, spinning or not, take no core from the other worker's turn."""
        self._signal("SIGCONT")
        try:
            return float(self._ask("\t".join([*fields, str(number)])))
        finally:
            self._signal("SIGSTOP")

    def _signal(self, name: str) -> None:
        number = getattr(signal, name, None)  # (POSIX only: elsewhere both run on)
        if number is not None:
            os.kill(self.process.pid, number)

    def names(self) -> list[str]:
        self._signal("SIGCONT")
        return self._ask("names").strip().split("\t")

    def close(self) -> None:
        assert self.process.stdin is not None
        self._signal("SIGCONT")
        self.process.stdin.close()
        self.process.wait()


def compare(workers: Sequence[Worker], fields: Sequence[str], number: int,
            rounds: int) -> list[float]:
    """Each worker's median microseconds per call of ``fields``, over ``rounds`` rounds
    alternating between the workers (after a warm-up run of each)."""
    for w in workers:  # warm caches, lazy paths and the threads
        w.time(fields, max(1, number // 10))
    timed = [[w.time(fields, number) for w in workers] for _ in range(rounds)]
    return [statistics.median(r[i] for r in timed) for i in range(len(workers))]
