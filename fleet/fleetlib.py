"""ksmfleet: what KSM would save across a fleet, from ksmscan's exports.

Each host runs `ksmscan -r contents --csv ... | zstd` (or `-r sketch`); this
module reads any number of those exports on a Dask `distributed` cluster (a
LocalCluster by default) and reports the fleet as one KSM domain (totals),
each host alone (hosts), what pairs of hosts share (pairs) and a placement
of hosts onto machines of a given capacity (placement). The KSM arithmetic
is ksmmodel.py's, the same as ksmscan's.

The work is Dask's: the exports are Dask dataframes (one partition per
compressed export, 64 MiB blocks of a plain one); totals group by digest
across partitions (a shuffle), pairs shuffle by digest so that every
content's hosts meet in one partition and each partition reduces them to
one row per pair of hosts; from sketches, the pairs are a Dask bag.
"""
import argparse
import csv
import logging
import math
import os
import sys

import numpy as np
import pandas as pd

import ksmmodel

PROG = "ksmfleet"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
DIGEST_RE = r"^0x[0-9a-f]{32}$"
# XXH3-128 (seed 0) of the zero page: sketches carry no zero column.
ZERO_DIGEST = "0x3ee8dc4f9e7ee49593d76fe148c689ba"
REPORTS = ("totals", "hosts", "pairs", "placement")
COLUMNS = {
    "contents": ["input", "digest", "pages", "zero"],
    "sketch": ["input", "digest", "pages", "distinct_pages"],
}


class Failure(Exception):
    """A problem to report in one line, with the exit status (1 input, 2 usage)."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Failure(message + " (see ksmfleet --help)", 2)


def parse_args(argv):
    p = Parser(prog=PROG, description=(
        "What KSM would save across hosts, from their ksmscan contents or "
        "sketch exports (plain or zstd-compressed CSV), computed on Dask."))
    p.add_argument("exports", nargs="+", metavar="EXPORT",
                   help="`ksmscan -r contents --csv` or `-r sketch --csv` output")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None, metavar="N",
                       help="worker processes of the local cluster (default: CPUs)")
    where.add_argument("--scheduler", metavar="ADDR",
                       help="use this distributed scheduler (tcp://host:8786)")
    p.add_argument("--report", default="totals", choices=REPORTS,
                   help="totals (default), hosts, pairs or placement")
    p.add_argument("--capacity", type=int, metavar="PAGES",
                   help="placement: pages a machine holds before merging")
    p.add_argument("--csv", action="store_true", help="CSV instead of a table")
    p.add_argument("-m", "--max-page-sharing", type=int, default=256, metavar="N",
                   help="KSM's max_page_sharing, N >= 2 (default 256)")
    p.add_argument("-z", "--use-zero-pages", action="store_true",
                   help="model KSM with use_zero_pages=1")
    a = p.parse_args(argv)
    if a.workers is not None and not 1 <= a.workers <= 256:
        raise Failure("--workers wants 1 to 256, not %d" % a.workers, 2)
    if a.max_page_sharing < 2:
        raise Failure("--max-page-sharing wants at least 2", 2)
    if a.report == "placement" and (a.capacity is None or a.capacity < 1):
        raise Failure("--report=placement needs --capacity=PAGES (at least 1)", 2)
    return a


# --- reading exports ----------------------------------------------------------

def first_line(path):
    """The header of an export, plain or zstd; and whether it is zstd."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
            f.seek(0)
            if head == ZSTD_MAGIC:
                import zstandard
                raw = zstandard.ZstdDecompressor().stream_reader(f).read(4096)
            else:
                raw = f.read(4096)
    except OSError as e:
        raise Failure("%s: %s" % (path, e.strerror), 1)
    except Exception as e:  # a damaged zstd frame
        raise Failure("%s: cannot decompress: %s" % (path, e), 1)
    return raw.split(b"\n", 1)[0].rstrip(b"\r").decode("utf-8", "replace"), head == ZSTD_MAGIC


def export_kind(path):
    """'contents' or 'sketch' by the header; whether the file is zstd."""
    header, zstd = first_line(path)
    cols = header.split(",")
    for kind, want in COLUMNS.items():
        if cols[:4] == want:
            return kind, zstd
    raise Failure("%s: not a ksmscan contents or sketch export (header %r)"
                  % (path, header[:80]), 1)


