#!/usr/bin/python3
"""make bench: the replay of a series at host scale, whole and sampled.

A generated series of page digests (tests/series_gen.h, no page written: a
quarter zero pages, 35% of contents by a Zipf law, 40% unique, 5% of the
pages rewritten between snapshots) is replayed by build/bench/sample_bench
(one process a replay: its maximum RSS is its own), whole and with
--sample's estimate at 1/16 to 1/256 (three seeds of the sample each). Per
replay: seconds to make the series and to replay it, the maximum RSS, the
bytes the replay holds a page of the memory, and the sampled last
pages_shared and pages_sharing against the whole replay's: their error and
whether it is within the bound the sample states. Then memory against
snapshots: the whole replay of 2 and 8 snapshots, held in full and as
deltas (each snapshot's pages against the one before), and the maximum
RSS's growth a snapshot in bytes a page.
By default 1 GiB x 8 snapshots (a few minutes at most); with
KSMSCAN_BENCH_FULL=1, 16 GiB x 8 whole and sampled, then 256 GiB x 8 at
1/64 (no whole replay to compare: its time and memory).
Benchmarks are not tests.
"""
import os, subprocess, sys

BENCH = os.environ.get("KSMSCAN_SAMPLE_BENCH", "build/bench/sample_bench")
GIB = 262144  # pages


def run(pages, snaps, n, seed, delta=0):
    out = subprocess.run([BENCH, str(pages), str(snaps), str(n), str(seed), str(delta)],
                         capture_output=True, text=True, check=True).stdout
    return {k: v for k, v in (w.split("=") for w in out.split())}


def row(label, r, exact=None):
    line = "%-16s %7s s %7s s %8.0f MB %7s B/page" % (
        label, r["make_s"], r["replay_s"], int(r["maxrss_kb"]) / 1024, r["bytes_per_page"])
    inside = []
    if exact:
        for k in ("shared", "sharing"):
            err = int(r[k]) - int(exact[k])
            bound = float(r[k + "_bound"])
            ok = abs(err) <= bound
            inside.append(ok)
            line += "  %s %+.2f%% (bound %.2f%%)%s" % (
                k, 100.0 * err / max(1, int(exact[k])),
                100.0 * bound / max(1, int(exact[k])), "" if ok else " OUTSIDE")
    print(line, flush=True)
    return inside


def sizes(gib, snaps, samples, seeds=(1, 2, 3), whole=True):
    pages = gib * GIB
    print("\n%d GiB x %d snapshots (%d pages a snapshot)" % (gib, snaps, pages))
    print("%-16s %9s %9s %11s %13s" % ("replay", "make", "replay", "max RSS", "held"))
    exact = run(pages, snaps, 0, 0) if whole else None
    if exact:
        row("whole", exact)
    inside = []
    for n in samples:
        for seed in seeds:
            inside += row("1/%d seed %d" % (n, seed), run(pages, snaps, n, seed), exact)
    if inside:
        print("within the stated bound: %d of %d figures" % (sum(inside), len(inside)))


def growth(gib, few=2, many=8):
    """Memory against snapshots: the whole replay of @few and @many
    snapshots, each held in full and as deltas (its pages against the one
    before); the maximum RSS's growth per snapshot, in bytes a page, and
    whether both give the same last figures."""
    pages = gib * GIB
    print("\n%d GiB, %d and %d snapshots: memory a snapshot more" % (gib, few, many))
    for delta, name in ((0, "full"), (1, "delta")):
        a, b = run(pages, few, 0, 0, delta), run(pages, many, 0, 0, delta)
        per = (int(b["maxrss_kb"]) - int(a["maxrss_kb"])) * 1024.0 / (many - few) / pages
        print("%-6s max RSS %5.0f / %5.0f MB, %5.2f B/page a snapshot, %s B/page held at %d"
              % (name, int(a["maxrss_kb"]) / 1024, int(b["maxrss_kb"]) / 1024, per,
                 b["bytes_per_page"], many), flush=True)
        if delta:
            same = all(b[k] == full[k] for k in ("scans", "shared", "sharing"))
            print("deltas give the full snapshots' figures: %s" % ("yes" if same else "NO"))
        full = b


def main():
    if not os.path.exists(BENCH):
        sys.exit("%s: missing (make build/bench/sample_bench)" % BENCH)
    print("the replay of generated series, whole and sampled (--sample=1/N)")
    sizes(1, 8, (16, 64, 256))
    growth(1)
    if os.environ.get("KSMSCAN_BENCH_FULL"):
        growth(4)
        sizes(16, 8, (16, 64), seeds=(1,))
        sizes(256, 8, (64,), seeds=(1,), whole=False)


if __name__ == "__main__":
    main()
