#!/usr/bin/python3
"""make bench, part 2: the whole scan against the I/O limit and simple tools.

Generates (once, cached in $KSMSCAN_BENCH_DIR or /tmp/ksmscan-bench) a 1 GiB
and a 4 GiB raw image with a realistic mix -- about 30% zero pages, 20% pages
in duplicate groups of 2 to 64, 50% unique pages -- reads each once to warm
the page cache, then times in one run, side by side:
  cat IMAGE > /dev/null           the I/O limit
  xxhsum -H3 IMAGE                one hashing pass
  ksmscan IMAGE                   the default scan (xxhash, all CPUs)
  python3 dupcount.py IMAGE       a plain Python duplicate counter (hashlib)
and prints ratios and ksmscan's peak RSS (/usr/bin/time -f %M). Each command
runs three times and the fastest counts. Benchmarks are not tests.
"""
import os, random, re, shutil, subprocess, sys, tempfile, time

KSMSCAN = os.path.abspath(os.environ.get("KSMSCAN", "./ksmscan"))
DIR = os.environ.get("KSMSCAN_BENCH_DIR", "/tmp/ksmscan-bench")
SIZES = [int(s) for s in os.environ.get("KSMSCAN_BENCH_GIB", "1,4").split(",")]
PAGE = 4096

DUPCOUNT = r'''
import hashlib, sys
seen = {}
with open(sys.argv[1], "rb") as f:
    while True:
        page = f.read(4096)
        if len(page) < 4096:
            break
        key = hashlib.sha1(page).digest()
        seen[key] = seen.get(key, 0) + 1
pages = sum(seen.values())
print(pages, len(seen), pages - len(seen))
'''


def make_image(path, gib):
    """Write the image in 64 MiB chunks: page kinds drawn at random."""
    rnd = random.Random(gib)
    total = gib << 18
    groups = [os.urandom(PAGE) for _ in range(4096)]
    zero = bytes(PAGE)
    with open(path + ".tmp", "wb") as f:
        done = 0
        while done < total:
            n = min(16384, total - done)
            unique = os.urandom(n * PAGE)
            chunk = []
            for i in range(n):
                x = rnd.random()
                if x < 0.30:
                    chunk.append(zero)
                elif x < 0.50:
                    chunk.append(groups[rnd.randrange(len(groups))])
                else:
                    chunk.append(unique[i * PAGE:(i + 1) * PAGE])
            f.write(b"".join(chunk))
            done += n
    os.rename(path + ".tmp", path)


def best(cmd, runs=3):
    """Fastest wall time of a few runs, and the last run's output."""
    t, out = None, ""
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        dt = time.perf_counter() - t0
        t = dt if t is None or dt < t else t
        out = r.stdout + r.stderr
    return t, out


def main():
    os.makedirs(DIR, exist_ok=True)
    script = os.path.join(DIR, "dupcount.py")
    with open(script, "w") as f:
        f.write(DUPCOUNT)
    print("machine: %s, %d CPUs" % (open("/proc/cpuinfo").read().split(
        "model name")[1].split("\n")[0].strip(": \t"), os.cpu_count()))
    print("%-8s %9s %9s %9s %9s %9s %10s %10s %10s %9s" % (
        "image", "cat s", "xxhsum s", "ksmscan s", "python s", "GiB/s",
        "vs cat", "vs xxhsum", "vs python", "RSS MiB"))
    for gib in SIZES:
        img = os.path.join(DIR, "mix-%dg.img" % gib)
        if not os.path.exists(img):
            make_image(img, gib)
        subprocess.run(["cat", img], stdout=subprocess.DEVNULL)
        t_cat, _ = best(["sh", "-c", "cat '%s' > /dev/null" % img])
        t_xxh, _ = best(["xxhsum", "-H3", img])
        t_ks, _ = best([KSMSCAN, "--no-progress", "--csv", img])
        _, out = best(["/usr/bin/time", "-f", "RSS %M", KSMSCAN, "--no-progress",
                       "--csv", img], runs=1)
        rss = int(re.search(r"RSS (\d+)", out).group(1)) / 1024.0
        t_py, _ = best([sys.executable, script, img], runs=1)
        print("%-8s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2fx %9.2fx %9.0fx %9.1f" % (
            "%d GiB" % gib, t_cat, t_xxh, t_ks, t_py, gib / t_ks, t_ks / t_cat,
            t_ks / t_xxh, t_py / t_ks, rss))
    print("(vs cat and vs xxhsum: ksmscan's time over theirs, lower is better; "
          "vs python: how many times faster ksmscan is)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
