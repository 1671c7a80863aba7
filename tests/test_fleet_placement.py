#!/usr/bin/python3
"""ksmfleet --report=placement against a brute-force optimum written here.

Fleets of 4 to 8 hosts are made as contents exports (digests the test
draws, each host's pages known to it), in shapes where placing the largest
hosts first, sharing ignored (first-fit), is wrong: hosts of one size that
share nothing, each sharing much with a smaller one; a host sharing with
two others of which only one fits; many small hosts and one large. The
oracle enumerates every partition of the hosts into machines within the
capacity (restricted growth strings) and counts each machine's saving
with KSM's grouping (ksmtest.ksm_group) over the contents of its hosts.

Checked: ksmfleet's total saving equals the optimum, every machine is
within the capacity, its `*` row's pages and saved_bytes are its hosts'
(the oracle's count), host rows carry no saving, every host once; the
oracle's first-fit saves less (the fleet is one where it is wrong), and
--placement=first-fit equals the oracle's first-fit. Past 8 hosts
(--placement=pairs, the default there) the two hosts that share most go
together when they fit, and the saving is between first-fit's and the
optimum's. In the fleet "trap" joining the best pair first is wrong too
(it saves 63 pages of 82): there only the exact search finds the optimum.
"""
import csv, io, os, random, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import check, eq, ksm_group, run_suite, test, tmp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLEET = [os.path.join(ROOT, "fleet", "bin", "ksmfleet")]
PAGE = 4096


def digest(i):
    return "0x%032x" % ((0x9e3779b97f4a7c15f39cc0605cedc835 * (i + 7)) % 2**128)


class Fleet:
    """Hosts as {content id: pages}; contents of one id are equal pages."""

    def __init__(self, name):
        self.name, self.hosts, self.next, self.memo = name, {}, 1000, {}

    def host(self, name, own, shared=()):
        """A host with @own pages of its own (distinct, some doubled) and
        @shared: (content ids, pages each)."""
        c = {}
        for i in range(own):
            self.next += 1
            c[self.next] = 1 + (i % 5 == 0)
        for ids, n in shared:
            for i in ids:
                c[i] = c.get(i, 0) + n
        self.hosts[name] = c

    def pages(self, h):
        return sum(self.hosts[h].values())

    def saving(self, hosts):
        """Pages KSM saves with @hosts on one machine (no zero page here)."""
        key = frozenset(hosts)
        if key not in self.memo:
            self.memo[key] = self.count(hosts)
        return self.memo[key]

    def count(self, hosts):
        total = {}
        for h in hosts:
            for i, n in self.hosts[h].items():
                total[i] = total.get(i, 0) + n
        return sum(ksm_group(n, 256)[1] for n in total.values())

    def export(self):
        path = tmp(self.name + ".csv")
        with open(path, "w", newline="") as f:
            f.write("input,digest,pages,zero,host\r\n")
            for h, c in self.hosts.items():
                for i in sorted(c, key=digest):
                    f.write("pid:1,%s,%d,0,%s\r\n" % (digest(i), c[i], h))
        return path


