#!/usr/bin/python3
"""ksmfleet at scale: pairs without n^2, partners, placement from
partners, the candidate step's recall, and a real cluster (a `dask
scheduler` and `dask worker` processes started here, on 127.0.0.1 only).

The fleet is made here as digests (random 128-bit numbers; the zero page's
real digest), written as ksmscan's contents and sketch exports: a few
contents on every host (kernel text, the zero page), three images each run
by a third of the hosts, clusters of 3 to 6 hosts sharing contents of their
own, some pairs sharing more, and contents of each host alone. The oracle
is plain Python over those dicts: every pair of hosts intersected, KSM's
grouping of ksmtest.ksm_group(), the greedy placement and first-fit written
here again.
"""
import csv, io, itertools, os, random, re, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import PAGE, Skip, check, eq, ksm_group, run_suite, test, tmp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
try:        # the source's (run_all.py puts fleet/ on PYTHONPATH) or an installed one
    from ksmfleet.loopback import Loopback
except ImportError:
    print("ksmfleet not found: run with PYTHONPATH=fleet, as run_all.py does")
    print("0 passed, 1 failed")
    sys.exit(1)
FLEET = [os.path.join(ROOT, "fleet", "bin", "ksmfleet")]
ZERO = "0x3ee8dc4f9e7ee49593d76fe148c689ba"
SKETCH = 4096          # the sketch size docs/fleet.md states the recall for
TOP = 5
HOSTS = 60
CACHE = {}


def fleet(*args, timeout=600):
    p = subprocess.run(FLEET + list(args), capture_output=True, text=True, timeout=timeout)
    return p


def rows(out):
    return list(csv.DictReader(io.StringIO(out, newline="")))


# --- the fleet and its oracle -------------------------------------------------

def digests(rng, n):
    return ["0x%032x" % rng.getrandbits(128) for _ in range(n)]