def checked(df, path, kind):
    """A partition with typed columns, or ValueError naming the file."""
    out = pd.DataFrame({"input": df["input"].astype(str),
                        "digest": df["digest"].astype(str)})
    for col in ("pages", COLUMNS[kind][3]):
        v = pd.to_numeric(df[col], errors="coerce")
        if v.isna().any() or (v < 0).any() or (v != v.round()).any():
            bad = df[col][v.isna() | (v < 0)].head(1).tolist()
            raise ValueError("%s: malformed export: %s %r is not a count"
                             % (path, col, bad[0] if bad else "?"))
        out[col] = v.astype(np.int64)
    if not out["digest"].str.match(DIGEST_RE).all():
        bad = out["digest"][~out["digest"].str.match(DIGEST_RE)].iloc[0]
        raise ValueError("%s: malformed export: digest %r is not 0x and 32 "
                         "lower-case hex digits" % (path, bad[:60]))
    if (out["pages"] < 1).any() or (out["input"] == "").any():
        raise ValueError("%s: malformed export: a row without pages or input" % path)
    if kind == "contents" and (out["zero"] > 1).any():
        raise ValueError("%s: malformed export: zero is not 0 or 1" % path)
    if kind == "sketch":
        out["zero"] = (out["digest"] == ZERO_DIGEST).astype(np.int64)
    return out


def load(paths):
    """The exports as one Dask dataframe: input, digest, pages, zero (and
    distinct_pages for sketches); their kind; the export of each partition."""
    import dask.dataframe as dd
    kinds = [export_kind(p) for p in paths]
    if len({k for k, _ in kinds}) > 1:
        raise Failure("contents and sketch exports cannot be mixed", 2)
    kind = kinds[0][0]
    meta = pd.DataFrame({"input": pd.Series(dtype=object),
                         "digest": pd.Series(dtype=object),
                         "pages": pd.Series(dtype=np.int64),
                         COLUMNS[kind][3]: pd.Series(dtype=np.int64)})
    if kind == "sketch":
        meta["zero"] = pd.Series(dtype=np.int64)
    parts = []
    for path, (_, zstd) in zip(paths, kinds):
        d = dd.read_csv(path, compression="zstd" if zstd else None,
                        blocksize=None if zstd else 64 << 20, dtype=str,
                        usecols=COLUMNS[kind], keep_default_na=False)
        parts.append(d.map_partitions(checked, path, kind, meta=meta))
    files = [(i, path) for i, (path, d) in enumerate(zip(paths, parts))
             for _ in range(d.npartitions)]
    return dd.concat(parts), kind, files


def host_order(ddf, files):
    """The hosts in order of first appearance in the exports; a host in two
    exports is an error (its contents would count twice).
    @files: the export of each partition, in order: (number, path)."""
    import dask
    seen = dask.compute(*[dask.delayed(lambda d: list(pd.unique(d["input"])))(p)
                          for p in ddf.to_delayed()])
    where = {}
    for export, hosts in zip(files, seen):
        for h in hosts:
            if where.setdefault(h, export) != export:
                raise Failure("host %s is in two exports: %s and %s"
                              % (h, where[h][1], export[1]), 1)
    return list(where)


# --- the reports, from contents -------------------------------------------------

def content_figures(df, m, z):
    """One row of totals for a partition of (digest -> pages, zero)."""
    shared, sharing, kzero = ksmmodel.figures(df["pages"].to_numpy(),
                                              df["zero"].to_numpy() > 0, m, z)
    return pd.DataFrame({"distinct_pages": [len(df)], "pages_shared": [shared],
                         "pages_sharing": [sharing], "ksm_zero_pages": [kzero]})


def with_saved(df, m, z):
    """Each host's own saving per row: a host's rows are its contents."""
    return df.assign(saved=ksmmodel.saved_pages(df["pages"].to_numpy(),
                                                df["zero"].to_numpy() > 0, m, z))


