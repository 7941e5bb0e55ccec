"""libstdc++'s ``std::sort`` (introsort), step for step, for the CPU kernels of torch that
sort with a comparison NaN breaks: ``unique(dim=...)`` sorts its rows with a lexicographic
``<`` under which a NaN is neither less nor greater than anything, which is no strict weak
order, so which row lands where is the algorithm's doing, and so is the order of equal
rows (``std::sort`` is not stable), which shows where they differ in the sign of a zero.

Only such inputs come here (a stable numpy sort gives every other one the same order);
the comparisons run in Python, one per call of ``less``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Less = Callable[[Any, Any], bool]

_THRESHOLD = 16  # libstdc++'s _S_threshold: shorter runs are left to the insertion sort


def std_sort(items: list[Any], less: Less) -> list[Any]:
    """``items`` sorted in place as ``std::sort(items.begin(), items.end(), less)`` does."""
    n = len(items)
    if n > 1:
        _introsort_loop(items, 0, n, 2 * (n.bit_length() - 1), less)
        _final_insertion_sort(items, n, less)
    return items


def _introsort_loop(v: list[Any], first: int, last: int, depth: int, less: Less) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_sort(v, first, last, less)
            return
        depth -= 1
        cut = _partition_around_median(v, first, last, less)
        _introsort_loop(v, cut, last, depth, less)
        last = cut


def _partition_around_median(v: list[Any], first: int, last: int, less: Less) -> int:
    a, b, c = first + 1, first + (last - first) // 2, last - 1
    if less(v[a], v[b]):
        median = b if less(v[b], v[c]) else c if less(v[a], v[c]) else a
    else:
        median = a if less(v[a], v[c]) else c if less(v[b], v[c]) else b
    v[first], v[median] = v[median], v[first]
    pivot = v[first]
    lo, hi = first + 1, last
    while True:  # "unguarded": the scans stop at the array's ends here, where C++ reads on
        while lo < last and less(v[lo], pivot):
            lo += 1
        hi -= 1
        while hi > first and less(pivot, v[hi]):
            hi -= 1
        if lo >= hi:
            return lo
        v[lo], v[hi] = v[hi], v[lo]
        lo += 1


def _final_insertion_sort(v: list[Any], n: int, less: Less) -> None:
    head = min(n, _THRESHOLD)
    for i in range(1, head):
        value = v[i]
        if less(value, v[0]):
            v[1:i + 1] = v[0:i]
            v[0] = value
        else:
            _linear_insert(v, i, less)
    for i in range(head, n):
        _linear_insert(v, i, less)


def _linear_insert(v: list[Any], i: int, less: Less) -> None:
    value = v[i]
    while i > 0 and less(value, v[i - 1]):
        v[i] = v[i - 1]
        i -= 1
    v[i] = value


def _heap_sort(v: list[Any], first: int, last: int, less: Less) -> None:
    """``std::partial_sort(first, last, last)``: make_heap, then sort_heap."""
    n = last - first
    for parent in range((n - 2) // 2, -1, -1):
        _adjust_heap(v, first, parent, n, v[first + parent], less)
    while n > 1:
        n -= 1
        value = v[first + n]
        v[first + n] = v[first]
        _adjust_heap(v, first, 0, n, value, less)


def _adjust_heap(v: list[Any], first: int, hole: int, n: int, value: Any, less: Less) -> None:
    top = child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if less(v[first + child], v[first + child - 1]):
            child -= 1
        v[first + hole] = v[first + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        v[first + hole] = v[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(v[first + parent], value):
        v[first + hole] = v[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    v[first + hole] = value
