"""Pairs of hosts that share, without the n^2 pairs of the fleet.

Exact exports: an inverted index (content -> the hosts holding it) is a
Dask shuffle by digest; each partition turns a content held by at most
`common` hosts into its pairs of hosts. A content held by more hosts (the
zero page, common kernel text) makes no pairs: its rows are kept per host,
and the figures of every pair found the other way get its part added,
exactly, in blocks of hosts (below). A pair that shares only such contents
is not listed; each of them adds one to its shared_contents and at most one
page to its saved_together (model.together is 0 or 1 for a content not
merged into the zero page).

Sketches: candidate pairs by locality-sensitive hashing of the bottom-k
sketches: for each of BANDS hash functions, a host's minimum over its
sketch is a bucket (one row a band: the chance that two hosts meet in a
band is the Jaccard similarity of their sketches); a bucket of at most
FULL hosts pairs them all, a larger one (hosts of one image, the zero page)
pairs each host with the RING next in an order drawn per bucket. Then the
estimate with its bound for the candidates only.

Blocks: the hosts are cut into groups; the pairs of groups i <= j are one
task, which gets the pairs and the two groups' rows, so that no process
ever holds more than two groups of hosts. When each host's rows are in one
partition of the exports (an export is cut only past 64 MiB), the
partitions are the groups (partition_blocks): no row moves, and a group's
rows are prepared once (its sketches sorted, its common contents
numbered). Else the groups are host number mod G, the rows shuffled to
them (in_blocks).

Contents are shuffled by digest once per run (by_digest: the digest's
first 64 bits modulo the partitions), and placement's machines' savings
are counted on the same shuffled rows, passed to both.
"""
import math

import numpy as np
import pandas as pd

from . import model
from .read import ZERO_KEY

BANDS = 64
FULL = 16
RING = 2
GROUP_HOSTS = 256
CHUNK = 1 << 15          # keys hashed at a time by signatures()
BATCH = 16               # blocks' results per partition (partition_blocks)
PAIR_COLS = ["a", "b", "shared", "pages_a", "pages_b", "saved", "shared_err", "saved_err"]
SEEDS = np.random.default_rng(0x6b736d).integers(1, 2**63, size=2 * BANDS,
                                                 dtype=np.int64).astype(np.uint64)


def frame_of(cols, types=np.int64):
    return pd.DataFrame({c: pd.Series(dtype=types) for c in cols})


def mix(x):
    """A 64-bit mixer (splitmix64's finaliser): a hash function of x."""
    with np.errstate(over="ignore"):
        x = np.asarray(x, dtype=np.uint64)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xbf58476d1ce4e5b9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94d049bb133111eb)
        return x ^ (x >> np.uint64(31))


# --- exact pairs from contents ----------------------------------------------------

def holders(df):
    return df.groupby(["key", "lo"])["h"].transform("size")


def specific_pairs(df, common, m, z, with_common=False):
    """In one partition of the shuffle (every row of a digest is here): per
    pair of hosts, what the contents held by at most @common hosts give.
    The rows sorted by digest, each row of a content of 2 to @common rows
    paired with the rows after it (the host numbered lower is a). With
    @with_common, also the digests (key, lo) held by more hosts."""
    key, lo = df["key"].to_numpy(), df["lo"].to_numpy()
    order = np.lexsort((lo, key))
    key, lo = key[order], lo[order]
    h, pages = df["h"].to_numpy()[order], df["pages"].to_numpy()[order]
    zero = df["zero"].to_numpy()[order]
    n = len(key)
    new = np.ones(n, dtype=bool)
    new[1:] = (key[1:] != key[:-1]) | (lo[1:] != lo[:-1])
    gid = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    sizes = np.diff(np.append(starts, n))
    size = sizes[gid]
    after = np.where(size <= common, size - 1 - (np.arange(n) - starts[gid]), 0)
    r = np.repeat(np.arange(n), after)
    j = r + 1 + np.arange(len(r)) - np.repeat(np.cumsum(after) - after, after)
    r, j = r[h[r] != h[j]], j[h[r] != h[j]]
    swap = h[r] > h[j]
    x, y = np.where(swap, j, r), np.where(swap, r, j)
    out = pd.DataFrame({"a": h[x], "b": h[y], "shared": np.ones(len(x), dtype=np.int64),
                        "pages_a": pages[x], "pages_b": pages[y],
                        "saved": gains(pages[x], pages[y], zero[x] > 0, m, z)})
    out = out.groupby(["a", "b"], as_index=False).sum()
    if not with_common:
        return out
    big = starts[sizes > common]
    return out, pd.DataFrame({"key": key[big], "lo": lo[big]})


