#!/usr/bin/python3
"""make bench, part 3: hosts and fleets.

Times the export (`ksmscan -r contents --csv HOST | zstd`) of the fixture
guest and a copy of its core with 15% of its non-zero pages changed (two
guests booted from one image), and the fleet tool on it; then fleets of
synthetic hosts (KSMSCAN_BENCH_FLEETS, default "1000"; "1000 10000" adds
the fleet of 10,000 hosts, some 7 minutes more on 2 cores), made here as
digests (no image is scanned):
  a few images shared by many: 300 contents on every host (kernel text)
  and the zero page; 5 images, each run by a fifth of the hosts; clusters
  of 2 to 8 hosts sharing contents of their own; a quarter as many pairs
  as hosts sharing more; and contents of each host alone.
Sketch exports (4096 rows of hosts of some 13,600 distinct contents) time
partners and pairs; contents exports (hosts of some 2,000 contents) time
totals and placement. A fleet of at most 1,000 hosts runs on a LocalCluster
of 1 and of 2 workers; a larger one (without pairs, which are partners and
a sort) on a `dask scheduler` and 2 `dask worker` processes started here
on 127.0.0.1 (stopped at the end), so that
the client's peak RSS (VmHWM, printed by ksmfleet with KSMFLEET_PEAK_RSS=1)
is the client's alone. One run each; benchmarks are not tests.

Placement is compared first: the method for fleets past 8 hosts (pairs)
and first-fit against the optimum (--placement=exact) on sampled
sub-fleets of 8 hosts of a synthetic fleet of 120, and pairs against
first-fit on all 120.

The loopback cluster is the package's (ksmfleet.loopback), imported as any
package is: make bench runs this with PYTHONPATH=fleet.
"""
import json, os, random, re, shutil, signal, subprocess, sys, tempfile, time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KSMSCAN = os.path.abspath(os.environ.get("KSMSCAN", os.path.join(ROOT, "ksmscan")))
FLEET = [os.path.join(ROOT, "fleet", "bin", "ksmfleet")]
PAGE = 4096
# 10,000 hosts take some 7 minutes here (2 cores): on request only.
FLEETS = [int(n) for n in os.environ.get("KSMSCAN_BENCH_FLEETS", "1000").split()]
SKETCH = 4096
ZERO = (0x3ee8dc4f9e7ee495, 0x93d76fe148c689ba)


def export(image, out):
    """ksmscan -r contents --csv --host=NAME IMAGE | zstd > OUT, the host
    named by the export's file (each stands for a host of its own); seconds."""
    t = time.perf_counter()
    host = os.path.basename(out).split(".")[0]
    with open(out, "wb") as f:
        scan = subprocess.Popen([KSMSCAN, "-q", "-r", "contents", "--csv",
                                 "--host=" + host, image], stdout=subprocess.PIPE)
        subprocess.run(["zstd", "-q", "-c"], stdin=scan.stdout, stdout=f, check=True)
        scan.stdout.close()
        if scan.wait():
            sys.exit("ksmscan failed on %s" % image)
    return time.perf_counter() - t


def aggregate(exports, where, report, runs=3, extra=()):
    """Seconds of the fastest of @runs runs of ksmfleet, its output lines
    and the client's peak RSS in MiB."""
    best = None
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run(FLEET + [where, "--report=" + report, "--csv"] + list(extra)
                           + exports, capture_output=True, text=True,
                           env=dict(os.environ, KSMFLEET_PEAK_RSS="1"))
        if r.returncode:
            sys.exit("ksmfleet failed: %s" % r.stderr.strip()[-2000:])
        dt = time.perf_counter() - t
        best = dt if best is None or dt < best else best
    rss = re.search(r"client peak RSS ([0-9.]+) MiB", r.stderr)
    return best, r.stdout.splitlines(), float(rss.group(1)) if rss else float("nan")


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


# --- synthetic fleets, as digests --------------------------------------------------

