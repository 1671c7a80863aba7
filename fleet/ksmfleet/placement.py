"""Placement: hosts onto machines of --capacity pages (before merging), so
that KSM saves the most.

- Up to EXACT_HOSTS hosts (8 by default): the optimum. The saving of every
  set of hosts on one KSM is computed exactly from their contents (for n
  hosts, 2^n sums per content, on the workers), then the best partition
  into machines by dynamic programming over sets (3^n steps: the set
  holding the first host left, with the best of the rest), ties to fewer
  machines.
- Larger fleets: from the best pairs. Each host starts alone; the two
  machines whose hosts gain most together (the sum of their partners'
  pairwise savings, known from each host's --top partners) are joined
  while they fit, best first, the gains of the joined machine with the
  others summed again (a heap with stale entries skipped). Then machines
  that gained nothing together are packed first-fit, largest first, to
  use fewer machines (KSM's saving on one host is never less than on two).
- first-fit (--placement=first-fit): largest host first into the first
  machine with room, sharing ignored: the baseline the others beat.

A host larger than the capacity gets a machine of its own (with a
warning). Every machine's saving is then counted exactly from its hosts'
contents, grouped by digest.
"""
import heapq
import sys

import numpy as np
import pandas as pd

from . import model, reports
from .pairs import by_digest
from .output import Writer, shown

EXACT_HOSTS = 8
EXACT_MAX = 12          # 3^12 steps: the exact search's largest fleet
CHUNK = 1 << 15         # contents per product in subset_part


def subset_part(df, n, m, z):
    """In one partition of the shuffle by digest: the saved pages of each
    set (bit mask) of the @n hosts, summed over its contents."""
    out = np.zeros(1 << n, dtype=np.int64)
    if len(df):
        gid = df.groupby(["key", "lo"], sort=False).ngroup().to_numpy()
        c = np.zeros((gid.max() + 1, n), dtype=np.int64)
        np.add.at(c, (gid, df["h"].to_numpy()), df["pages"].to_numpy())
        zero = np.zeros(len(c), dtype=bool)
        zero[gid[df["zero"].to_numpy() > 0]] = True
        bits = (np.arange(1 << n)[None, :] >> np.arange(n)[:, None]) & 1
        for s in range(0, len(c), CHUNK):
            sums = c[s:s + CHUNK] @ bits
            out += model.saved_pages(sums, zero[s:s + CHUNK, None], m, z).sum(axis=0)
    return pd.DataFrame({"mask": np.arange(1 << n), "saved": out})


def subset_savings(f, n, a):
    """saved[mask]: the pages KSM saves on the hosts of @mask together."""
    parts = f[["h", "key", "lo", "pages", "zero"]].shuffle("key", npartitions=f.npartitions)
    meta = pd.DataFrame({"mask": pd.Series(dtype=np.int64), "saved": pd.Series(dtype=np.int64)})
    per = parts.map_partitions(subset_part, n, a.max_page_sharing, a.use_zero_pages, meta=meta)
    t = per.groupby("mask")["saved"].sum().compute()
    return [int(t.get(mask, 0)) for mask in range(1 << n)]


def exact_bins(pages, saved, capacity):
    """The partition of the hosts into machines with the most saved pages
    (then the fewest machines): [machine of each host]."""
    n = len(pages)
    size = [sum(pages[i] for i in range(n) if mask >> i & 1) for mask in range(1 << n)]
    best = {0: (0, 0, ())}          # mask -> (saved, -machines, machines)

    def solve(rest):
        if rest in best:
            return best[rest]
        low = rest & -rest
        others = rest ^ low
        top = None
        sub = others
        while True:         # every set of the others, with the first host
            block = sub | low
            if size[block] <= capacity or block == low:
                s, k, blocks = solve(rest ^ block)
                cand = (s + saved[block], k - 1, (block,) + blocks)
                if top is None or cand[:2] > top[:2]:
                    top = cand
            if not sub:
                break
            sub = (sub - 1) & others
        best[rest] = top
        return top

    where = [0] * n
    for b, block in enumerate(solve((1 << n) - 1)[2]):
        for i in range(n):
            if block >> i & 1:
                where[i] = b
    return where


class Machines:
    """Machines of hosts, joined by their gains (pair_bins)."""

    def __init__(self, pages, gain):
        self.size = list(pages)
        self.hosts = {i: [i] for i in range(len(pages))}
        self.links = {i: dict(gain.get(i, {})) for i in range(len(pages))}
        self.version = [0] * len(pages)
        self.heap = []
        for a, nb in self.links.items():
            for b, g in nb.items():
                if a < b and g > 0:
                    self.heap.append((-g, a, b, 0, 0))
        heapq.heapify(self.heap)

    def join(self, a, b):
        """Machine @b's hosts onto @a; @a's gains with the others summed
        (the machines that had a gain with @b now have it with @a)."""
        for x, g in self.links.pop(b).items():
            if x == a:
                continue
            self.links[a][x] = self.links[a].get(x, 0) + g
            nb = self.links[x]
            nb[a] = nb.get(a, 0) + nb.pop(b, 0)
        self.links[a].pop(b, None)
        self.links[a].pop(a, None)
        self.hosts[a] += self.hosts.pop(b)
        self.size[a] += self.size[b]
        self.version[a] += 1
        self.version[b] = -1
        for x, g in self.links[a].items():
            if g > 0:
                heapq.heappush(self.heap, (-g, min(a, x), max(a, x),
                                           self.version[min(a, x)], self.version[max(a, x)]))

    def run(self, capacity):
        while self.heap:
            g, a, b, va, vb = heapq.heappop(self.heap)
            if self.version[a] != va or self.version[b] != vb:
                continue                    # stale: a or b changed since
            if self.size[a] + self.size[b] <= capacity:
                self.join(a, b)
        return list(self.hosts.values())