def report_totals(ddf, hosts, a):
    import dask
    m, z = a.max_page_sharing, a.use_zero_pages
    by = ddf.groupby("digest").agg({"pages": "sum", "zero": "max"},
                                   split_out=max(1, ddf.npartitions))
    figs = by.map_partitions(content_figures, m, z, meta=content_figures(
        pd.DataFrame({"pages": [], "zero": []}), m, z))
    alone = ddf.map_partitions(with_saved, m, z)["saved"].sum()
    figs, pages, alone = dask.compute(figs, ddf["pages"].sum(), alone)
    t = figs.sum()
    saved = (int(t["pages_sharing"]) + int(t["ksm_zero_pages"])) * ksmmodel.PAGE
    cols = ["hosts", "pages", "distinct_pages", "pages_shared", "pages_sharing",
            "saved_bytes", "saved_bytes_hosts_alone"]
    return cols, [[len(hosts), int(pages), int(t["distinct_pages"]),
                   int(t["pages_shared"]), int(t["pages_sharing"]), saved,
                   int(alone) * ksmmodel.PAGE]]


def host_table(ddf, a):
    """Per host: pages, distinct_pages, saved_bytes (a pandas frame)."""
    g = ddf.map_partitions(with_saved, a.max_page_sharing, a.use_zero_pages)
    t = g.groupby("input").agg({"pages": "sum", "digest": "count", "saved": "sum"})
    t = t.compute()
    return t.rename(columns={"digest": "distinct_pages"})


def report_hosts(ddf, hosts, a):
    t = host_table(ddf, a)
    rows = [[h, int(t.at[h, "pages"]), int(t.at[h, "distinct_pages"]),
             int(t.at[h, "saved"]) * ksmmodel.PAGE] for h in hosts]
    return ["host", "pages", "distinct_pages", "saved_bytes"], rows


def pair_part(df, code, m, z):
    """In one partition (every row of a digest is here): per pair of hosts,
    the contents both hold, their pages and the extra saving together."""
    d = df.assign(h=df["input"].map(code))[["digest", "h", "pages", "zero"]]
    j = d.merge(d, on="digest")
    j = j[j["h_x"] < j["h_y"]]
    extra = ksmmodel.together(j["pages_x"].to_numpy(), j["pages_y"].to_numpy(),
                              j["zero_x"].to_numpy() > 0, m, z)
    out = pd.DataFrame({"a": j["h_x"].to_numpy(), "b": j["h_y"].to_numpy(),
                        "shared": 1, "pages_a": j["pages_x"].to_numpy(),
                        "pages_b": j["pages_y"].to_numpy(), "saved": extra})
    return out.groupby(["a", "b"], as_index=False).sum()


def pair_table(ddf, hosts, a):
    """{(i, j): (shared, pages_a, pages_b, saved_pages)} for hosts i < j."""
    code = {h: i for i, h in enumerate(hosts)}
    meta = pd.DataFrame({c: pd.Series(dtype=np.int64) for c in
                         ("a", "b", "shared", "pages_a", "pages_b", "saved")})
    parts = ddf.shuffle("digest", npartitions=max(1, ddf.npartitions))
    per = parts.map_partitions(pair_part, code, a.max_page_sharing,
                               a.use_zero_pages, meta=meta)
    t = per.groupby(["a", "b"]).sum().compute()
    out = {}
    for (i, j), r in t.iterrows():
        out[(int(i), int(j))] = (int(r["shared"]), int(r["pages_a"]),
                                 int(r["pages_b"]), int(r["saved"]))
    return out


def sort_pairs(rows, saved_col, shared_col, order):
    """The pairs that gain most first, then those sharing most, then by host."""
    return sorted(rows, key=lambda r: (-r[saved_col], -r[shared_col], order(r)))


def report_pairs(ddf, hosts, a):
    pt = pair_table(ddf, hosts, a)
    rows = []
    for i in range(len(hosts)):
        for j in range(i + 1, len(hosts)):
            s, pa, pb, sv = pt.get((i, j), (0, 0, 0, 0))
            rows.append([hosts[i], hosts[j], s, sv * ksmmodel.PAGE, pa, pb, (i, j)])
    rows = sort_pairs(rows, 3, 2, lambda r: r[6])
    return (["host_a", "host_b", "shared_contents", "saved_together_bytes",
             "pages_a", "pages_b"], [r[:6] for r in rows])


def greedy_bins(hosts, pages, gain, capacity):
    """Hosts in decreasing size go to the bin with room where they gain most
    (pairwise savings with the hosts there); ties to the fullest bin; a new
    bin when none has room. Return {host index: bin}."""
    bins, where = [], {}
    for h in sorted(range(len(hosts)), key=lambda i: (-pages[i], i)):
        best = None
        for b, (members, used) in enumerate(bins):
            if used + pages[h] > capacity:
                continue
            g = sum(gain.get((min(h, o), max(h, o)), 0) for o in members)
            if best is None or (g, used) > best[0]:
                best = ((g, used), b)
        if best is None:
            bins.append(([], 0))
            best = (None, len(bins) - 1)
        members, used = bins[best[1]]
        bins[best[1]] = (members + [h], used + pages[h])
        where[h] = best[1]
    return where


