#!/usr/bin/python3
"""ksmscan against an earlier version of itself, side by side in one run.

    python3 bench/against.py REV [ROUNDS]

Builds REV (a commit of this repository) in a temporary worktree, then
times the same commands with it and with ./ksmscan, interleaved, best of
ROUNDS (default 5), and prints each pair and the ratio now / REV. A change
of architecture must not make the tool slower: ratios near 1.0 (within the
noise of a shared machine, a few percent) say so. The inputs are made once
in $KSMSCAN_BENCH_DIR (default /tmp/ksmscan-bench/against): a 512 MiB image
(30% zero pages, 20% in duplicate groups, 50% unique) and three 128 MiB
snapshots of a memory that changes 5% between them.
Benchmarks are not tests: nothing here fails on a slow machine.
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOW = os.path.abspath(os.environ.get("KSMSCAN", os.path.join(HERE, "ksmscan")))
DIR = os.path.join(os.environ.get("KSMSCAN_BENCH_DIR", "/tmp/ksmscan-bench"), "against")
PAGE = 4096


def memory(path, pages, seed, base=None, change=0.0):
    """An image of @pages pages, or @base with @change of its pages new."""
    if os.path.exists(path):
        return path
    rnd = random.Random(seed)
    groups = [os.urandom(PAGE) for _ in range(max(1, pages // 40))]
    tmp = path + ".part"
    with open(tmp, "wb") as out:
        src = open(base, "rb") if base else None
        for _ in range(pages):
            old = src.read(PAGE) if src else None
            if old and rnd.random() >= change:
                out.write(old)
                continue
            x = rnd.random()
            out.write(bytes(PAGE) if x < 0.3 else rnd.choice(groups) if x < 0.5
                      else os.urandom(PAGE))
        if src:
            src.close()
    os.rename(tmp, path)
    return path


def build(rev, where):
    """./ksmscan of @rev, built in a worktree under @where."""
    tree = os.path.join(where, "tree")
    subprocess.run(["git", "-C", HERE, "worktree", "add", "--detach", "-q", tree, rev],
                   check=True)
    subprocess.run(["make", "-s", "-C", tree, "-j2", "ksmscan"], check=True,
                   stdout=subprocess.DEVNULL)
    return tree, os.path.join(tree, "ksmscan")


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: against.py REV [ROUNDS]")
    rev, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
    os.makedirs(DIR, exist_ok=True)
    big = memory(os.path.join(DIR, "512m.img"), 131072, 1)
    snaps = [memory(os.path.join(DIR, "s0.img"), 32768, 2)]
    for k in (1, 2):
        snaps.append(memory(os.path.join(DIR, "s%d.img" % k), 32768, 2 + k,
                            base=snaps[-1], change=0.05))
    cases = [
        ("static figures, 512 MiB", [big]),
        ("-r top,histogram, 512 MiB", [big, "-r", "top,histogram"]),
        ("-r pages --csv, 512 MiB", [big, "-r", "pages", "--csv"]),
        ("-l table, 512 MiB", ["-l", big]),
        ("--series, 3 x 128 MiB", ["--series"] + snaps + ["--hz=250"]),
        ("-r advise, 128 MiB", ["--series", snaps[0], "--hz=250", "-r", "advise",
                                "--target=90%@10m"]),
    ]
    where = tempfile.mkdtemp(prefix="ksmscan-against-")
    tree = None
    try:
        tree, then = build(rev, where)
        print("ksmscan now (%s) against %s, best of %d, interleaved" % (NOW, rev, rounds))
        print("%-28s %10s %10s %7s" % ("command", rev[:10] + " s", "now s", "ratio"))
        for name, args in cases:
            best = {then: float("inf"), NOW: float("inf")}
            for _ in range(rounds):
                for exe in (then, NOW):
                    best[exe] = min(best[exe], timed([exe] + args))
            print("%-28s %10.3f %10.3f %6.2fx" % (name, best[then], best[NOW],
                                                   best[NOW] / best[then]))
    finally:
        if tree:
            subprocess.run(["git", "-C", HERE, "worktree", "remove", "--force", tree])
        shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
