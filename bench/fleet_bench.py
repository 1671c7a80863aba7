#!/usr/bin/python3
"""make bench, part 3: hosts and fleets.

Times the export (`ksmscan -r contents --csv HOST | zstd`) and the fleet
tool's aggregation (fleet/ksmfleet, totals and pairs, on a LocalCluster of 1
and of 2 worker processes), for:
  fixtures   tests/fixtures/guest-b.elf.zst and a copy of the core with 15%
             of its non-zero pages changed (two guests booted from one image)
  synthetic  100 hosts of 4096 pages each (16 MiB): 25% zero pages, 45%
             from a pool of 20000 "common" contents (the same software on
             every host), 10% in duplicate groups of 2 to 8, 20% unique
Images are written one at a time, exported and removed. The aggregation
runs three times and the fastest counts (a shared machine). Benchmarks are
not tests.
"""
import os, random, shutil, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KSMSCAN = os.path.abspath(os.environ.get("KSMSCAN", os.path.join(ROOT, "ksmscan")))
FLEET = [sys.executable, os.path.join(ROOT, "fleet", "ksmfleet")]
PAGE = 4096
HOSTS = int(os.environ.get("KSMSCAN_BENCH_HOSTS", "100"))


def export(image, out):
    """ksmscan -r contents --csv IMAGE | zstd > OUT; seconds."""
    t = time.perf_counter()
    with open(out, "wb") as f:
        scan = subprocess.Popen([KSMSCAN, "-q", "-r", "contents", "--csv", image],
                                stdout=subprocess.PIPE)
        subprocess.run(["zstd", "-q", "-c"], stdin=scan.stdout, stdout=f, check=True)
        scan.stdout.close()
        if scan.wait():
            sys.exit("ksmscan failed on %s" % image)
    return time.perf_counter() - t


def aggregate(exports, workers, report):
    best = None
    for _ in range(3):
        t = time.perf_counter()
        r = subprocess.run(FLEET + ["--workers=%d" % workers, "--report=" + report,
                                    "--csv"] + exports, capture_output=True, text=True)
        if r.returncode:
            sys.exit("ksmfleet failed: %s" % r.stderr.strip())
        dt = time.perf_counter() - t
        best = dt if best is None or dt < best else best
    return best, r.stdout.splitlines()


def changed_copy(src, dst, rng):
    """The guest core with 15% of its non-zero pages changed (8 bytes each),
    in place in its PT_LOAD segments: still an ELF core."""
    data = bytearray(subprocess.run(["zstd", "-dc", src], capture_output=True,
                                    check=True).stdout)
    phoff = int.from_bytes(data[0x20:0x28], "little")
    phsize = int.from_bytes(data[0x36:0x38], "little")
    for i in range(int.from_bytes(data[0x38:0x3a], "little")):
        ph = phoff + i * phsize
        if int.from_bytes(data[ph:ph + 4], "little") != 1:      # PT_LOAD
            continue
        off = int.from_bytes(data[ph + 8:ph + 16], "little")
        size = int.from_bytes(data[ph + 32:ph + 40], "little")
        for at in range(off, off + size - PAGE + 1, PAGE):
            if any(data[at:at + PAGE]) and rng.random() < 0.15:
                data[at:at + 8] = rng.getrandbits(64).to_bytes(8, "little")
    with open(dst, "wb") as f:
        f.write(data)


def synthetic_host(path, rng, pool):
    n = 4096
    pages = [bytes(PAGE)] * (n // 4)
    pages += [pool[rng.randrange(len(pool))] for _ in range(n * 45 // 100)]
    while len(pages) < n * 80 // 100:
        p = os.urandom(PAGE)
        pages += [p] * rng.randint(2, 8)
    pages = pages[:n * 80 // 100]
    pages += [os.urandom(PAGE) for _ in range(n - len(pages))]
    rng.shuffle(pages)
    with open(path, "wb") as f:
        f.write(b"".join(pages))


def report(label, export_s, exports):
    size = sum(os.path.getsize(e) for e in exports)
    print("%-10s %3d hosts: export %.2f s (%.1f ms per host), %.1f MiB of zstd CSV"
          % (label, len(exports), export_s, 1000 * export_s / len(exports), size / 2**20))
    for rep in ("totals", "pairs"):
        line = "%-10s %-7s" % ("", rep)
        for w in (1, 2):
            secs, out = aggregate(exports, w, rep)
            line += "  %d worker%s %.2f s" % (w, "s" if w > 1 else " ", secs)
        print(line + ("  (%s)" % out[1] if rep == "totals" else ""), flush=True)


def main():
    tmp = tempfile.mkdtemp(prefix="ksmscan-fleet-bench-")
    rng = random.Random(15)
    try:
        guest = os.path.join(ROOT, "tests", "fixtures", "guest-b.elf.zst")
        print("totals columns: hosts,pages,distinct_pages,pages_shared,pages_sharing,"
              "saved_bytes,saved_bytes_hosts_alone")
        if os.path.exists(guest):
            copy = os.path.join(tmp, "guest-b-changed.elf")
            changed_copy(guest, copy, rng)
            ex = [os.path.join(tmp, "guest-b.csv.zst"), os.path.join(tmp, "changed.csv.zst")]
            secs = export(guest, ex[0]) + export(copy, ex[1])
            os.unlink(copy)
            report("fixtures", secs, ex)
        pool = [os.urandom(PAGE) for _ in range(20000)]
        ex, secs = [], 0.0
        for h in range(HOSTS):
            img = os.path.join(tmp, "host%03d.raw" % h)   # the host's name
            synthetic_host(img, rng, pool)
            ex.append(os.path.join(tmp, "host%03d.csv.zst" % h))
            secs += export(img, ex[-1])
            os.unlink(img)
        report("synthetic", secs, ex)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
