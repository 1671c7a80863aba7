#!/usr/bin/python3
"""make bench, part 2: the whole scan against the I/O limit and simple tools.

Generates (once, cached in $KSMSCAN_BENCH_DIR or /tmp/ksmscan-bench) a 1 GiB
and a 4 GiB raw image with a realistic mix -- about 30% zero pages, 20% pages
in duplicate groups of 2 to 64, 50% unique pages -- and, when the fixtures are
there, eight copies of the fixture guest (tests/fixtures/guest-b.elf.zst)
with 15% of each copy's non-zero pages changed, as many guests booted from one
image would be. It drops each from the page cache and reads it once (so every
run starts from the image as read from disk), then times, side by side:
  cat IMAGE > /dev/null           the I/O limit
  xxhsum -H3 IMAGE                one hashing pass
  ksmscan IMAGE                   the default scan (xxhash, all CPUs)
  python3 dupcount.py IMAGE       a plain Python duplicate counter (hashlib)
and prints ratios and ksmscan's peak RSS (/usr/bin/time -f %M). With
$KSMSCAN_FLOOR (make bench builds bench/floor.c) it also prints what the
machine does at best with every CPU: read every byte of the mapped image,
and XXH64 plus the index key of every page, released as it goes. Then the
scan with one thread and with two (-j 1, -j 2, interleaved), and how much
the second thread gains: the engine's serial part; and the scan with
zram's lz4 (-c lz4) against the lz4 tool at its fastest level. cat, xxhsum
and ksmscan run in five interleaved rounds and each one's fastest counts, so
that a slow moment of a shared machine hits all of them; Python runs once.
Benchmarks are not tests.
"""
import os, random, re, shutil, struct, subprocess, sys, tempfile, time

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


GUEST = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                     "tests", "fixtures", "guest-b.elf.zst")


def make_guests(path, copies=8):
    """Copies of the fixture guest, 15% of each copy's non-zero pages changed."""
    rnd = random.Random(8)
    core = subprocess.run(["zstd", "-dc", GUEST], stdout=subprocess.PIPE,
                          check=True).stdout
    # The guest's memory: the core's PT_LOAD segments, as a raw image.
    phoff, = struct.unpack_from("<Q", core, 32)
    phentsize, phnum = struct.unpack_from("<HH", core, 54)
    data = b""
    for k in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", core, phoff + k * phentsize)
        if p_type == 1:
            data += core[p_offset:p_offset + p_filesz - p_filesz % PAGE]
    n = len(data) // PAGE
    with open(path + ".tmp", "wb") as f:
        for _ in range(copies):
            pages = bytearray(data[:n * PAGE])
            for i in range(n):
                if pages[i * PAGE:(i + 1) * PAGE].strip(b"\0") and rnd.random() < 0.15:
                    pages[i * PAGE:(i + 1) * PAGE] = rnd.randbytes(PAGE)
            f.write(pages)
    os.rename(path + ".tmp", path)


def interleaved(cmds, rounds=5):
    """Each command's fastest wall time over rounds that take them in turn."""
    best_t = [None] * len(cmds)
    for _ in range(rounds):
        for k, cmd in enumerate(cmds):
            t0 = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            dt = time.perf_counter() - t0
            if best_t[k] is None or dt < best_t[k]:
                best_t[k] = dt
    return best_t


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
    images = []
    for gib in SIZES:
        img = os.path.join(DIR, "mix-%dg.img" % gib)
        if not os.path.exists(img):
            make_image(img, gib)
        images.append(("%d GiB" % gib, img))
    if os.path.exists(GUEST) and shutil.which("zstd"):
        img = os.path.join(DIR, "guests.img")
        if not os.path.exists(img):
            make_guests(img)
        images.append(("guests", img))
    floors = []
    for label, img in images:
        gib = os.path.getsize(img) / 2.0**30
        # The same start every time: the image as read from disk once (a
        # file just written can sit in the page cache in smaller pieces,
        # which costs both cat and ksmscan more to read).
        fd = os.open(img, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
        subprocess.run(["cat", img], stdout=subprocess.DEVNULL)
        t_cat, t_xxh, t_ks = interleaved([
            ["sh", "-c", "cat '%s' > /dev/null" % img],
            ["xxhsum", "-H3", img],
            [KSMSCAN, "--no-progress", "--csv", img]])
        _, out = best(["/usr/bin/time", "-f", "RSS %M", KSMSCAN, "--no-progress",
                       "--csv", img], runs=1)
        rss = int(re.search(r"RSS (\d+)", out).group(1)) / 1024.0
        t_py, _ = best([sys.executable, script, img], runs=1)
        print("%-8s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2fx %9.2fx %9.0fx %9.1f" % (
            label, t_cat, t_xxh, t_ks, t_py, gib / t_ks, t_ks / t_cat,
            t_ks / t_xxh, t_py / t_ks, rss))
        if os.environ.get("KSMSCAN_FLOOR"):
            best_f = {}
            for _ in range(3):
                out = subprocess.run([os.environ["KSMSCAN_FLOOR"], img,
                                      str(os.cpu_count())], stdout=subprocess.PIPE,
                                     text=True).stdout
                for line in out.splitlines():
                    k, v = line.split()
                    best_f[k] = min(best_f.get(k, 1e9), float(v))
            floors.append((label, gib, best_f, t_ks))
    print("(vs cat and vs xxhsum: ksmscan's time over theirs, lower is better; "
          "vs python: how many times faster ksmscan is)")
    print("\nthreads: the default scan with -j 1 and -j 2 (interleaved, best of 5)")
    print("%-8s %9s %9s %9s" % ("image", "-j 1 s", "-j 2 s", "speed-up"))
    for label, img in images:
        t1, t2 = interleaved([[KSMSCAN, "--no-progress", "--csv", "-j", "1", img],
                              [KSMSCAN, "--no-progress", "--csv", "-j", "2", img]])
        print("%-8s %9.3f %9.3f %8.2fx" % (label, t1, t2, t1 / t2))
    if shutil.which("lz4"):
        print("\ncompression: the scan with -c lz4 (every content new to the input "
              "compressed once, page by page, as zram does) against lz4 -1 on the "
              "whole image (interleaved, best of 3)")
        print("%-8s %9s %11s %9s %9s" % ("image", "ksmscan s", "-c lz4 s", "lz4 -1 s",
                                        "vs lz4"))
        for label, img in images:
            t0, tc, tl = interleaved([
                [KSMSCAN, "--no-progress", "--csv", img],
                [KSMSCAN, "--no-progress", "-r", "compress", "--csv", "-c", "lz4", img],
                ["sh", "-c", "lz4 -1 -c '%s' > /dev/null" % img]], rounds=3)
            print("%-8s %9.2f %11.2f %9.2f %8.2fx" % (label, t0, tc, tl, tc / tl))
    if floors:
        print("\nthe machine at best, %d threads on the mapped image (bench/floor.c):"
              % os.cpu_count())
        print("%-8s %9s %9s %9s %10s" % ("image", "read s", "GiB/s", "hash s",
                                         "ksmscan/hash"))
        for label, gib, f, t_ks in floors:
            print("%-8s %9.2f %9.1f %9.2f %9.2fx" % (
                label, f["read"], gib / f["read"], f["hash"], t_ks / f["hash"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