def partitions(items):
    """Every partition of @items into blocks (restricted growth strings)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in partitions(rest):
        yield [[first]] + p
        for i in range(len(p)):
            yield p[:i] + [[first] + p[i]] + p[i + 1:]


def optimum(fl, cap):
    best = None
    for p in partitions(list(fl.hosts)):
        if all(sum(fl.pages(h) for h in b) <= cap or len(b) == 1 for b in p):
            s = sum(fl.saving(b) for b in p)
            best = s if best is None else max(best, s)
    return best


def first_fit(fl, cap):
    bins = []
    for h in sorted(fl.hosts, key=lambda h: -fl.pages(h)):
        for b in bins:
            if sum(fl.pages(x) for x in b) + fl.pages(h) <= cap:
                b.append(h)
                break
        else:
            bins.append([h])
    return sum(fl.saving(b) for b in bins)


def ids(start, n):
    return range(start, start + n)


def wrong_capacities(fl, most=2):
    """Up to @most capacities (from the largest host to the whole fleet)
    where first-fit saves less than the optimum."""
    sizes = [fl.pages(h) for h in fl.hosts]
    out, step = [], max(1, (sum(sizes) - max(sizes)) // 60)
    for cap in range(max(sizes), sum(sizes), step):
        if first_fit(fl, cap) < optimum(fl, cap):
            out.append(cap)
            if len(out) == most:
                break
    return out


def shapes():
    """Fleets where first-fit is wrong at some capacity."""
    out = []
    f = Fleet("twins")         # equal large hosts sharing nothing, each with a small mate
    f.host("big-a", 60, [(ids(1, 30), 1)])
    f.host("big-b", 60, [(ids(100, 30), 1)])
    f.host("mate-a", 5, [(ids(1, 30), 2)])
    f.host("mate-b", 5, [(ids(100, 30), 2)])
    out.append(f)
    f = Fleet("chooser")       # one host shares with two; only one fits beside it
    f.host("hub", 40, [(ids(1, 40), 1), (ids(200, 10), 1)])
    f.host("strong", 20, [(ids(1, 40), 1)])
    f.host("weak", 45, [(ids(200, 10), 1)])
    f.host("lone-1", 55)
    f.host("lone-2", 30)
    out.append(f)
    f = Fleet("trap")          # the best pair keeps two good pairs apart
    f.host("a", 20, [(ids(1, 30), 1), (ids(50, 27), 1)])
    f.host("b", 20, [(ids(1, 30), 1), (ids(90, 27), 1)])
    f.host("c", 43, [(ids(50, 27), 1)])
    f.host("d", 43, [(ids(90, 27), 1)])
    f.host("e", 10, [(ids(50, 5), 1)])
    out.append(f)
    rng = random.Random(37)
    for n in (6, 7, 8):
        f = Fleet("random%d" % n)
        pools = [ids(500 + 100 * k, 60) for k in range(3)]
        for h in range(n):
            pool = pools[h % 3]
            f.host("h%d" % h, rng.randrange(20, 90),
                   [(pool[:rng.randrange(10, 60)], rng.randrange(1, 3))])
        out.append(f)
    f = Fleet("crowd")         # many small hosts and one large that shares little
    f.host("large", 150, [(ids(900, 5), 1)])
    for h in range(5):
        f.host("small-%d" % h, 20, [(ids(700, 25), 1), (ids(900, 5), 1)])
    out.append(f)
    return out


def place(path, cap, *extra):
    r = subprocess.run(FLEET + ["--workers=1", "--csv", "--report=placement",
                                "--capacity=%d" % cap] + list(extra) + [path],
                       capture_output=True, text=True, timeout=600)
    if r.returncode:
        return None, r.stderr.strip()[-300:]
    return list(csv.DictReader(io.StringIO(r.stdout, newline=""))), ""


def machines(rows):
    """{bin: (the * row, [hosts])}, and whether host rows have no saving."""
    out, bare = {}, True
    for x in rows:
        m = out.setdefault(x["bin"], [None, []])
        if x["host"] == "*":
            m[0] = x
        else:
            m[1].append(x["host"])
            bare &= x["saved_bytes"] == ""
    return out, bare


def check_machines(fl, cap, rows, what):
    """Every host once, machines within capacity, each * row its hosts'
    pages and the oracle's saving: the total saved pages."""
    ms, bare = machines(rows)
    eq(sorted(h for _, hs in ms.values() for h in hs), sorted(fl.hosts), what + ": every host once")
    check(bare, what + ": host rows carry no saving (it is the machine's)")
    total = 0
    for b, (star, hs) in ms.items():
        pages = sum(fl.pages(h) for h in hs)
        check(pages <= cap or len(hs) == 1, "%s: machine %s within --capacity" % (what, b),
              "%d pages" % pages)
        if not check(star is not None, "%s: machine %s has its * row" % (what, b)):
            continue
        eq((int(star["pages"]), int(star["saved_bytes"])), (pages, fl.saving(hs) * PAGE),
           "%s: machine %s's * row: its hosts' pages and saving" % (what, b))
        total += int(star["saved_bytes"]) // PAGE
    return total


