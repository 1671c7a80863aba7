"""The reports of the fleet as one domain and of its hosts and pairs:
totals, hosts, pairs and partners (placement is placement.py's).

Reports with a row per pair or per host's partner are written one
partition at a time: the client never holds them whole.
"""
import textwrap

import pandas as pd

from . import model, pairs as pairs_mod
from .output import Writer, one_row

SKETCH_NOTE = "\n".join(textwrap.wrap(
    "Estimated from bottom-k sketches; the error columns bound each estimate "
    "(three standard errors).", 80))


def content_figures(df, m, z):
    """One row of totals for a partition of (digest -> pages, frames, zero)."""
    shared, sharing, kzero, freed = model.figures(
        df["pages"].to_numpy(), df["zero"].to_numpy() > 0, m, z, df["frames"].to_numpy())
    return pd.DataFrame({"distinct_pages": [len(df)], "pages_shared": [shared],
                         "pages_sharing": [sharing], "ksm_zero_pages": [kzero],
                         "freed": [freed]})


def with_saved(df, m, z):
    """Each host's own saving per row: a host's rows are its contents."""
    return df.assign(saved=model.saved_pages(df["pages"].to_numpy(), df["zero"].to_numpy() > 0,
                                             m, z, df["frames"].to_numpy()))


def by_content(f):
    """The fleet's contents: pages and frames summed over the hosts, zero
    or not."""
    return f.groupby(["key", "lo"]).agg({"pages": "sum", "frames": "sum", "zero": "max"},
                                        split_out=max(1, f.npartitions))


def by_frames(f):
    """@f with each content's frames for its pages: pairs, partners and
    placement count the memory of hosts, a frame that processes share since
    fork once."""
    return f.assign(pages=f["frames"])


def totals(f, kind, hosts, a, out):
    import dask
    m, z = a.max_page_sharing, a.use_zero_pages
    figs = by_content(f).map_partitions(content_figures, m, z, meta=content_figures(
        pd.DataFrame({"pages": [], "frames": [], "zero": []}), m, z))
    alone = f.map_partitions(with_saved, m, z)["saved"].sum()
    figs, pages, frames, alone = dask.compute(figs, f["pages"].sum(), f["frames"].sum(), alone)
    t = figs.sum()
    saved = (int(t["pages_sharing"]) + int(t["ksm_zero_pages"])) * model.PAGE
    one_row(["hosts", "pages", "distinct_pages", "pages_shared", "pages_sharing",
             "saved_bytes", "saved_bytes_hosts_alone", "frames", "freed_bytes"],
            [len(hosts), int(pages), int(t["distinct_pages"]), int(t["pages_shared"]),
             int(t["pages_sharing"]), saved, int(alone) * model.PAGE, int(frames),
             int(t["freed"]) * model.PAGE], out)


def host_table(f, a):
    """Per host number: pages, distinct_pages, saved (a pandas frame, one
    row a host)."""
    g = f.map_partitions(with_saved, a.max_page_sharing, a.use_zero_pages)
    t = g.groupby("h").agg({"pages": "sum", "key": "count", "saved": "sum"}).compute()
    return t.rename(columns={"key": "distinct_pages"})


def hosts_report(f, kind, hosts, a, out):
    t = host_table(f, a)
    w = Writer(["host", "pages", "distinct_pages", "saved_bytes"], out, names=["host"])
    w.rows([[h, int(t.at[i, "pages"]), int(t.at[i, "distinct_pages"]),
             int(t.at[i, "saved"]) * model.PAGE] for i, h in enumerate(hosts)])
    w.close()


def pair_frame(f, kind, hosts, a, shuffled=None):
    """The pairs that share (exact from contents, candidates estimated from
    sketches), persisted on the workers; @shuffled: the contents by digest
    (pairs.by_digest(@f)) when the caller has them already."""
    m, z = a.max_page_sharing, a.use_zero_pages
    if kind == "sketch":
        return pairs_mod.sketch_pairs(f, len(hosts), m, z).persist()
    if shuffled is None:
        shuffled = pairs_mod.by_digest(f)
    return pairs_mod.exact_pairs(f, shuffled, len(hosts), a.common, m, z).persist()


def by_gain(df, **_):
    """The pairs that gain most first, then those sharing most, then by host
    (dask's sort_values passes its own arguments: this order is the one)."""
    return df.sort_values(["saved", "shared", "a", "b"], ascending=[False, False, True, True])


def each_partition(frame):
    """The partitions of a (persisted) Dask frame, one at a time."""
    for i in range(frame.npartitions):
        yield frame.get_partition(i).compute()


def pairs_report(f, kind, hosts, a, out):
    pairs = pair_frame(f, kind, hosts, a)
    ordered = pairs.assign(neg=-pairs["saved"]).sort_values(
        "neg", sort_function=by_gain).persist()
    exact = kind == "contents"
    w = Writer(["host_a", "host_b", "shared_contents", "saved_together_bytes"]
               + (["pages_a", "pages_b"] if exact else
                  ["shared_contents_error", "saved_together_error"]), out,
               names=["host_a", "host_b"])
    P = model.PAGE
    for part in each_partition(ordered):
        w.rows([[hosts[r.a], hosts[r.b], r.shared, r.saved * P] +
                ([r.pages_a, r.pages_b] if exact else [r.shared_err, r.saved_err * P])
                for r in part.itertuples(index=False)])
    w.close(None if exact else SKETCH_NOTE)


def partners_report(f, kind, hosts, a, out):
    ranked = pairs_mod.partners(pair_frame(f, kind, hosts, a), len(hosts), a.top).persist()
    w = Writer(["host", "partner", "rank", "shared_pages", "saved_bytes", "error_bytes"],
               out, names=["host", "partner"])
    P = model.PAGE
    for part in each_partition(ranked):
        w.rows([[hosts[r.host], hosts[r.partner], r.rank, r.shared_pages, r.saved * P,
                 r.saved_err * P] for r in part.itertuples(index=False)])
    w.close(SKETCH_NOTE if kind == "sketch" else None)


def partner_gains(f, kind, hosts, a, shuffled=None):
    """{host: {partner: saved pages}} from each host's top partners, both
    ways (a partner lists the host or the host lists it); @shuffled as for
    pair_frame()."""
    ranked = pairs_mod.partners(pair_frame(f, kind, hosts, a, shuffled), len(hosts), a.top)
    gain = {}
    for part in each_partition(ranked.persist()):
        for h, p, s in zip(part["host"].to_numpy(), part["partner"].to_numpy(),
                           part["saved"].to_numpy()):
            gain.setdefault(int(h), {})[int(p)] = int(s)
            gain.setdefault(int(p), {})[int(h)] = int(s)
    return gain