def common_rows(df, common):
    return df[holders(df) > common][["h", "key", "lo", "pages", "zero"]]


def add_common(pairs, groups, m, z):
    """The pairs' figures with the part of the common contents both hold
    (@groups: the rows of the block's groups of hosts): per pair, one
    binary search of a's common contents in b's (numbered in digest order),
    or, if a host holds a digest twice, by merging the rows."""
    rows = pd.concat(groups, ignore_index=True)
    add = common_sums(pairs, rows, m, z)
    if add is None:
        x = pairs[["a", "b"]].merge(rows, left_on="a", right_on="h")
        y = x.merge(rows, left_on=["b", "key", "lo"], right_on=["h", "key", "lo"])
        add = pd.DataFrame({"a": y["a"].to_numpy(), "b": y["b"].to_numpy(), "shared": 1,
                            "pages_a": y["pages_x"].to_numpy(),
                            "pages_b": y["pages_y"].to_numpy(),
                            "saved": model.together(y["pages_x"].to_numpy(),
                                                    y["pages_y"].to_numpy(),
                                                    y["zero_x"].to_numpy() > 0, m, z)})
    both = pd.concat([pairs[add.columns], add]).groupby(["a", "b"], as_index=False).sum()
    both["shared_err"] = 0
    both["saved_err"] = 0
    return both[PAIR_COLS].astype(np.int64)


def common_sums(pairs, rows, m, z):
    """Per pair: the common contents both hold, a's and b's pages in them
    and the pages saved together (a frame of pairs' columns), or None if a
    host has a digest twice."""
    if not len(pairs) or not len(rows):
        return pairs.iloc[:0][["a", "b", "shared", "pages_a", "pages_b", "saved"]]
    ids = rows.groupby(["key", "lo"], sort=True).ngroup().to_numpy()
    h = rows["h"].to_numpy()
    order = np.lexsort((ids, h))
    h, ids = h[order], ids[order]
    if ((h[1:] == h[:-1]) & (ids[1:] == ids[:-1])).any():
        return None
    pages, zero = rows["pages"].to_numpy()[order], rows["zero"].to_numpy()[order] > 0
    cut = np.flatnonzero(np.r_[True, h[1:] != h[:-1], True])
    span = {int(h[s]): (s, e) for s, e in zip(cut[:-1], cut[1:])}
    out = []
    for a, b in zip(pairs["a"].tolist(), pairs["b"].tolist()):
        if a not in span or b not in span:
            continue
        (sa, ea), (sb, eb) = span[a], span[b]
        ia, ib = ids[sa:ea], ids[sb:eb]
        pos = np.searchsorted(ib, ia)
        hit = np.flatnonzero(ib.take(pos, mode="clip") == ia)
        if not len(hit):
            continue
        xa, xb = pages[sa + hit], pages[sb + pos[hit]]
        f = gains(xa, xb, zero[sa + hit], m, z)
        out.append((a, b, len(hit), int(xa.sum()), int(xb.sum()), int(f.sum())))
    return pd.DataFrame(out, columns=["a", "b", "shared", "pages_a", "pages_b", "saved"],
                        dtype=np.int64)


def digest_split(df, n):
    """@df's rows cut into @n frames by digest (the key's first 64 bits
    modulo @n: uniform, digests being hashes)."""
    ind = (df["key"].to_numpy() % np.uint64(n)).astype(np.int16 if n < 1 << 15 else np.int64)
    order = np.argsort(ind, kind="stable")      # of int16: a radix sort
    cut = np.searchsorted(ind[order], np.arange(n + 1))
    d = df.iloc[order]
    return [d.iloc[cut[i]:cut[i + 1]] for i in range(n)]


def joined(parts):
    return pd.concat(parts, ignore_index=True)