def first_fit(groups, sizes, capacity):
    """Groups of hosts into machines, largest first, each into the first
    machine with room (a new one when none has): [[hosts of a machine]]."""
    bins, used = [], []
    for g in sorted(range(len(groups)), key=lambda i: (-sizes[i], min(groups[i]))):
        for b in range(len(bins)):
            if used[b] + sizes[g] <= capacity:
                bins[b] += groups[g]
                used[b] += sizes[g]
                break
        else:
            bins.append(list(groups[g]))
            used.append(sizes[g])
    return bins


def as_where(bins, n):
    where = [0] * n
    for b, hosts in enumerate(bins):
        for h in hosts:
            where[h] = b
    return where


def pair_bins(pages, gain, capacity):
    """From the best pairs (see the module's note): [machine of each host]."""
    joined = Machines(pages, gain).run(capacity)
    sizes = [sum(pages[h] for h in g) for g in joined]
    return as_where(first_fit(joined, sizes, capacity), len(pages))


def bin_savings(df, bins, m, z):
    """In one partition of pairs.by_digest() (every row of a digest is
    here): the pages saved per machine, its hosts' contents grouped by
    digest."""
    d = df.assign(bin=bins[df["h"].to_numpy()])
    g = d.groupby(["bin", "key", "lo"], sort=False).agg({"pages": "sum", "zero": "max"})
    s = model.saved_pages(g["pages"].to_numpy(), g["zero"].to_numpy() > 0, m, z)
    return pd.Series(s, index=g.index.get_level_values("bin")).groupby(level=0).sum()


def bin_sums(parts):
    per = pd.concat(parts)
    return per.groupby(level=0).sum() if len(per) else per


def machine_savings(shuffled, where, a):
    """{machine: saved pages}, exact: its hosts' contents grouped by digest
    (@shuffled: pairs.by_digest() of the contents)."""
    import dask
    m, z = a.max_page_sharing, a.use_zero_pages
    bins = dask.delayed(np.array(where, dtype=np.int64), pure=True)
    parts = shuffled.to_delayed()
    per = dask.compute(dask.delayed(bin_sums)([dask.delayed(bin_savings)(p, bins, m, z)
                                               for p in parts]))[0]
    return {int(b): int(s) for b, s in per.items()}


def method(a, n):
    if a.placement == "auto":
        return "exact" if n <= EXACT_HOSTS else "pairs"
    if a.placement == "exact" and n > EXACT_MAX:
        from .errors import Failure
        raise Failure("--placement=exact takes at most %d hosts, not %d" % (EXACT_MAX, n), 2)
    return a.placement


def place(f, shuffled, kind, hosts, pages, a):
    """[machine of each host], by the method asked for (@shuffled: the
    contents by digest, for the pairs)."""
    how = method(a, len(hosts))
    if how == "exact":
        return exact_bins(pages, subset_savings(f, len(hosts), a), a.capacity)
    if how == "first-fit":
        return as_where(first_fit([[h] for h in range(len(hosts))], pages, a.capacity),
                        len(hosts))
    return pair_bins(pages, reports.partner_gains(f, kind, hosts, a, shuffled), a.capacity)


def placement_report(f, kind, hosts, a, out):
    t = reports.host_table(f, a)
    pages = [int(t.at[i, "pages"]) for i in range(len(hosts))]
    for h, p in zip(hosts, pages):
        if p > a.capacity:
            print("ksmfleet: warning: host %s has %d pages, more than --capacity=%d: "
                  "it gets a machine of its own" % (shown(h), p, a.capacity), file=sys.stderr)
    shuffled = by_digest(f)       # the pairs' and the machines' savings
    where = place(f, shuffled, kind, hosts, pages, a)
    saved = machine_savings(shuffled, where, a)
    members = {}
    for i, b in enumerate(where):
        members.setdefault(b, []).append(i)
    order = sorted(members, key=lambda b: (-saved.get(b, 0), -sum(pages[i] for i in members[b]),
                                           min(members[b])))
    w = Writer(["host", "bin", "pages", "saved_bytes"], out, names=["host"])
    rows = []
    for n, b in enumerate(order):
        inside = sorted(members[b], key=lambda i: (-pages[i], i))
        rows.append(["*", n, sum(pages[i] for i in inside), saved.get(b, 0) * model.PAGE])
        rows += [[hosts[i], n, pages[i], None] for i in inside]
    w.rows(rows)
    w.close()
