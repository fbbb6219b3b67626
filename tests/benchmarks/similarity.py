"""Benchmark: the class report's similarity section on a class of 40 and of 400.

    .venv/bin/python tests/benchmarks/similarity.py [--students 40 400] [--copies 0.1] [--check]

For each size, writes a class (tests/similarity_corpus.py `write_class`: each student takes, for
every name of the assignment, one of the corpus's independent implementations of it (base.py's, the
answer key's, a valid patch's), adds an argument check now and then, and disguises it, a quarter as
notebooks, the rest as .py modules; a share `--copies` of them is copied by another student and
disguised again), reads it as grading does (`read_submission`), and
times what the report writer does after grading: `find_similar` (part by part, copydetect's
fingerprints and comparisons) and the section's HTML. Prints the seconds and the pairs found. With
3 to 13 implementations of each name to choose from, students often share most of a part, so far
more pairs are alike than in a real class: the costly case. `--check` also compares every pair and part with copydetect directly (slow: for
the smaller classes) and fails if a pair that reaches the threshold is not listed or a listed score
is not the one copydetect's compare_files gives.
Not collected by pytest.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import similarity_corpus  # noqa: E402
from autograder.model.submission import read_submission  # noqa: E402
from autograder.reports import similarity  # noqa: E402


def run(students: int, copies: float, check: bool) -> None:
    with tempfile.TemporaryDirectory() as folder:
        paths = similarity_corpus.write_class(Path(folder), students, seed=students, copies=round(students * copies))
        cells = {p.stem: read_submission(p, p.stem).cells for p in paths}
        similarity.fingerprint("x = 1\n")  # the libraries imported, the release's boilerplate computed: once a run
        start = time.perf_counter()
        found = similarity.find_similar(cells)
        middle = time.perf_counter()
        page = found.html()
        end = time.perf_counter()
        copied = sum(1 for p in found.pairs if p.a.startswith("copy") or p.b.startswith("copy"))
        print(f"{students} submissions: {end - start:.2f} s ({middle - start:.2f} s finding, {end - middle:.2f} s the "
              f"HTML, {len(page) / 1024:.0f} KiB); {found.found} pairs alike, {len(found.pairs)} listed, "
              f"{copied} of them with a copy", flush=True)
        if check:
            brute(cells, found)


def brute(cells, found) -> None:
    """Every pair and part compared with copydetect's compare_files, piece against piece: the pairs at
    the threshold must all be listed, with the same numbers."""
    import copy

    from copydetect import compare_files

    def whole(pieces):  # one fingerprint holding every piece's
        union = copy.copy(pieces[0])
        union.hashes = set().union(*(f.hashes for f in pieces))
        union.hash_idx = {h: ps for f in pieces for h, ps in f.hash_idx.items()}
        union.token_coverage = max(1, sum(f.token_coverage for f in pieces))
        return union

    texts = {sid: similarity.part_code(c) for sid, c in sorted(cells.items())}
    prints = {sid: {p: [similarity.fingerprint(t) for t in pieces] for p, pieces in parts.items()}
              for sid, parts in texts.items()}
    listed = {(p.a, p.b): p for p in found.pairs}
    missed, wrong = [], []
    for a, b in itertools.combinations(sorted(prints), 2):
        for part in set(prints[a]) & set(prints[b]):
            A, B = prints[a][part], prints[b][part]
            matched = (sum(compare_files(f, whole(B))[0] for f in A), sum(compare_files(f, whole(A))[0] for f in B))
            match = similarity.PartMatch(part, matched, (sum(f.token_coverage for f in A),
                                                         sum(f.token_coverage for f in B)))
            if (a, b) in listed and part in listed[(a, b)].parts:
                if listed[(a, b)].parts[part].matched != match.matched:
                    wrong.append((a, b, part, listed[(a, b)].parts[part].matched, match.matched))
            elif match.alike(found.threshold) and len(listed) < similarity.LISTED_PAIRS:
                missed.append((a, b, part, round(float(match.score), 3)))
    print(f"  compare_files on every pair: {len(missed)} alike pair(s) not listed {missed[:5]}, {len(wrong)} "
          f"number(s) not copydetect's {wrong[:3]}")
    if missed or wrong:
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, nargs="+", default=[40, 400])
    parser.add_argument("--copies", type=float, default=0.1, help="share of the class that copied (default 0.1)")
    parser.add_argument("--check", action="store_true", help="also compare every pair directly (slow)")
    args = parser.parse_args()
    for n in args.students:
        run(n, args.copies, args.check)


if __name__ == "__main__":
    main()