def by_digest(f):
    """@f's rows (h, key, lo, pages, zero) shuffled by digest, all rows of
    a digest in one partition, as many partitions as @f; persisted on the
    workers. Made once per run and passed on (placement's pairs and its
    machines' savings both use it)."""
    import dask
    import dask.dataframe as dd
    cols = ["h", "key", "lo", "pages", "zero"]
    parts = f[cols].to_delayed()
    n = len(parts)
    cut = [dask.delayed(digest_split, nout=n)(p, n) for p in parts]
    out = [dask.delayed(joined)([c[j] for c in cut]) for j in range(n)]
    return dd.from_delayed(out, meta=f[cols]._meta, verify_meta=False).persist()


def common_digests(parts):
    """The digests (key, lo) held by more than @common hosts (from each
    partition of by_digest(), where all rows of a digest are), numbered in
    digest order (id)."""
    d = pd.concat(parts, ignore_index=True).drop_duplicates()
    d = d.iloc[np.lexsort((d["lo"].to_numpy(), d["key"].to_numpy()))]
    return d.assign(id=np.arange(len(d), dtype=np.int64))


def rows_of(df, digests):
    """@df's rows of @digests, with the digest's id (the keys compared
    first, at once)."""
    cols = ["h", "key", "lo", "pages", "zero"]
    df = df[np.isin(df["key"].to_numpy(), digests["key"].to_numpy())]
    return df[cols].merge(digests, on=["key", "lo"])[cols + ["id"]]


class CommonRows:
    """A group's rows of common contents: the rows, and per host its
    digests' ids in order with their pages and zero flags (dup: a host
    holds a digest twice, and then only the rows are used)."""

    def __init__(self, rows):
        self.rows = rows[["h", "key", "lo", "pages", "zero"]]
        h, ids = rows["h"].to_numpy(), rows["id"].to_numpy()
        order = np.lexsort((ids, h))
        h, self.ids = h[order], ids[order]
        self.dup = bool(((h[1:] == h[:-1]) & (self.ids[1:] == self.ids[:-1])).any())
        self.pages = rows["pages"].to_numpy()[order]
        self.zero = rows["zero"].to_numpy()[order] > 0
        cut = np.flatnonzero(np.r_[True, h[1:] != h[:-1], True]) if len(h) else [0]
        self.span = {int(h[s]): (s, e) for s, e in zip(cut[:-1], cut[1:])}


def add_common_rows(pairs, groups, m, z):
    """add_common() from CommonRows: the pairs' figures with the common
    contents both hold, by one binary search of a's ids in b's."""
    if any(g.dup for g in groups):
        return add_common(pairs, [g.rows for g in groups], m, z)
    out = []
    where = {}
    for g in groups:
        for h in g.span:
            where[h] = g
    for a, b in zip(pairs["a"].tolist(), pairs["b"].tolist()):
        ga, gb = where.get(a), where.get(b)
        if ga is None or gb is None:
            continue
        (sa, ea), (sb, eb) = ga.span[a], gb.span[b]
        ia, ib = ga.ids[sa:ea], gb.ids[sb:eb]
        pos = np.searchsorted(ib, ia)
        hit = np.flatnonzero(ib.take(pos, mode="clip") == ia)
        if not len(hit):
            continue
        xa, xb = ga.pages[sa + hit], gb.pages[sb + pos[hit]]
        f = gains(xa, xb, ga.zero[sa + hit], m, z)
        out.append((a, b, len(hit), int(xa.sum()), int(xb.sum()), int(f.sum())))
    add = pd.DataFrame(out, columns=["a", "b", "shared", "pages_a", "pages_b", "saved"],
                       dtype=np.int64)
    both = pd.concat([pairs[add.columns], add]).groupby(["a", "b"], as_index=False).sum()
    both["shared_err"] = 0
    both["saved_err"] = 0
    return both[PAIR_COLS].astype(np.int64)


def common_of(rows):
    return CommonRows(rows)


def pair_sums(parts):
    """The specific_pairs() of all partitions, summed per pair."""
    return pd.concat(parts, ignore_index=True).groupby(["a", "b"], as_index=False).sum()


