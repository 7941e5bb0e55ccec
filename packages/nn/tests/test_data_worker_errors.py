"""DataLoader workers that fail: an exception in a worker (in __getitem__, worker_init_fn or an
iterable dataset's __iter__) raised again in the main process in torch's words, a worker that
dies (killed, or exiting) giving torch's RuntimeError, a batch that cannot be pickled, and
workers outliving their main process. Each case runs in a fresh interpreter with a time
limit, so that a regression that hangs fails instead."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest
import torch.utils.data as tdata


def run_isolated(body):
    """Run ``body`` in a fresh interpreter (forking its workers from there) with a time
    limit; it prints one JSON object, returned here."""
    script = "import json, os, signal, sys\nimport ember.core as E\nimport ember.utils.data as D\n"
    proc = subprocess.run([sys.executable, "-c", script + textwrap.dedent(body)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


FAILING = '''
class Failing(D.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            {action}
        return i


def report(error):
    cause = error.__cause__
    print(json.dumps({{"type": type(error).__name__, "message": str(error),
                      "cause": None if cause is None else str(cause)}}))


it = iter(D.DataLoader(Failing(), batch_size=2, num_workers=2, {options}))
try:
    for batch in it:
        pass
except Exception as error:
    report(error)
'''


def failing(action, options=""):
    return run_isolated(FAILING.format(action=action, options=options))


def test_an_exception_in_a_worker_is_raised_in_the_main_process():
    out = failing("raise ValueError(f'bad index {i}')")
    assert out["type"] == "ValueError"
    # indices 4 and 5 are the third batch: worker 0's second task
    head = "Caught ValueError in DataLoader worker process 0.\nOriginal Traceback (most recent call last):\n"
    assert out["message"].startswith(head)
    assert "in __getitem__" in out["message"]
    assert out["message"].rstrip().endswith("ValueError: bad index 5")


def test_torch_words_the_same_error_alike():
    class Failing(tdata.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            if i == 5:
                raise ValueError("bad index 5")
            return i

    with pytest.raises(ValueError) as expected:
        list(tdata.DataLoader(Failing(), batch_size=2, num_workers=2))
    theirs = str(expected.value)
    ours = failing("raise ValueError(f'bad index {i}')")["message"]
    assert ours.split("\n")[:2] == theirs.split("\n")[:2]
    assert ours.rstrip().split("\n")[-1] == theirs.rstrip().split("\n")[-1]


def test_the_loader_goes_on_after_a_worker_exception():
    out = run_isolated('''
class Failing(D.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 2:
            raise ValueError("two")
        return i


it = iter(D.DataLoader(Failing(), num_workers=2))
seen = []
while True:
    try:
        seen.append(next(it).item())
    except ValueError:
        seen.append("error")
    except StopIteration:
        break
print(json.dumps({"seen": seen}))
''')
    assert out["seen"] == [0, 1, "error", 3, 4, 5]


def test_a_key_error_shows_its_traceback_readably():
    out = failing("raise KeyError('missing')")
    assert out["type"] == "KeyError"
    assert out["message"].startswith("Caught KeyError in DataLoader worker process 0.\n")
    assert "KeyError: 'missing'" in out["message"]


def test_an_exception_that_takes_no_message_becomes_runtime_error():
    out = run_isolated('''
class TwoArgs(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


class Failing(D.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        raise TwoArgs(1, 2)


try:
    list(D.DataLoader(Failing(), num_workers=1))
except Exception as error:
    print(json.dumps({"type": type(error).__name__, "message": str(error)}))
''')
    assert out["type"] == "RuntimeError"
    assert out["message"].startswith("Caught TwoArgs in DataLoader worker process 0.")


def test_an_exception_in_worker_init_fn_is_raised():
    out = failing("pass", "worker_init_fn=lambda worker_id: 1 / 0")
    assert out["type"] == "ZeroDivisionError"
    assert out["message"].startswith("Caught ZeroDivisionError in DataLoader worker process 0.")
    assert "in <lambda>" in out["message"] and "division by zero" in out["message"]


def test_an_exception_in_an_iterable_datasets_iter_is_raised():
    out = run_isolated('''
class Broken(D.IterableDataset):
    def __iter__(self):
        info = D.get_worker_info()
        if info.id == 1:
            raise OSError("no shard for worker 1")
        return iter([10, 20])


try:
    list(D.DataLoader(Broken(), num_workers=2))
except Exception as error:
    print(json.dumps({"type": type(error).__name__, "message": str(error)}))
''')
    assert out["type"] == "OSError"
    assert out["message"].startswith("Caught OSError in DataLoader worker process 1.")
    assert "no shard for worker 1" in out["message"]


def test_a_batch_that_cannot_be_pickled_is_an_error_not_a_hang():
    out = failing("return lambda: i", "collate_fn=lambda batch: batch")
    assert out["message"].startswith(f"Caught {out['type']} in DataLoader worker process 0.")
    assert "pickle" in out["message"]


def test_a_killed_worker_gives_runtime_error():
    out = failing("os.kill(os.getpid(), signal.SIGKILL)")
    assert out["type"] == "RuntimeError"
    assert re.fullmatch(r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly",
                                      out["message"])
    assert "is killed by signal: Killed" in out["cause"]


def test_the_death_of_a_worker_is_worded_as_torchs():
    actions = ("os.kill(os.getpid(), signal.SIGKILL)", "os._exit(3)")
    ours = [failing(action) for action in actions]
    script = "import json, os, signal, sys\nimport torch.utils.data as D\n"
    theirs = []
    for action in actions:
        proc = subprocess.run([sys.executable, "-c",
                               script + FAILING.format(action=action, options="")],
                              capture_output=True, text=True, timeout=60)
        theirs.append(json.loads(proc.stdout.strip().splitlines()[-1]))

    def without_pids(out):
        return {key: re.sub(r"\d{2,}", "PID", value) for key, value in out.items()}

    for o, t in zip(ours, theirs):
        o, t = without_pids(o), without_pids(t)
        assert (o["type"], o["message"]) == (t["type"], t["message"])
        # torch words the cause when its SIGCHLD handler sees the exit first; when its
        # liveness check does, it leaves the cause empty (which one wins is a race)
        assert o["cause"] == t["cause"] or not t["cause"]


def test_a_worker_that_exits_gives_runtime_error():
    out = failing("os._exit(3)")
    assert out["type"] == "RuntimeError"
    assert "exited unexpectedly" in out["message"]
    assert "exited unexpectedly with exit code 3" in out["cause"]


def test_a_killed_worker_is_noticed_with_a_timeout_too():
    out = failing("os.kill(os.getpid(), signal.SIGKILL)", "timeout=30")
    assert out["type"] == "RuntimeError" and "exited unexpectedly" in out["message"]


def test_workers_exit_when_the_main_process_dies():
    out = run_isolated('''
import subprocess, time

main = subprocess.Popen([sys.executable, "-c", """
import os, sys, time
import ember.utils.data as D

it = iter(D.DataLoader(range(100), num_workers=2))
next(it)
print(" ".join(str(w.pid) for w in it._workers), flush=True)
time.sleep(60)
"""], stdout=subprocess.PIPE, text=True)
pids = [int(p) for p in main.stdout.readline().split()]
main.kill()
main.wait()
deadline = time.monotonic() + 10
alive = pids
while alive and time.monotonic() < deadline:
    time.sleep(0.1)
    alive = [p for p in alive if os.path.exists(f"/proc/{p}") and
             open(f"/proc/{p}/stat").read().split()[2] != "Z"]
print(json.dumps({"workers": len(pids), "alive": alive}))
''')
    assert out["workers"] == 2 and out["alive"] == []