@test("placement")
def equals_the_optimum():
    for fl in shapes():
        caps = wrong_capacities(fl)
        check(caps, "%s: first-fit is wrong at some capacity" % fl.name)
        path = fl.export()
        for cap in caps:
            placed(fl, path, cap)


def placed(fl, path, cap):
    """ksmfleet's placement of @fl at @cap: the optimum; first-fit's as the
    oracle's first-fit."""
    best, ff = optimum(fl, cap), first_fit(fl, cap)
    what = "%s (%d hosts, capacity %d)" % (fl.name, len(fl.hosts), cap)
    rows, err = place(path, cap)
    if check(rows is not None, what + ": placement runs", err):
        eq(check_machines(fl, cap, rows, what), best,
           what + ": the saving is the brute-force optimum (first-fit's: %d)" % ff)
    rows, err = place(path, cap, "--placement=first-fit")
    if check(rows is not None, what + ": first-fit runs", err):
        eq(check_machines(fl, cap, rows, what + " first-fit"), ff,
           what + ": --placement=first-fit saves what the oracle's first-fit does")


@test("placement")
def larger_fleets_keep_the_best_pair():
    rng = random.Random(41)
    fl = Fleet("eleven")
    for h in range(11):
        fl.host("n%02d" % h, rng.randrange(30, 60), [(ids(3000 + 50 * (h % 4), 40), 1)])
    fl.host("pair-a", 50, [(ids(8000, 60), 2)])
    fl.host("pair-b", 50, [(ids(8000, 60), 2)])
    cap = 400
    path = fl.export()
    rows, err = place(path, cap)
    if not check(rows is not None, "12 hosts: placement runs", err):
        return
    total = check_machines(fl, cap, rows, "12 hosts")
    ms, _ = machines(rows)
    check(any("pair-a" in hs and "pair-b" in hs for _, hs in ms.values()),
          "12 hosts: the pair that shares most is on one machine")
    check(first_fit(fl, cap) <= total, "12 hosts: at least first-fit's saving",
          "%d < %d" % (total, first_fit(fl, cap)))


@test("placement")
def pairs_on_clustered_fleets():
    """--placement=pairs on fleets of clusters (hosts sharing contents of
    their own, each sharing with several others): many joins of machines
    that already hold several hosts; every machine within capacity and its
    saving exact, more saved than first-fit, never more than the optimum
    where it is known."""
    for seed, n in ((5, 8), (6, 24), (7, 40)):
        rng = random.Random(seed)
        fl = Fleet("clusters%d" % n)
        for h in range(n):
            c = h % max(2, n // 4)
            fl.host("c%d-h%02d" % (c, h), rng.randrange(10, 40),
                    [(ids(20000 + 200 * c, rng.randrange(20, 60)), 1),
                     (ids(40000 + 100 * (h % 3), 15), 1)])
        sizes = sorted(fl.pages(h) for h in fl.hosts)
        cap = sum(sizes[-5:])
        rows, err = place(fl.export(), cap, "--placement=pairs", "--top=%d" % n)
        if not check(rows is not None, "%s: pairs runs" % fl.name, err):
            continue
        got = check_machines(fl, cap, rows, fl.name + " pairs")
        check(got > first_fit(fl, cap), "%s: pairs saves more than first-fit (%d, %d)"
              % (fl.name, got, first_fit(fl, cap)))
        if n <= 8:
            check(got <= optimum(fl, cap), "%s: never more than the optimum" % fl.name)


@test("placement")
def bad_method():
    fl = Fleet("m")
    for h in range(13):
        fl.host("x%d" % h, 3)
    r = subprocess.run(FLEET + ["--workers=1", "--report=placement", "--capacity=10",
                                "--placement=exact", fl.export()],
                       capture_output=True, text=True, timeout=300)
    err = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(err) == 1 and "at most 12 hosts" in err[0],
          "--placement=exact past 12 hosts: one line, exit 2", r.stderr[-300:])


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-fleet-placement-"))