def exact_pairs(f, parts, hosts, common, m, z):
    """Every pair that shares a content held by at most @common hosts, exact,
    from @parts (by_digest(@f)). When every host's rows are in one partition
    of @f, the partitions are the groups of hosts (partition_blocks): the
    common contents' rows are taken where they are, not shuffled; else by
    groups (in_blocks)."""
    import dask
    cols = ["h", "key", "lo", "pages", "zero"]
    owner = owners(f, hosts)
    if owner is None:
        spec = parts.map_partitions(specific_pairs, common, m, z,
                                    meta=frame_of(PAIR_COLS[:6]))
        spec = spec.groupby(["a", "b"]).sum(split_out=max(1, f.npartitions)).reset_index()
        com = parts.map_partitions(common_rows, common, meta=f[cols]._meta)
        return in_blocks(spec, com, hosts, add_common, m, z)
    both = [dask.delayed(specific_pairs, nout=2)(p, common, m, z, True)
            for p in parts.to_delayed()]
    spec = dask.delayed(pair_sums)([x[0] for x in both])
    digests = dask.delayed(common_digests)([x[1] for x in both])
    rows = [dask.delayed(common_of)(dask.delayed(rows_of)(p, digests)) for p in f.to_delayed()]
    return partition_blocks(spec, owner, rows, add_common_rows, m, z)


# --- candidates and estimates from sketches --------------------------------------

def mix_into(x, out, tmp):
    """mix(x) into @out (uint64 arrays of x's length; @tmp scratch), with
    no array made: the same values."""
    with np.errstate(over="ignore"):
        np.right_shift(x, np.uint64(30), out=tmp)
        np.bitwise_xor(x, tmp, out=out)
        np.multiply(out, np.uint64(0xbf58476d1ce4e5b9), out=out)
        np.right_shift(out, np.uint64(27), out=tmp)
        np.bitwise_xor(out, tmp, out=out)
        np.multiply(out, np.uint64(0x94d049bb133111eb), out=out)
        np.right_shift(out, np.uint64(31), out=tmp)
        np.bitwise_xor(out, tmp, out=out)
    return out


def by_host(df, cols):
    """@df's rows ordered by @cols (h first), sorted only if they are not
    already (the rows of a partition come host after host)."""
    h = df["h"].to_numpy()
    if len(cols) == 1:
        done = bool((h[1:] >= h[:-1]).all())
    else:
        k = df[cols[1]].to_numpy()
        done = bool(((h[1:] > h[:-1]) | ((h[1:] == h[:-1]) & (k[1:] >= k[:-1]))).all())
    return df if done else df.sort_values(cols)


def signatures(df):
    """Per host and band, the minimum of the band's hash over the sketch."""
    if not len(df):
        return frame_of(["h", "band", "value"], np.uint64).astype({"h": np.int64,
                                                                   "band": np.int64})
    df = by_host(df, ["h"])
    h = df["h"].to_numpy()
    starts = np.flatnonzero(np.r_[True, h[1:] != h[:-1]])
    keys = df["key"].to_numpy()
    mins = np.empty((BANDS, len(starts)), dtype=np.uint64)
    # hosts CHUNK keys at a time, all bands on each: the arrays stay in cache
    ends = np.append(starts[1:], len(keys))
    first = 0
    while first < len(starts):
        last = max(first + 1, int(np.searchsorted(ends, ends[first - 1] + CHUNK
                                                  if first else CHUNK, side="right")))
        lo, hi = starts[first], ends[last - 1]
        k = keys[lo:hi]
        at = starts[first:last] - lo
        x, out, tmp = np.empty_like(k), np.empty_like(k), np.empty_like(k)
        for band in range(BANDS):
            np.bitwise_xor(k, SEEDS[band], out=x)
            mins[band, first:last] = np.minimum.reduceat(mix_into(x, out, tmp), at)
        first = last
    hs = h[starts]
    return pd.DataFrame({"h": np.tile(hs, BANDS),
                         "band": np.repeat(np.arange(BANDS, dtype=np.int64), len(hs)),
                         "value": mins.ravel()})


