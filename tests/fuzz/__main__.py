"""``python -m tests.fuzz --cases N --seed S``: run N random programs in Ember and in torch,
print the agreement rate, the self-check (torch against torch) and the disagreements
grouped by (op, class) with counts and one shrunk reproducer each."""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict

from .driver import (
    KNOWN_FAILURES,
    disagreement,
    reproducer,
    run_cases,
    select_entries,
    shrink_case,
    write_known,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ops", default="", help="comma-separated catalogue entries "
                        "(e.g. torch.add,Tensor.add_) to draw steps from; default: all")
    parser.add_argument("--groups", type=int, default=1000,
                        help="print at most this many groups (largest first)")
    parser.add_argument("--no-shrink", action="store_true",
                        help="print each group's first program as generated")
    parser.add_argument("--write-known", action="store_true",
                        help=f"rewrite {KNOWN_FAILURES.name} from this run's disagreements")
    args = parser.parse_args(argv)

    entries = select_entries([o for o in args.ops.split(",") if o])
    start = time.perf_counter()
    cases = run_cases(args.seed, args.cases, entries)
    elapsed = time.perf_counter() - start
    bad = [c for c in cases if c.disagreement is not None]
    self_bad = [c for c in cases if c.self_check is not None]
    n = len(cases)
    print(f"seed {args.seed}: {n} cases in {elapsed:.1f} s")
    print(f"agreement: {n - len(bad)}/{n} = {100 * (n - len(bad)) / max(n, 1):.2f}%")
    print(f"self-check (torch against torch): {n - len(self_bad)}/{n} agree"
          + ("" if not self_bad else "  FAILED on cases "
             + ", ".join(str(c.index) for c in self_bad[:20])))
    for c in self_bad[:3]:
        print(f"  case {c.index}: {c.self_check}")
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for c in bad:
        groups[c.disagreement.group].append(c)  # type: ignore[union-attr]
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    print(f"{len(bad)} disagreements in {len(groups)} groups")
    for (op, cls), members in ordered[:args.groups]:
        first = members[0]
        found = first.disagreement
        program = first.program if args.no_shrink else shrink_case(first.program, found)
        print(f"\n== {op} / {cls}: {len(members)} cases (e.g. case {first.index})")
        print(reproducer(program, disagreement(program) or found))
    if args.write_known:
        write_known(cases, args.seed)
        print(f"\nwrote {KNOWN_FAILURES}")
    return 1 if self_bad else 0


if __name__ == "__main__":
    sys.exit(main())