def bin_saving(df, m, z):
    s = ksmmodel.saved_pages(df["pages"].to_numpy(), df["zero"].to_numpy() > 0, m, z)
    return pd.DataFrame({"bin": df["bin"].to_numpy(), "saved": s})


def report_placement(ddf, hosts, a):
    m, z = a.max_page_sharing, a.use_zero_pages
    t = host_table(ddf, a)
    pages = [int(t.at[h, "pages"]) for h in hosts]
    for h, p in zip(hosts, pages):
        if p > a.capacity:
            print("%s: warning: host %s has %d pages, more than --capacity=%d: "
                  "it gets a machine of its own" % (PROG, h, p, a.capacity),
                  file=sys.stderr)
    pt = pair_table(ddf, hosts, a)
    where = greedy_bins(hosts, pages, {k: v[3] for k, v in pt.items()}, a.capacity)
    code = {h: where[i] for i, h in enumerate(hosts)}
    # The exact saving of each machine: its hosts' contents grouped by digest.
    binned = ddf.assign(bin=ddf["input"].map(code, meta=("input", np.int64)))
    by = binned.groupby(["bin", "digest"]).agg({"pages": "sum", "zero": "max"},
                                                split_out=max(1, ddf.npartitions))
    saved = by.reset_index().map_partitions(
        bin_saving, m, z, meta=pd.DataFrame({"bin": pd.Series(dtype=np.int64),
                                             "saved": pd.Series(dtype=np.int64)}))
    per_bin = saved.groupby("bin")["saved"].sum().compute()
    rows = sorted(([h, where[i], pages[i], int(per_bin.get(where[i], 0)) * ksmmodel.PAGE]
                   for i, h in enumerate(hosts)), key=lambda r: (r[1], -r[2], r[0]))
    return ["host", "bin", "pages", "saved_bytes"], rows


# --- pairs from sketches ----------------------------------------------------------

def estimate_pair(pair, sketches, m, z):
    """shared_contents and saved_together_bytes of two hosts from their
    bottom-k sketches, and a bound on each error (three standard errors).

    The k smallest digests of the union of both sketches are a uniform
    sample of the union's contents, and for each of them both hosts' pages
    are known (a content among the k smallest of the union that a host
    holds is among that host's k smallest). With d_a, d_b the hosts'
    distinct contents and p the sampled fraction held by both, the union
    holds N = (d_a + d_b) / (1 + p) contents.
    """
    ha, hb = pair
    (sa, da), (sb, db) = sketches[ha], sketches[hb]
    k = min(len(sa), len(sb))
    union = sorted(set(sa) | set(sb))
    complete = len(sa) == da and len(sb) == db
    sample = union if complete else union[:k]
    ca = np.array([sa.get(d, 0) for d in sample], dtype=np.int64)
    cb = np.array([sb.get(d, 0) for d in sample], dtype=np.int64)
    zero = np.array([d == ZERO_DIGEST for d in sample])
    both = (ca > 0) & (cb > 0)
    f = np.where(both, ksmmodel.together(ca, cb, zero, m, z), 0)
    if complete or not len(sample):
        return (ha, hb, int(both.sum()), int(f.sum()) * ksmmodel.PAGE, 0, 0)
    n = len(sample)
    p = both.mean()
    union_n = (da + db) / (1 + p)
    fpc = max(0.0, 1 - n / union_n)
    pt = (both.sum() + 1) / (n + 2)     # no zero error when none is seen
    se_p = math.sqrt(pt * (1 - pt) / n * fpc)
    se_n = (da + db) / (1 + p) ** 2 * se_p
    mean_f = f.mean()
    se_mean = max(math.sqrt(f.var(ddof=1) / n * fpc) if n > 1 else 0.0,
                  se_p * max(1.0, float(f.max())))
    shared = p * union_n
    se_saved = math.hypot(union_n * se_mean, mean_f * se_n)
    return (ha, hb, int(round(shared)), int(round(union_n * mean_f)) * ksmmodel.PAGE,
            int(math.ceil(3 * se_n)), int(math.ceil(3 * se_saved)) * ksmmodel.PAGE)