def bucket_pairs(df):
    """Candidate pairs of one partition of buckets (every row of a bucket
    is here): all pairs of a bucket of at most FULL hosts, the RING next
    hosts in the bucket's own order in a larger one."""
    df = df.assign(order=mix(df["h"].to_numpy().astype(np.uint64) ^ df["bucket"].to_numpy()))
    df = df.sort_values(["bucket", "order"], kind="stable")
    size = df.groupby("bucket")["h"].transform("size")
    small = df[size <= FULL][["bucket", "h"]]
    j = small.merge(small, on="bucket")
    found = [j[["h_x", "h_y"]].to_numpy()]
    big = df[size > FULL]
    h, bucket = big["h"].to_numpy(), big["bucket"].to_numpy()
    for step in range(1, RING + 1):
        same = bucket[step:] == bucket[:-step]
        found.append(np.c_[h[:-step][same], h[step:][same]])
    pairs = np.concatenate(found)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    a, b = pairs.min(axis=1), pairs.max(axis=1)
    return pd.DataFrame({"a": a, "b": b}).drop_duplicates()


def sketch_candidates(f):
    sig = f[["h", "key"]].map_partitions(signatures, meta=signatures(f[["h", "key"]]._meta))
    sig = sig.groupby(["h", "band"])["value"].min(split_out=max(1, f.npartitions)).reset_index()
    sig = sig.assign(bucket=sig["value"].map_partitions(
        lambda v, b: pd.Series(mix(v.to_numpy() ^ SEEDS[BANDS + b.to_numpy()]), index=v.index),
        sig["band"], meta=("bucket", np.uint64)))
    parts = sig[["h", "bucket"]].shuffle("bucket", npartitions=max(1, sig.npartitions))
    cand = parts.map_partitions(bucket_pairs, meta=frame_of(["a", "b"]))
    return cand.drop_duplicates(split_out=max(1, f.npartitions))


def gains(xa, xb, zero, m, z):
    """model.together(), at once when every content is below m pages in
    both hosts together: then it is 1 (one more page shared), or 0 for the
    zero page with use_zero_pages."""
    if len(xa) and int(xa.max()) + int(xb.max()) < m:
        return (1 - (zero & bool(z))).astype(np.int64)
    return model.together(xa, xb, zero, m, z)


def estimate(sa, sb, m, z):
    """shared contents, pages of each host in them, saved pages, and the
    bounds on shared contents and saved pages (three standard errors), of
    two hosts from their bottom-k sketches (keys sorted, counts, distinct
    contents).

    The k smallest digests of the union of both sketches (k the smaller
    sketch) are a uniform sample of the union's contents, and for each of
    them both hosts' pages are known (a content among the k smallest of the
    union that a host holds is among that host's k smallest). With d_a, d_b
    the hosts' distinct contents and p the sampled fraction held by both,
    the union holds N = (d_a + d_b) / (1 + p) contents. Only the sampled
    contents both hold add to the sums: they are found by one binary search
    of a's keys in b's, and a key's place in the union is its place in a
    plus the keys of b below it, less the keys of both below it.
    """
    (ka, ca, da), (kb, cb, db) = sa, sb
    complete = len(ka) == da and len(kb) == db
    pos = np.searchsorted(kb, ka)
    # past the end (pos == len(kb)): kb's last key is below, not equal
    hit = np.flatnonzero(kb.take(pos, mode="clip") == ka) if len(kb) else pos[:0]
    n = len(ka) + len(kb) - len(hit) if complete else min(len(ka), len(kb))
    # a's key at i: i keys of a, pos of b, less those counted twice (the
    # keys of both below it: the hits before it)
    posb = pos[hit]
    keep = hit + posb - np.arange(len(hit)) < n
    if not keep.all():
        hit, posb = hit[keep], posb[keep]
    xa, xb = ca[hit], cb[posb]
    f = gains(xa, xb, ka[hit] == ZERO_KEY, m, z)
    shared, sa_, sb_, sf = len(xa), int(xa.sum()), int(xb.sum()), int(f.sum())
    if complete or not n:
        return [shared, sa_, sb_, sf, 0, 0]
    p = shared / n
    union_n = (da + db) / (1 + p)
    fpc = max(0.0, 1 - n / union_n)
    pt = (shared + 1) / (n + 2)     # no zero error when none is seen
    se_p = math.sqrt(pt * (1 - pt) / n * fpc)
    se_n = (da + db) / (1 + p) ** 2 * se_p
    mean = sf / n
    var = max(0.0, (float((f * f).sum()) - n * mean * mean) / (n - 1)) if n > 1 else 0.0
    se_mean = max(math.sqrt(var / n * fpc), se_p * max(1.0, float(f.max()) if shared else 0.0))
    se_saved = math.hypot(union_n * se_mean, mean * se_n)
    return [int(round(p * union_n)), int(round(union_n * sa_ / n)), int(round(union_n * sb_ / n)),
            int(round(union_n * mean)), int(math.ceil(3 * se_n)), int(math.ceil(3 * se_saved))]