def make_fleet(rng, hosts, unique):
    """{host name: {digest: pages}} in host order (see the module's text)."""
    kernel, images = digests(rng, 300), [digests(rng, 1500) for _ in range(3)]
    order = list(range(hosts))
    rng.shuffle(order)
    clusters, i = [], 0
    while i < hosts:
        size = min(rng.randint(3, 6), hosts - i)
        clusters.append(order[i:i + size])
        i += size
    extra = [(rng.sample(range(hosts), 2), digests(rng, 300)) for _ in range(hosts // 4)]
    fleet = {}
    for h in range(hosts):
        c = {d: rng.randint(1, 3) for d in kernel}
        c[ZERO] = rng.randint(20, 400)
        c.update({d: rng.randint(1, 2) for d in images[h % 3]})
        c.update({d: 1 for d in digests(rng, unique)})
        fleet["host%03d" % h] = c
    for members in clusters:
        for d in digests(rng, 2000):
            for h in members:
                fleet["host%03d" % h][d] = rng.randint(1, 2)
    for pair, ds in extra:
        for h in pair:
            fleet["host%03d" % h].update({d: 1 for d in ds})
    return fleet


def saved(c, zero, m=256, z=False):
    if zero and z:
        return c
    return ksm_group(c, m)[1]


def pair_truth(ca, cb):
    """(shared contents, pages of a, pages of b, extra pages saved together)."""
    both = ca.keys() & cb.keys()
    extra = sum(saved(ca[d] + cb[d], d == ZERO) - saved(ca[d], d == ZERO)
                - saved(cb[d], d == ZERO) for d in both)
    return len(both), sum(ca[d] for d in both), sum(cb[d] for d in both), extra


def all_pairs(fl):
    names = list(fl)
    return {(a, b): pair_truth(fl[a], fl[b]) for a, b in itertools.combinations(names, 2)}


def write_exports(fl, kind):
    out = []
    for h, c in fl.items():
        path = tmp("%s.%s.csv" % (h, kind))
        ds = sorted(c)
        if kind == "sketch":
            lines = ["input,digest,pages,distinct_pages"] + [
                "%s,%s,%d,%d" % (h, d, c[d], len(c)) for d in ds[:SKETCH]]
        else:
            lines = ["input,digest,pages,zero"] + [
                "%s,%s,%d,%d" % (h, d, c[d], d == ZERO) for d in ds]
        with open(path, "w") as f:
            f.write("\r\n".join(lines) + "\r\n")
        out.append(path)
    return out


def setup():
    """The fleet, its pairs and both kinds of exports, made once."""
    if not CACHE:
        fl = make_fleet(random.Random(28), HOSTS, 2500)
        CACHE.update(fleet=fl, pairs=all_pairs(fl), contents=write_exports(fl, "contents"),
                     sketch=write_exports(fl, "sketch"))
    return CACHE


def truth(pairs, a, b):
    return pairs[(a, b)] if (a, b) in pairs else pairs[(b, a)]


def true_top(fl, pairs, n):
    """{host: [(partner, shared pages of host, saved pages)]}: the n best,
    by saved pages, then the host's shared pages, then host order."""
    names = list(fl)
    out = {}
    for i, h in enumerate(names):
        cand = []
        for j, p in enumerate(names):
            if p != h:
                s, pa, pb, sv = truth(pairs, h, p)
                mine = pa if (h, p) in pairs else pb
                if s:
                    cand.append((-sv, -mine, j, p, mine, sv))
        out[h] = [(c[3], c[4], c[5]) for c in sorted(cand)[:n]]
    return out


# --- pairs and partners, exact ---------------------------------------------------

@test("fleet-scale")
def exact_pairs_with_common():
    """--common=10: the contents of more than 10 hosts (kernel, zero page,
    images) make no pairs; every pair that shares another is listed with
    its exact figures, common contents included."""
    c = setup()
    fl, pairs = c["fleet"], c["pairs"]
    holders = {}
    for h, cnt in fl.items():
        for d in cnt:
            holders[d] = holders.get(d, 0) + 1
    r = fleet("--workers=2", "--csv", "--report=pairs", "--common=10", *c["contents"])
    if not check(r.returncode == 0, "pairs --common=10: exit 0", r.stderr[-300:]):
        return
    names = list(fl)
    exp = []
    for (a, b), (s, pa, pb, sv) in pairs.items():
        if any(holders[d] <= 10 for d in fl[a].keys() & fl[b].keys()):
            exp.append((-sv, -s, names.index(a), names.index(b), a, b, s, sv * PAGE, pa, pb))
    exp = [e[4:] for e in sorted(exp)]
    got = [(x["host_a"], x["host_b"], int(x["shared_contents"]), int(x["saved_together_bytes"]),
            int(x["pages_a"]), int(x["pages_b"])) for x in rows(r.stdout)]
    check(len(exp) < len(pairs) / 4, "the oracle leaves most pairs out (%d of %d listed)"
          % (len(exp), len(pairs)))
    eq(got, exp, "pairs --common=10: the pairs sharing a content of at most 10 hosts, exact")


@test("fleet-scale")
def exact_partners():
    c = setup()
    fl, pairs = c["fleet"], c["pairs"]
    r = fleet("--workers=2", "--csv", "--report=partners", "--top=%d" % TOP, *c["contents"])
    if not check(r.returncode == 0, "partners: exit 0", r.stderr[-300:]):
        return
    exp = [(h, p, rank + 1, sp, sv * PAGE, 0) for h, top in true_top(fl, pairs, TOP).items()
           for rank, (p, sp, sv) in enumerate(top)]
    got = [(x["host"], x["partner"], int(x["rank"]), int(x["shared_pages"]),
            int(x["saved_bytes"]), int(x["error_bytes"])) for x in rows(r.stdout)]
    eq(got, exp, "partners --top=%d from contents: every host's best, exact" % TOP)


# --- sketches: the candidate step's recall and the estimates ------------------------

def specific_pairs(fl, pairs):
    """The pairs that share more than the fleet-wide contents and their image:
    cluster mates and the pairs with contents of their own."""
    base = {}
    for (a, b), (s, _, _, _) in pairs.items():
        same_image = int(a[4:]) % 3 == int(b[4:]) % 3
        base[(a, b)] = s > 301 + (1500 if same_image else 0)   # kernel, zero page, image
    return {p for p, v in base.items() if v}


@test("fleet-scale")
def sketch_recall():
    """From sketches of 4096: the candidate step finds at least 95% of the
    pairs sharing contents of their own; the estimates are within their
    bound; at least 95% of the true top partners are found."""
    c = setup()
    fl, pairs = c["fleet"], c["pairs"]
    check(all(len(v) > SKETCH for v in fl.values()), "every host is larger than its sketch")
    r = fleet("--workers=2", "--csv", "--report=pairs", *c["sketch"])
    if not check(r.returncode == 0, "sketch pairs: exit 0", r.stderr[-300:]):
        return
    got = {(x["host_a"], x["host_b"]): x for x in rows(r.stdout)}
    want = specific_pairs(fl, pairs)
    found = sum(1 for a, b in want if (a, b) in got or (b, a) in got)
    check(found >= 0.95 * len(want), "candidate recall %d of %d pairs sharing contents of "
          "their own (>= 95%%)" % (found, len(want)))
    check(len(got) < len(pairs) / 2, "not every pair is a candidate (%d of %d)"
          % (len(got), len(pairs)))
    inside = sum(abs(int(x["saved_together_bytes"]) - truth(pairs, a, b)[3] * PAGE)
                 <= int(x["saved_together_error"]) for (a, b), x in got.items())
    check(inside >= 0.97 * len(got), "estimates within their bound: %d of %d" % (inside, len(got)))
    r = fleet("--workers=2", "--csv", "--report=partners", "--top=%d" % TOP, *c["sketch"])
    if not check(r.returncode == 0, "sketch partners: exit 0", r.stderr[-300:]):
        return
    best = true_top(fl, pairs, TOP)
    hits = 0
    for x in rows(r.stdout):
        # Partners within 1% of the n-th best are as good: the zero page
        # alone makes image mates differ by one page, which no sample orders.
        nth = best[x["host"]][-1][2]
        hits += truth(pairs, x["host"], x["partner"])[3] >= 0.99 * nth
    check(hits >= 0.95 * TOP * len(fl), "recall of the true top %d partners: %d of %d (>= 95%%)"
          % (TOP, hits, TOP * len(fl)))


# --- placement ------------------------------------------------------------------------

def bins_saving(fl, bins):
    total = 0
    for hosts in bins:
        merged = {}
        for h in hosts:
            for d, n in fl[h].items():
                merged[d] = merged.get(d, 0) + n
        total += sum(saved(n, d == ZERO) for d, n in merged.items())
    return total


def oracle_greedy(fl, pairs, cap, first_fit=False):
    """Hosts by decreasing size into the bin with room where the sum of their
    pairwise savings is largest, then the fullest, then the first (or, for
    first-fit, the first bin with room)."""
    size = {h: sum(c.values()) for h, c in fl.items()}
    names = list(fl)
    bins = []
    for h in sorted(names, key=lambda h: (-size[h], names.index(h))):
        best = None
        for i, b in enumerate(bins):
            used = sum(size[o] for o in b)
            if used + size[h] > cap:
                continue
            if first_fit:
                best = (None, i)
                break
            g = sum(truth(pairs, h, o)[3] for o in b)
            if best is None or (g, used) > best[0]:
                best = ((g, used), i)
        if best is None:
            bins.append([])
            best = (None, len(bins) - 1)
        bins[best[1]].append(h)
    return bins


@test("fleet-scale")
def placement_from_partners():
    """Placement from the top partners: each machine's saved_bytes exact,
    within capacity, and more saved than first-fit and the exact greedy
    placement (every pair's saving known) of the same rule."""
    c = setup()
    fl, pairs = c["fleet"], c["pairs"]
    cap = 4 * max(sum(v.values()) for v in fl.values())
    r = fleet("--workers=2", "--csv", "--report=placement", "--capacity=%d" % cap,
              "--top=%d" % TOP, *c["contents"])
    if not check(r.returncode == 0, "placement: exit 0", r.stderr[-300:]):
        return
    bins = {}
    for x in rows(r.stdout):
        if x["host"] != "*":
            bins.setdefault(x["bin"], []).append(x["host"])
    eq(sorted(h for b in bins.values() for h in b), sorted(fl), "placement: every host once")
    machines = [x for x in rows(r.stdout) if x["host"] == "*"]
    eq(sorted(x["bin"] for x in machines), sorted(bins), "placement: one machine row a bin")
    for x in machines:
        eq(int(x["saved_bytes"]), bins_saving(fl, [bins[x["bin"]]]) * PAGE,
           "placement: saved_bytes of bin %s exact" % x["bin"])
    for b, hosts in bins.items():
        check(sum(sum(fl[h].values()) for h in hosts) <= cap, "bin %s within capacity" % b)
    mine = bins_saving(fl, list(bins.values()))
    ff = bins_saving(fl, oracle_greedy(fl, pairs, cap, first_fit=True))
    exact = bins_saving(fl, oracle_greedy(fl, pairs, cap))
    check(mine > ff, "top %d partners save more than first-fit (%d > %d pages)" % (TOP, mine, ff))
    check(mine >= exact, "top %d partners save at least the exact greedy's (%d >= %d pages)"
          % (TOP, mine, exact))


# --- a real cluster --------------------------------------------------------------------

@test("fleet-scale")
def real_cluster():
    """`dask scheduler` and two `dask worker` processes on 127.0.0.1, started
    here (fleet/ksmfleet/loopback.py): ksmfleet --scheduler gives the partners the
    oracle gives, and the processes are gone afterwards."""
    if not shutil.which("dask"):
        raise Skip("no dask command (python3-distributed)")
    c = setup()
    folder = tmp("cluster")
    os.makedirs(folder)
    cluster = Loopback(2, folder)
    with cluster as addr:
        check(addr.startswith("tcp://127.0.0.1:"), "the scheduler listens on 127.0.0.1", addr)
        r = fleet("--scheduler=" + addr, "--csv", "--report=partners", "--top=3",
                  *c["contents"], timeout=300)
        if check(r.returncode == 0, "partners on the real cluster: exit 0", r.stderr[-300:]):
            exp = [(h, p, rank + 1, sv * PAGE) for h, top in
                   true_top(c["fleet"], c["pairs"], 3).items()
                   for rank, (p, sp, sv) in enumerate(top)]
            eq([(x["host"], x["partner"], int(x["rank"]), int(x["saved_bytes"]))
                for x in rows(r.stdout)], exp, "partners from the real cluster: the oracle's")
        workers = set(re.findall(r"Start worker at:\s+(\S+)", cluster.log("worker.log")))
        check(len(workers) == 2 and all(w.startswith("tcp://127.0.0.1:") for w in workers),
              "two workers on 127.0.0.1", repr(workers))
    check(cluster.stopped(), "the scheduler and workers are gone")


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-fleet-scale-"))
