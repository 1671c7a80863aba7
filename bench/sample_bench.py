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
Then real memory, with ksmscan (--series, whole and --sample=1/16 to
1/256): the QEMU guest of the fixtures (tests/fixtures/guest-b.elf.zst,
twice), and a redis-server's 4 snapshots by gcore(1), 1 s apart, as it
is written (half its values of 64 common ones, half random); its
figures' error against the whole replay and the bound the sample states.
By default 1 GiB x 8 snapshots and 20000 keys of redis (a few minutes at
most); with KSMSCAN_BENCH_FULL=1, 16 GiB x 8 whole and sampled, then 256
GiB x 8 at 1/64 (no whole replay: too big here; its figures against a
prediction of it, the most its last snapshot's contents would share,
exact from the generator, times the whole replay's share of that at 16
GiB), and 100000 keys of redis.
Benchmarks are not tests.
"""
import os, random, re, shutil, socket, subprocess, sys, tempfile, time

BENCH = os.environ.get("KSMSCAN_SAMPLE_BENCH", "build/bench/sample_bench")
KSMSCAN = os.environ.get("KSMSCAN", "./ksmscan")
HERE = os.path.dirname(os.path.abspath(__file__))
GIB = 262144  # pages


def run(pages, snaps, n, seed, delta=1):
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


def sizes(gib, snaps, samples, seeds=(1, 2, 3), whole=True, like=None):
    """Replays of @gib GiB x @snaps, whole (@whole) and sampled. Without the
    whole replay, the sample is compared with a prediction of it: the most
    the last snapshot's contents would share (exact, from the generator)
    times the whole replay's share of that at the size @like (its return).
    Return: the whole replay's figures."""
    pages = gib * GIB
    print("\n%d GiB x %d snapshots (%d pages a snapshot)" % (gib, snaps, pages))
    print("%-16s %9s %9s %11s %13s" % ("replay", "make", "replay", "max RSS", "held"))
    exact = run(pages, snaps, 0, 0) if whole else None
    if exact:
        row("whole", exact)
    inside = []
    for n in samples:
        for seed in seeds:
            r = run(pages, snaps, n, seed)
            if not exact and like:
                exact = {k: int(round(int(r["most_" + k]) * int(like[k]) /
                                      int(like["most_" + k]))) for k in ("shared", "sharing")}
                print("%-16s predicted by %d GiB's whole replay: shared %d, sharing %d"
                      % ("whole", like["gib"], exact["shared"], exact["sharing"]))
            inside += row("1/%d seed %d" % (n, seed), r, exact)
    if inside:
        print("within the stated bound: %d of %d figures" % (sum(inside), len(inside)))
    if exact:
        exact["gib"] = gib
    return exact


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


def ksmscan(files, interval, n):
    """A --series run's last pages_shared and pages_sharing, and with a
    sample their bounds from the line on standard error."""
    args = [KSMSCAN, "--csv", "--series"] + files + ["--interval=" + interval, "-r", "summary"]
    if n > 1:
        args.append("--sample=1/%d" % n)
    t0 = time.time()
    r = subprocess.run(args, capture_output=True, text=True, check=True)
    head, row = r.stdout.splitlines()[:2]
    got = dict(zip(head.split(","), row.split(",")))
    out = {"shared": int(got["pages_shared"]), "sharing": int(got["pages_sharing"]),
           "s": time.time() - t0}
    said = re.search(r"pages_shared \d+ \+- (\d+), pages_sharing \d+ \+- (\d+)",
                     " ".join(r.stderr.split()))
    if n > 1:
        out["shared_bound"], out["sharing_bound"] = said.groups()
    return out


def redis_series(d, keys):
    """4 gcore snapshots of a redis-server written between them, in @d."""
    sock = os.path.join(d, "r.sock")
    srv = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", sock,
                            "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        c = socket.socket(socket.AF_UNIX)
        c.connect(sock)
        rng = random.Random(5)
        blobs = [rng.randbytes(4096) for _ in range(64)]

        def fill(lo, hi):
            for i in range(lo, hi):
                v = blobs[rng.randrange(64)] if rng.random() < 0.5 else rng.randbytes(4096)
                c.sendall(b"*3\r\n$3\r\nSET\r\n$%d\r\nk%d\r\n$%d\r\n%s\r\n"
                          % (len(b"k%d" % i), i, len(v), v))
            got = b""
            while got.count(b"\r\n") < hi - lo:
                got += c.recv(1 << 20)
        fill(0, keys)
        files = []
        for k in range(4):
            base = os.path.join(d, "snap%d" % k)
            subprocess.run(["gcore", "-o", base, str(srv.pid)], capture_output=True, check=True)
            files.append("%s.%d" % (base, srv.pid))
            fill(rng.randrange(keys), 0)
            fill(keys + k * keys // 20, keys + (k + 1) * keys // 20)  # 5% more keys
            time.sleep(1)
        return files
    finally:
        srv.terminate()
        srv.wait()


def real(keys):
    """Error of the sample on real memory: exact and 1/16 to 1/256."""
    print("\nreal memory: --series whole and sampled (error against the whole replay)")
    print("%-28s %6s %9s %9s  %s" % ("input", "sample", "shared", "sharing", "error (bound)"))
    inputs = [("guest-b (QEMU, 2 x 36896 p)",
               [os.path.join(HERE, "..", "tests", "fixtures", "guest-b.elf.zst")] * 2, "20s")]
    d = tempfile.mkdtemp(prefix="ksmscan-sample-")
    try:
        if shutil.which("redis-server") and shutil.which("gcore"):
            inputs.append(("redis-server %d keys, 4 x" % keys, redis_series(d, keys), "1s"))
        else:
            print("SKIP redis-server: redis-server or gcore missing")
        for name, files, interval in inputs:
            exact = ksmscan(files, interval, 0)
            print("%-28s %6s %9d %9d  %.1f s" % (name, "whole", exact["shared"],
                                                exact["sharing"], exact["s"]), flush=True)
            for n in (16, 64, 256):
                r = ksmscan(files, interval, n)
                line = "%-28s %6s %9d %9d " % ("", "1/%d" % n, r["shared"], r["sharing"])
                for k in ("shared", "sharing"):
                    err, bound = r[k] - exact[k], float(r[k + "_bound"])
                    line += " %s %+.1f%% (%.1f%%)%s" % (
                        k, 100.0 * err / max(1, exact[k]), 100.0 * bound / max(1, exact[k]),
                        "" if abs(err) <= bound else " OUTSIDE")
                print(line, flush=True)
    finally:
        shutil.rmtree(d)


def main():
    if not os.path.exists(BENCH):
        sys.exit("%s: missing (make build/bench/sample_bench)" % BENCH)
    print("the replay of generated series, whole and sampled (--sample=1/N)")
    full = os.environ.get("KSMSCAN_BENCH_FULL")
    sizes(1, 8, (16, 64, 256))
    growth(1)
    real(100000 if full else 20000)
    if full:
        growth(4)
        like = sizes(16, 8, (16, 64), seeds=(1,))
        sizes(256, 8, (64,), seeds=(1,), whole=False, like=like)


if __name__ == "__main__":
    main()