def host_sketches(rows):
    """{host: (keys sorted, counts, distinct contents)} of a group's rows."""
    if not len(rows):
        return {}
    rows = by_host(rows, ["h", "key"])
    h = rows["h"].to_numpy()
    cut = np.flatnonzero(np.r_[True, h[1:] != h[:-1], True])
    k, c, d = rows["key"].to_numpy(), rows["pages"].to_numpy(), rows["distinct"].to_numpy()
    return {int(h[s]): (k[s:e], c[s:e], int(d[s])) for s, e in zip(cut[:-1], cut[1:])}


def estimate_block(pairs, groups, m, z):
    """The estimates of a block's pairs (@groups: host_sketches of its
    groups of hosts)."""
    sk = {h: v for g in groups for h, v in g.items()}
    out = []
    for a, b in zip(pairs["a"].to_numpy(), pairs["b"].to_numpy()):
        s, pa, pb, sv, es, esv = estimate(sk[a], sk[b], m, z)
        out.append((a, b, s, pa, pb, sv, es, esv))
    return pd.DataFrame(out, columns=PAIR_COLS, dtype=np.int64) if out else frame_of(PAIR_COLS)


def host_list(df):
    return pd.unique(df["h"].to_numpy())


def owners(f, hosts):
    """owner[h]: the partition of @f that holds all of host h's rows; None
    if a host's rows are in several (or there is no host)."""
    import dask
    lists = dask.compute(*[dask.delayed(host_list)(p) for p in f.to_delayed()])
    owner = np.full(max(hosts, 1), -1, dtype=np.int64)
    for n, hs in enumerate(lists):
        if (owner[hs] >= 0).any():
            return None
        owner[hs] = n
    return owner if hosts else None


def bucket_frame(sig):
    """The buckets of signatures (h, band, value), one row per host and band."""
    sig = sig.groupby(["h", "band"], as_index=False, sort=False)["value"].min()
    bucket = mix(sig["value"].to_numpy() ^ SEEDS[BANDS + sig["band"].to_numpy()])
    return pd.DataFrame({"h": sig["h"].to_numpy(), "bucket": bucket})


def all_candidates(sigs):
    """All candidate pairs from the partitions' signatures, at once (64 rows
    a host: 640,000 rows for 10,000 hosts)."""
    return bucket_pairs(bucket_frame(pd.concat(sigs, ignore_index=True)))


def sketch_pairs(f, hosts, m, z):
    """Candidates and estimates. When every host's rows are in one partition
    of @f (a sketch export is cut only past 64 MiB), the partitions are the
    groups of hosts (partition_blocks): no row is shuffled, the signatures
    and the sorted sketches are made where the rows are; else by groups of
    hosts (in_blocks)."""
    import dask
    owner = owners(f, hosts)
    if owner is None:
        return in_blocks(sketch_candidates(f), f[["h", "key", "pages", "distinct"]], hosts,
                         estimate_block, m, z, prepare=host_sketches)
    parts = f.to_delayed()        # the columns taken by name: no copy of them
    cand = dask.delayed(all_candidates)([dask.delayed(signatures)(p) for p in parts])
    sk = [dask.delayed(host_sketches)(p) for p in parts]
    return partition_blocks(cand, owner, sk, estimate_block, m, z)


# --- blocks of hosts ----------------------------------------------------------------

