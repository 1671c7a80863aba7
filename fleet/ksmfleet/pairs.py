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

Blocks: the hosts are cut into G groups (host number mod G); the pairs of
groups i <= j are one task, which gets the pairs and the two groups' rows,
so that no process ever holds more than two groups of hosts.
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


def specific_pairs(df, common, m, z):
    """In one partition of the shuffle (every row of a digest is here): per
    pair of hosts, what the contents held by at most @common hosts give."""
    d = df[holders(df) <= common]
    j = d.merge(d, on=["key", "lo"])
    j = j[j["h_x"] < j["h_y"]]
    out = pd.DataFrame({"a": j["h_x"].to_numpy(), "b": j["h_y"].to_numpy(), "shared": 1,
                        "pages_a": j["pages_x"].to_numpy(), "pages_b": j["pages_y"].to_numpy(),
                        "saved": model.together(j["pages_x"].to_numpy(), j["pages_y"].to_numpy(),
                                                   j["zero_x"].to_numpy() > 0, m, z)})
    return out.groupby(["a", "b"], as_index=False).sum()


def common_rows(df, common):
    return df[holders(df) > common][["h", "key", "lo", "pages", "zero"]]


def add_common(pairs, groups, m, z):
    """The pairs' figures with the part of the common contents both hold
    (@groups: the rows of the block's groups of hosts)."""
    rows = pd.concat(groups, ignore_index=True)
    x = pairs[["a", "b"]].merge(rows, left_on="a", right_on="h")
    y = x.merge(rows, left_on=["b", "key", "lo"], right_on=["h", "key", "lo"])
    add = pd.DataFrame({"a": y["a"].to_numpy(), "b": y["b"].to_numpy(), "shared": 1,
                        "pages_a": y["pages_x"].to_numpy(), "pages_b": y["pages_y"].to_numpy(),
                        "saved": model.together(y["pages_x"].to_numpy(), y["pages_y"].to_numpy(),
                                                   y["zero_x"].to_numpy() > 0, m, z)})
    both = pd.concat([pairs[add.columns], add]).groupby(["a", "b"], as_index=False).sum()
    both["shared_err"] = 0
    both["saved_err"] = 0
    return both[PAIR_COLS].astype(np.int64)


def exact_pairs(f, hosts, common, m, z):
    """Every pair that shares a content held by at most @common hosts, exact."""
    cols = ["h", "key", "lo", "pages", "zero"]
    parts = f[cols].shuffle("key", npartitions=max(1, f.npartitions))
    spec = parts.map_partitions(specific_pairs, common, m, z,
                                meta=frame_of(PAIR_COLS[:6]))
    spec = spec.groupby(["a", "b"]).sum(split_out=max(1, f.npartitions)).reset_index()
    com = parts.map_partitions(common_rows, common, meta=f[cols]._meta)
    return in_blocks(spec, com, hosts, add_common, m, z)


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
    x, out, tmp = np.empty_like(keys), np.empty_like(keys), np.empty_like(keys)
    mins = []
    for band in range(BANDS):
        np.bitwise_xor(keys, SEEDS[band], out=x)
        mins.append(np.minimum.reduceat(mix_into(x, out, tmp), starts))
    hs = h[starts]
    return pd.DataFrame({"h": np.tile(hs, BANDS),
                         "band": np.repeat(np.arange(BANDS, dtype=np.int64), len(hs)),
                         "value": np.concatenate(mins)})


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
    return np.unique(df["h"].to_numpy())


def bucket_frame(sig):
    """The buckets of signatures (h, band, value), one row per host and band."""
    sig = sig.groupby(["h", "band"], as_index=False, sort=False)["value"].min()
    bucket = mix(sig["value"].to_numpy() ^ SEEDS[BANDS + sig["band"].to_numpy()])
    return pd.DataFrame({"h": sig["h"].to_numpy(), "bucket": bucket})


def candidate_blocks(sigs, owner):
    """All candidate pairs from the partitions' signatures, at once (the
    signatures are 64 rows a host: 640,000 rows for 10,000 hosts), as
    {(i, j): pairs} by the partitions i <= j that hold their hosts."""
    cand = bucket_pairs(bucket_frame(pd.concat(sigs, ignore_index=True)))
    a, b = cand["a"].to_numpy(), cand["b"].to_numpy()
    pa, pb = owner[a], owner[b]
    i, j = np.minimum(pa, pb), np.maximum(pa, pb)
    order = np.lexsort((b, a, j, i))
    a, b, i, j = a[order], b[order], i[order], j[order]
    cut = np.flatnonzero(np.r_[True, (i[1:] != i[:-1]) | (j[1:] != j[:-1]), True])
    return {(int(i[s]), int(j[s])): pd.DataFrame({"a": a[s:e], "b": b[s:e]})
            for s, e in zip(cut[:-1], cut[1:])}


def block_pairs(blocks, key):
    return blocks.get(key, frame_of(["a", "b"]))


def sketch_pairs(f, hosts, m, z):
    """Candidates and estimates. When every host's rows are in one partition
    of @f (a sketch export is split only past 64 MiB), the partitions are
    the groups of hosts: no shuffle of rows, the signatures and the sorted
    sketches made where the rows are; else by groups of hosts (in_blocks)."""
    import dask
    import dask.dataframe as dd
    parts = f[["h", "key", "pages", "distinct"]].to_delayed()
    lists = dask.compute(*[dask.delayed(host_list)(p) for p in parts])
    owner = np.full(max(hosts, 1), -1, dtype=np.int64)
    spans = False
    for n, hs in enumerate(lists):
        spans |= bool((owner[hs] >= 0).any())
        owner[hs] = n
    if spans or not hosts:
        cand = sketch_candidates(f)
        return in_blocks(cand, f[["h", "key", "pages", "distinct"]], hosts, estimate_block,
                         m, z, prepare=host_sketches)
    sigs = [dask.delayed(signatures)(p) for p in parts]
    blocks = dask.delayed(candidate_blocks)(sigs, dask.delayed(owner, pure=True))
    sk = [dask.delayed(host_sketches)(p) for p in parts]
    out = []
    for i in range(len(parts)):
        for j in range(i, len(parts)):
            both = [sk[i]] if i == j else [sk[i], sk[j]]
            out.append(dask.delayed(estimate_block)(
                dask.delayed(block_pairs)(blocks, (i, j)), both, m, z))
    return dd.from_delayed(out, meta=frame_of(PAIR_COLS), verify_meta=False)


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