def mix(x):
    """splitmix64's finaliser: ids to digest halves."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xbf58476d1ce4e5b9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94d049bb133111eb)
        return x ^ (x >> np.uint64(31))


def plan(hosts, rng):
    """Who shares what: each host's image, cluster and extra pairs."""
    order = list(range(hosts))
    rng.shuffle(order)
    cluster, i, c = [0] * hosts, 0, 0
    while i < hosts:
        size = rng.randint(2, 8)
        for h in order[i:i + size]:
            cluster[h] = c
        i, c = i + size, c + 1
    extra = [[] for _ in range(hosts)]
    for p in range(hosts // 4):
        for h in rng.sample(range(hosts), 2):
            extra[h].append(p)
    return cluster, extra


def host_ids(h, cluster, extra, scale, rng):
    """The content ids of host h and their pages."""
    def block(base, n):
        return np.arange(base, base + n, dtype=np.uint64)
    parts = [block(1 << 40, 300), block((2 << 40) + (h % 5 << 24), int(3000 * scale)),
             block((3 << 40) + (cluster[h] << 20), int(2000 * scale)),
             block((5 << 40) + (h << 20), int(8000 * scale))]
    parts += [block((4 << 40) + (p << 16), int(300 * scale)) for p in extra[h]]
    ids = np.concatenate(parts)
    pages = rng.integers(1, 3, size=len(ids))
    pages[:300] = rng.integers(1, 4, size=300)
    return ids, pages


def write_host(path, name, ids, pages, kind, zero_pages):
    hi, lo = mix(ids ^ np.uint64(0x5ead)), mix(ids ^ np.uint64(0xf1ee7))
    hi, lo = np.append(hi, np.uint64(ZERO[0])), np.append(lo, np.uint64(ZERO[1]))
    pages = np.append(pages, zero_pages)
    order = np.lexsort((lo, hi))
    last = len(order) if kind == "contents" else SKETCH
    fourth = (["%d" % (i == len(ids)) for i in order[:last]] if kind == "contents"
              else ["%d" % len(hi)] * last)
    head = "input,digest,pages," + ("zero" if kind == "contents" else "distinct_pages")
    with open(path, "w") as f:
        f.write(head + "\r\n" + "".join(
            "%s,0x%016x%016x,%d,%s\r\n" % (name, hi[i], lo[i], pages[i], z)
            for i, z in zip(order[:last], fourth)))


def synthetic_fleet(where, hosts, kind, scale, seed=15):
    rng, nrng = random.Random(seed), np.random.default_rng(seed)
    cluster, extra = plan(hosts, rng)
    paths = []
    for h in range(hosts):
        ids, pages = host_ids(h, cluster, extra, scale, nrng)
        paths.append(os.path.join(where, "host%05d.%s.csv" % (h, kind)))
        write_host(paths[-1], "host%05d" % h, ids, pages, kind, int(nrng.integers(20, 400)))
    return paths


def report(label, export_s, exports):
    size = sum(os.path.getsize(e) for e in exports)
    print("%-10s %3d hosts: export %.2f s (%.1f ms per host), %.1f MiB of zstd CSV"
          % (label, len(exports), export_s, 1000 * export_s / len(exports), size / 2**20))
    for rep in ("totals", "pairs"):
        line = "%-10s %-7s" % ("", rep)
        for w in (1, 2):
            secs, out, _ = aggregate(exports, "--workers=%d" % w, rep)
            line += "  %d worker%s %.2f s" % (w, "s" if w > 1 else " ", secs)
        print(line + ("  (%s)" % out[1] if rep == "totals" else ""), flush=True)


def placement_saving(lines):
    """The placement's saving and machines: its machine rows' (host *;
    rows are host, bin, pages, saved_bytes)."""
    saved = [int(line.rsplit(",", 3)[3]) for line in lines[1:] if line.startswith("*,")]
    return sum(saved), len(saved)


def sub_fleets(hosts, samples, size, seed=15):
    """@samples sets of @size hosts of the synthetic fleet of @hosts: a
    cluster (hosts that share contents of their own) and random others."""
    cluster, _ = plan(hosts, random.Random(seed))
    rng = random.Random(seed + 1)
    out = []
    for c in rng.sample(sorted(set(cluster)), samples):
        mates = [h for h in range(hosts) if cluster[h] == c][:size]
        others = rng.sample([h for h in range(hosts) if cluster[h] != c], size - len(mates))
        out.append(sorted(mates + others))
    return out


def placement_compare(tmp, hosts=120, samples=12, size=8):
    """--placement=pairs (the method past 8 hosts) and first-fit against the
    optimum (--placement=exact) on sub-fleets of @size hosts, and pairs
    against first-fit on the whole fleet: pages saved, on a scheduler with 2
    workers (started here, so that each run pays no cluster start)."""
    where = os.path.join(tmp, "placement%d" % hosts)
    os.makedirs(where)
    contents = synthetic_fleet(where, hosts, "contents", 0.15)
    pages = [sum(int(l.split(",")[2]) for l in open(p).read().splitlines()[1:])
             for p in contents]
    from ksmfleet.loopback import Loopback
    with Loopback(2, where, memory="2GiB") as addr:
        def saved(paths, cap, method):
            r = subprocess.run(FLEET + ["--scheduler=" + addr, "--csv", "--report=placement",
                                        "--capacity=%d" % cap, "--placement=" + method] + paths,
                               capture_output=True, text=True)
            if r.returncode:
                sys.exit("ksmfleet failed: %s" % r.stderr.strip()[-2000:])
            return placement_saving(r.stdout.splitlines())[0] // PAGE
        print("placement, pages saved: pairs and first-fit against the optimum (exact), "
              "sub-fleets of %d of %d hosts (a cluster and others), machines of a third "
              "of the sub-fleet's pages" % (size, hosts))
        ratios = {"pairs": [], "first-fit": []}
        for n, sub in enumerate(sub_fleets(hosts, samples, size)):
            cap = max(max(pages[h] for h in sub), sum(pages[h] for h in sub) // 3)
            paths = [contents[h] for h in sub]
            best = saved(paths, cap, "exact")
            got = {m: saved(paths, cap, m) for m in ratios}
            for m in ratios:
                ratios[m].append(got[m] / best if best else 1.0)
            print("  sample %2d: optimum %7d  pairs %7d (%5.1f%%)  first-fit %7d (%5.1f%%)"
                  % (n + 1, best, got["pairs"], 100 * ratios["pairs"][-1], got["first-fit"],
                     100 * ratios["first-fit"][-1]), flush=True)
        for m, r in ratios.items():
            print("  %-9s mean %5.1f%% of the optimum, worst %5.1f%%, optimum in %d of %d"
                  % (m, 100 * sum(r) / len(r), 100 * min(r), sum(x >= 1 for x in r), len(r)))
        cap = 16 * sum(pages) // len(pages)
        whole = {m: saved(contents, cap, m) for m in ("pairs", "first-fit")}
        print("  all %d hosts, machines of %d pages: pairs %d, first-fit %d pages (+%.1f%%)"
              % (hosts, cap, whole["pairs"], whole["first-fit"],
                 100 * (whole["pairs"] / whole["first-fit"] - 1)), flush=True)
    shutil.rmtree(where, ignore_errors=True)


def fleet_runs(hosts, sketches, contents, where):
    """One line per report: seconds and the client's peak RSS."""
    pages = [sum(int(l.split(",")[2]) for l in open(p).read().splitlines()[1:])
             for p in contents[:50]]
    capacity = 16 * sum(pages) // len(pages)
    runs = (("totals", contents, ()), ("partners", sketches, ()), ("pairs", sketches, ()),
            ("placement", contents, ("--capacity=%d" % capacity,)))
    for rep, ex, extra in runs[:2] + runs[3:] if hosts > 1000 else runs:   # pairs: partners and a sort
        secs, out, rss = aggregate(ex, where, rep, runs=1, extra=extra)
        note = {"totals": lambda: out[1],
                "partners": lambda: "%d rows" % (len(out) - 1),
                "pairs": lambda: "%d candidate pairs" % (len(out) - 1),
                "placement": lambda: "%d machines of %d pages, %d bytes saved"
                % (placement_saving(out)[1], capacity, placement_saving(out)[0])}[rep]()
        print("  %-9s %-14s %8.1f s  client peak RSS %6.1f MiB  (%s)"
              % (rep, where.split("=")[0].lstrip("-") + "=" + where.split("=")[1][-5:],
                 secs, rss, note), flush=True)


def synthetic(tmp, hosts):
    t = time.perf_counter()
    where = os.path.join(tmp, "fleet%d" % hosts)
    os.makedirs(where)
    sketches = synthetic_fleet(where, hosts, "sketch", 1.0)
    contents = synthetic_fleet(where, hosts, "contents", 0.15)
    size = [sum(os.path.getsize(p) for p in ps) / 2**20 for ps in (sketches, contents)]
    print("synthetic %d hosts, made in %.0f s: sketches %.0f MiB, contents %.0f MiB"
          % (hosts, time.perf_counter() - t, size[0], size[1]), flush=True)
    if hosts <= 1000:
        for w in (1, 2):
            fleet_runs(hosts, sketches, contents, "--workers=%d" % w)
    else:
        from ksmfleet.loopback import Loopback
        with Loopback(2, where, memory="6GiB", seconds=120) as addr:
            fleet_runs(hosts, sketches, contents, "--scheduler=" + addr)
    shutil.rmtree(where, ignore_errors=True)


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
        placement_compare(tmp)
        for hosts in FLEETS:
            synthetic(tmp, hosts)
        if max(FLEETS, default=0) < 10000:
            print("10,000 hosts: KSMSCAN_BENCH_FLEETS=\"1000 10000\" (some 7 minutes more); "
                  "the last figures are in docs/fleet.md")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