def groups_of(hosts):
    return max(1, -(-hosts // GROUP_HOSTS))


def tri(i, j, g):
    """The number of the block of groups i <= j."""
    return i * g - i * (i - 1) // 2 + (j - i)


def pair_block(df, g):
    ga, gb = df["a"].to_numpy() % g, df["b"].to_numpy() % g
    i, j = np.minimum(ga, gb), np.maximum(ga, gb)
    return df.assign(blk=tri(i, j, g))


def split_blocks(pairs, owner):
    """{(i, j): the pairs whose hosts are in partitions i <= j}."""
    if not len(pairs):
        return {}
    a, b = pairs["a"].to_numpy(), pairs["b"].to_numpy()
    pa, pb = owner[a], owner[b]
    i, j = np.minimum(pa, pb), np.maximum(pa, pb)
    order = np.lexsort((b, a, j, i))
    pairs, i, j = pairs.iloc[order], i[order], j[order]
    cut = np.flatnonzero(np.r_[True, (i[1:] != i[:-1]) | (j[1:] != j[:-1]), True])
    return {(int(i[s]), int(j[s])): pairs.iloc[s:e].reset_index(drop=True)
            for s, e in zip(cut[:-1], cut[1:])}


def block_of(blocks, key):
    return blocks[key]


def partition_blocks(pairs, owner, groups, fn, m, z):
    """fn(pairs of a block, [its groups], m, z) for every pair of partitions
    i <= j that has pairs (@groups: a value per partition of the rows, its
    hosts'; @pairs: one Delayed frame, small: a few dozen pairs a host): a
    Dask frame of PAIR_COLS."""
    import dask
    import dask.dataframe as dd
    blocks = dask.delayed(split_blocks)(pairs, dask.delayed(owner, pure=True)).persist()
    keys = dask.compute(dask.delayed(sorted)(dask.delayed(list)(blocks)))[0]
    out = [dask.delayed(fn)(dask.delayed(block_of)(blocks, (i, j)),
                            [groups[i]] if i == j else [groups[i], groups[j]], m, z)
           for i, j in keys]
    if not out:
        out = [dask.delayed(frame_of)(PAIR_COLS)]
    # the blocks' results in partitions of BATCH blocks: fewer tasks after
    out = [dask.delayed(joined)(out[k:k + BATCH]) for k in range(0, len(out), BATCH)]
    return dd.from_delayed(out, meta=frame_of(PAIR_COLS), verify_meta=False)


def in_blocks(pairs, rows, hosts, fn, m, z, prepare=None):
    """fn(pairs of a block, [its groups' rows], m, z) for every block: a
    Dask frame of PAIR_COLS. prepare(a group's rows) runs once per group,
    not once per block (sorting a group is the costly part)."""
    import dask
    import dask.dataframe as dd
    g = groups_of(hosts)
    nblk = tri(g - 1, g - 1, g) + 1
    by_blk = pairs.map_partitions(pair_block, g, meta=pairs._meta.assign(blk=np.int64(0)))
    by_blk = by_blk.set_index("blk", divisions=list(range(nblk + 1))).to_delayed()
    grouped = rows.assign(grp=rows["h"] % g).set_index(
        "grp", divisions=list(range(g + 1))).to_delayed()
    if prepare:
        grouped = [dask.delayed(prepare)(x) for x in grouped]
    out = []
    for i in range(g):
        for j in range(i, g):
            both = [grouped[i]] if i == j else [grouped[i], grouped[j]]
            out.append(dask.delayed(fn)(by_blk[tri(i, j, g)].reset_index(drop=True),
                                        both, m, z))
    return dd.from_delayed(out, meta=frame_of(PAIR_COLS), verify_meta=False)


# --- partners --------------------------------------------------------------------

PARTNER_COLS = ["host", "partner", "shared_pages", "saved", "saved_err", "shared"]


def top_partners(df, top):
    df = df.reset_index().sort_values(["host", "saved", "shared_pages", "partner"],
                                      ascending=[True, False, False, True])
    df = df.groupby("host", sort=False).head(top)
    return df.assign(rank=df.groupby("host").cumcount() + 1)


def partners(pairs, hosts, top, chunk=4096):
    """For each host, its @top partners by saved pages (both directions of
    each pair), in host order, partitions of @chunk hosts."""
    import dask.dataframe as dd
    fwd = pairs.rename(columns={"a": "host", "b": "partner", "pages_a": "shared_pages"})
    rev = pairs.rename(columns={"b": "host", "a": "partner", "pages_b": "shared_pages"})
    both = dd.concat([fwd[PARTNER_COLS], rev[PARTNER_COLS]])
    top_host = max(hosts, 1)      # divisions of no host at all: one empty partition
    div = sorted(set(range(0, top_host, chunk)) | {top_host})
    by = both.set_index("host", divisions=div)
    meta = top_partners(by._meta, top)
    return by.map_partitions(top_partners, top, meta=meta)