def report_sketch_pairs(ddf, hosts, a):
    import dask.bag as db
    frame = ddf.compute()
    sketches = {}
    for h, g in frame.groupby("input", sort=False):
        sketches[h] = (dict(zip(g["digest"], g["pages"])),
                       int(g["distinct_pages"].iloc[0]))
    pairs = [(hosts[i], hosts[j]) for i in range(len(hosts))
             for j in range(i + 1, len(hosts))]
    order = {p: n for n, p in enumerate(pairs)}
    if pairs:
        bag = db.from_sequence(pairs, npartitions=min(len(pairs), 64))
        est = bag.map(estimate_pair, sketches, a.max_page_sharing,
                      a.use_zero_pages).compute()
    else:
        est = []
    rows = sort_pairs([list(e) for e in est], 3, 2, lambda r: order[(r[0], r[1])])
    return (["host_a", "host_b", "shared_contents", "saved_together_bytes",
             "shared_contents_error", "saved_together_error"], rows)


# --- output -----------------------------------------------------------------------

def write(cols, rows, as_csv, note=None):
    if as_csv:
        w = csv.writer(sys.stdout, lineterminator="\r\n")
        w.writerow(cols)
        w.writerows(rows)
        return
    text = [[str(c) for c in r] for r in rows]
    width = [max([len(c)] + [len(r[i]) for r in text]) for i, c in enumerate(cols)]
    num = [all(isinstance(r[i], (int, np.integer)) for r in rows) and rows
           for i in range(len(cols))]
    fmt = lambda r: "  ".join(c.rjust(width[i]) if num[i] else c.ljust(width[i])
                              for i, c in enumerate(r)).rstrip()
    print(fmt(cols))
    for r in text:
        print(fmt(r))
    if note:
        print()
        print(note)


def start_client(a):
    """A distributed client: the scheduler given, or a LocalCluster."""
    import cloudpickle
    from distributed import Client, LocalCluster
    # Workers of a real cluster need not have these modules installed.
    cloudpickle.register_pickle_by_value(ksmmodel)
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    if a.scheduler:
        return Client(a.scheduler, timeout=30), None
    n = a.workers or os.cpu_count() or 1
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.ERROR)
    return Client(cluster), cluster


def run(a):
    ddf, kind, files = load(a.exports)
    if kind == "sketch" and a.report != "pairs":
        raise Failure("--report=%s needs contents exports; from sketches "
                      "ksmfleet estimates pairs only" % a.report, 2)
    hosts = host_order(ddf, files)
    if kind == "sketch":
        cols, rows = report_sketch_pairs(ddf, hosts, a)
        note = ("Estimated from bottom-k sketches; the error columns bound "
                "each estimate (three standard errors).")
    else:
        cols, rows = {"totals": report_totals, "hosts": report_hosts,
                      "pairs": report_pairs,
                      "placement": report_placement}[a.report](ddf, hosts, a)
        note = None
    write(cols, rows, a.csv, note)


def run_here_if_lost(a):
    """run(a); if the cluster itself fails (a worker lost a task's input under
    load: distributed raises KeyError or CancelledError, not the export's
    error), compute again in this process, where an export's error is the one
    raised."""
    import dask
    try:
        run(a)
    except (Failure, ValueError, OSError, pd.errors.ParserError):
        raise
    except Exception:  # the cluster's, not the data's: the answer is the same
        with dask.config.set(scheduler="synchronous"):
            run(a)


def main(argv=None):
    client = cluster = None
    try:
        a = parse_args(sys.argv[1:] if argv is None else argv)
        for p in a.exports:
            if not os.path.isfile(p):
                raise Failure("%s: %s" % (p, "no such file" if not os.path.exists(p)
                                          else "not a regular file"), 1)
        client, cluster = start_client(a)
        run_here_if_lost(a)
        sys.stdout.flush()
        return 0
    except Failure as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return e.status
    except (ValueError, OSError, pd.errors.ParserError) as e:
        msg = str(e).strip().splitlines()
        print("%s: %s" % (PROG, msg[0] if msg else type(e).__name__), file=sys.stderr)
        return 1
    finally:
        if client:
            client.close()
        if cluster:
            cluster.close()
