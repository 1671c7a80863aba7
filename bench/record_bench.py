#!/usr/bin/python3
"""make bench: --record, its size and the time to advise from it.

Real memory: the repository's fixture guest (tests/fixtures/guest-b.elf.zst,
a QEMU guest of 36896 pages) as a series of one snapshot, and live
processes as series of 4 snapshots 1 s apart: a Python interpreter with
the standard library's modules loaded, its heap changing a little, and a
Redis server (when redis-server is installed) holding 100000 JSON-like
values of random numbers, written to all the while. For
each: the record's bytes, its bytes per page and snapshot (pages of all
snapshots), the time of the fixture's run with --record against
without, and then the time of `-r advise --target=90%@10m` from the
record against from the files (best of three), or against the live run
(which takes its 4 samples' time: what a record spares). The
figures of the advice are checked equal on the way. Benchmarks are not
tests.
"""
import os, random, shutil, subprocess, sys, tempfile, time

KSMSCAN = os.path.abspath(os.environ.get("KSMSCAN", "./ksmscan"))
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ADVISE = ["-r", "advise", "--target=90%@10m", "-o", "csv"]
CHILD = r"""
import sys, json, email, http.server, xml.dom.minidom, decimal, sqlite3, unittest
data = [dict(k=i, v=str(i) * 10) for i in range(100000)]
print("ready", flush=True)
i = 0
while sys.stdin.readline():
    data[i % len(data)]["v"] = "x" * (i % 50)
    i += 1
"""


def best(cmd, rounds=3):
    t_best, out = float("inf"), None
    for _ in range(rounds):
        t = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        t_best = min(t_best, time.perf_counter() - t)
        out = r.stdout
    return t_best, out


def report(what, rec, pages, snaps):
    size = os.path.getsize(rec)
    print("%-36s %9d bytes  %6d pages x %d snapshots  %.2f bytes/page/snapshot"
          % (what, size, pages // snaps if snaps else pages, snaps,
             size / max(1, pages)))


def fixture(tmp):
    guest = os.path.join(ROOT, "tests", "fixtures", "guest-b.elf.zst")
    if not os.path.exists(guest):
        print("record: no fixture guest-b.elf.zst, skipped")
        return
    rec = os.path.join(tmp, "guest.rec")
    t_plain, _ = best([KSMSCAN, "--series", guest, "-r", "timeline", "-o", "csv"])
    t_write, _ = best([KSMSCAN, "--series", guest, "-r", "timeline", "-o", "csv",
                       "--record=" + rec])
    report("fixture guest, 1 snapshot", rec, 36896, 1)
    print("%-36s the run with it %.3f s, without %.3f s (best of 3)"
          % ("  writing it", t_write, t_plain))
    t_files, a = best([KSMSCAN, "--series", guest] + ADVISE)
    t_rec, b = best([KSMSCAN, rec] + ADVISE)
    print("%-36s from files %.3f s, from the record %.3f s (%.1fx)%s"
          % ("  -r advise", t_files, t_rec, t_files / t_rec,
             "" if a == b else "  (ADVICE DIFFERS)"))


def live_series(tmp, what, pid, poke=None):
    """Record 4 snapshots of @pid 1 s apart (@poke changes its memory in
    between), then advise from the record."""
    rec = os.path.join(tmp, "live.rec")
    t = time.perf_counter()
    run = subprocess.Popen([KSMSCAN, "-p", str(pid), "--count=4", "--interval=1s",
                            "--record=" + rec] + ADVISE, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    while poke and run.poll() is None:
        poke()
        time.sleep(0.05)
    out = run.communicate()[0]
    t_live = time.perf_counter() - t
    v = subprocess.run([KSMSCAN, rec, "-r", "volatility", "-o", "csv"],
                       capture_output=True, text=True).stdout.splitlines()
    head = v[0].split(",")
    rows = [l.split(",") for l in v[1:]]
    first = int(rows[0][head.index("pages")]) - int(rows[0][head.index("new_pages")]) + \
        int(rows[0][head.index("gone_pages")])
    pages = first + sum(int(x[head.index("pages")]) for x in rows)
    report(what + ", 4 snapshots", rec, pages, len(rows) + 1)
    t_rec, b = best([KSMSCAN, rec] + ADVISE)
    print("%-36s live (4 samples 1 s apart) %.3f s, from the record %.3f s%s"
          % ("  -r advise", t_live, t_rec, "" if out == b else
             "  (ADVICE DIFFERS)"))


def live(tmp):
    p = subprocess.Popen([sys.executable, "-c", CHILD], text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    p.stdout.readline()
    try:
        live_series(tmp, "live Python process", p.pid)
    finally:
        p.stdin.close()
        p.wait()


def redis(tmp):
    """A Redis server on a socket of its own, 100000 values set through
    redis-cli --pipe, some rewritten while it is recorded."""
    if not shutil.which("redis-server") or not shutil.which("redis-cli"):
        print("record: no redis-server, the Redis server skipped")
        return
    sock = os.path.join(tmp, "redis.sock")
    srv = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", sock,
                            "--save", "", "--appendonly", "no"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rnd = random.Random(1)

    def cmd(*args):
        return "*%d\r\n" % len(args) + "".join(
            "$%d\r\n%s\r\n" % (len(a), a) for a in args)

    def value(i):
        return '{"id":%d,"user":"user-%d","score":%d,"ts":%d,"tags":["a%d","b%d"]}' % (
            i, rnd.randrange(10 ** 6), rnd.randrange(10 ** 9), 1700000000 +
            rnd.randrange(10 ** 7), rnd.randrange(100), rnd.randrange(1000))
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        data = "".join(cmd("SET", "key:%d" % i, value(i)) for i in range(100000))
        subprocess.run(["redis-cli", "-s", sock, "--pipe"], input=data, text=True,
                       capture_output=True, check=True)
        k = [0]

        def poke():
            k[0] += 1
            subprocess.run(["redis-cli", "-s", sock, "SET", "key:%d" % (k[0] * 7919 % 100000),
                            value(k[0])], capture_output=True)
        live_series(tmp, "live Redis server", srv.pid, poke)
    finally:
        srv.terminate()
        srv.wait()


def main():
    with tempfile.TemporaryDirectory(prefix="ksmscan-record-bench-") as tmp:
        fixture(tmp)
        live(tmp)
        redis(tmp)


if __name__ == "__main__":
    main()
