"""ksmfleet: what KSM would save across a fleet, from ksmscan's exports.

Each host runs `ksmscan -r contents --csv ... | zstd` (or `-r sketch`); this
module reads any number of those exports on a Dask `distributed` cluster (a
LocalCluster by default, or a scheduler given) and reports the fleet as one
KSM domain (totals), each host alone (hosts), the pairs of hosts that share
(pairs), each host's best partners (partners) and a placement of hosts onto
machines of a given capacity (placement). The KSM arithmetic is
ksmmodel.py's, the same as ksmscan's; reading is fleetread.py's, pairs
fleetpairs.py's.

The client process holds no export: the rows are read, checked and kept on
the workers (persisted), and reports that have a row per pair or per host's
partner are written one partition at a time. What the client holds grows
only with the number of hosts (their names and, for placement, their sizes
and partners), never with the rows of the exports.
"""
import argparse
import bisect
import csv
import logging
import os
import sys

import numpy as np
import pandas as pd

import fleetpairs
import fleetread
import ksmmodel
from fleetread import BadRow, COLUMNS

PROG = "ksmfleet"
REPORTS = ("totals", "hosts", "pairs", "partners", "placement")
SKETCH_REPORTS = ("pairs", "partners")


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
                   help="totals (default), hosts, pairs, partners or placement")
    p.add_argument("--top", type=int, default=5, metavar="N",
                   help="partners and placement: partners per host (default 5)")
    p.add_argument("--common", type=int, default=64, metavar="HOSTS",
                   help="contents held by more hosts make no pairs of their own "
                   "(default 64)")
    p.add_argument("--capacity", type=int, metavar="PAGES",
                   help="placement: pages a machine holds before merging")
    p.add_argument("--csv", action="store_true", help="CSV instead of a table")
    p.add_argument("-m", "--max-page-sharing", type=int, default=256, metavar="N",
                   help="KSM's max_page_sharing, N >= 2 (default 256)")
    p.add_argument("-z", "--use-zero-pages", action="store_true",
                   help="model KSM with use_zero_pages=1")
    a = p.parse_args(argv)
    check_args(a)
    return a


def check_args(a):
    if a.workers is not None and not 1 <= a.workers <= 256:
        raise Failure("--workers wants 1 to 256, not %d" % a.workers, 2)
    if a.scheduler is not None and not a.scheduler.strip():
        raise Failure("--scheduler wants an address, as tcp://HOST:8786", 2)
    if a.max_page_sharing < 2:
        raise Failure("--max-page-sharing wants at least 2", 2)
    if a.top < 1:
        raise Failure("--top wants at least 1", 2)
    if a.common < 2:
        raise Failure("--common wants at least 2", 2)
    if a.report == "placement" and (a.capacity is None or a.capacity < 1):
        raise Failure("--report=placement needs --capacity=PAGES (at least 1)", 2)


# --- reading exports ----------------------------------------------------------

def export_kind(path):
    """'contents' or 'sketch' by the header; whether the file is zstd; the
    header's column names."""
    line, zstd = fleetread.header(path)
    cols = line.split(",")
    for kind, want in COLUMNS.items():
        if cols[:4] == want:
            return kind, zstd, cols
    raise BadRow(path, "not a ksmscan contents or sketch export (header %r)"
                 % line[:80], 0, 1)


def summary(df):
    """Per export of a partition, in order: (export, its hosts in order of
    appearance, rows, pages)."""
    return [(int(f), [str(h) for h in pd.unique(g["input"].astype(object))], len(g),
             int(g["pages"].sum())) for f, g in df.groupby("file", sort=False)]


def row_where(df, fileno, host=None, room=None):
    """The row (from 0, among the export's rows in this partition) of the
    first row of @host, or where the pages pass @room."""
    g = df[df["file"] == fileno]
    if host is not None:
        return int(np.flatnonzero((g["input"].astype(object) == host).to_numpy())[0])
    return int(np.searchsorted(np.cumsum(g["pages"].to_numpy()), room, side="right"))


def host_order(raw, paths):
    """The hosts in order of first appearance; a host in two exports is an
    error (its contents would count twice), and so are pages past MAX_TOTAL."""
    import dask
    parts = raw.to_delayed()
    sums = dask.compute(*[dask.delayed(summary)(p) for p in parts])
    where, total, rows_in = {}, 0, {}
    for n, per in enumerate(sums):
        for f, hosts, rows, pages in per:
            for h in hosts:
                if where.setdefault(h, f) != f:
                    r = dask.compute(dask.delayed(row_where)(parts[n], f, host=h))[0]
                    raise BadRow(paths[f], "host %s is in two exports: %s and %s"
                                 % (h, paths[where[h]], paths[f]), 0, rows_in.get(f, 0) + r + 2)
            if total + pages > fleetread.MAX_TOTAL:
                r = dask.compute(dask.delayed(row_where)(parts[n], f,
                                                         room=fleetread.MAX_TOTAL - total))[0]
                raise BadRow(paths[f], "the fleet's pages pass 2^51 (8 EiB)", 0,
                             rows_in.get(f, 0) + r + 2)
            total += pages
            rows_in[f] = rows_in.get(f, 0) + rows
    return list(where)


def numbered(df, code):
    """The rows with h, the host's number, in place of its name and export."""
    names = df["input"].cat.categories
    to = np.array([code[str(c)] for c in names], dtype=np.int64)
    h = to[df["input"].cat.codes.to_numpy()] if len(names) else np.zeros(0, np.int64)
    return df.drop(columns=["input", "file"]).assign(h=h)


def load(paths):
    """The exports as one Dask frame on the workers (h, key, lo, pages,
    zero, and distinct for sketches); their kind; the hosts in order."""
    import dask
    import dask.dataframe as dd
    heads = [export_kind(p) for p in paths]
    if len({k for k, _, _ in heads}) > 1:
        raise Failure("contents and sketch exports cannot be mixed", 2)
    kind = heads[0][0]
    names = [c for _, _, c in heads]
    sized = [(p, z, os.path.getsize(p)) for p, (_, z, _) in zip(paths, heads)]
    parts = [dask.delayed(fleetread.read_partition)(items, kind, names)
             for items in fleetread.partitions(sized)]
    raw = dd.from_delayed(parts, meta=fleetread.meta(kind), verify_meta=False).persist()
    hosts = host_order(raw, paths)
    code = dask.delayed({h: i for i, h in enumerate(hosts)}, pure=True)
    meta = numbered(fleetread.meta(kind), {})
    frame = raw.map_partitions(numbered, code, meta=meta).persist()
    return frame, kind, hosts


# --- output -----------------------------------------------------------------------

CONTROL = {c: "?" for c in list(range(0x20)) + list(range(0x7f, 0xa0))}
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def cell(v, as_csv):
    """A cell as text: control characters of a host's name (ESC, BEL, ...)
    as '?'; in CSV, text a spreadsheet would take for a formula (a leading
    = + - @ tab or CR) after a single quote, as OWASP recommends."""
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    raw = str(v)
    text = raw.translate(CONTROL)
    return "'" + text if as_csv and raw.startswith(FORMULA) else text


class Writer:
    """Rows to stdout as they come, CSV or a table; a table's columns are as
    wide as the header and the first batch of rows need."""
    started = False

    def __init__(self, cols, as_csv):
        self.cols, self.csv, self.width, self.num = cols, as_csv, None, None
        if as_csv:
            self.out = csv.writer(sys.stdout, lineterminator="\r\n")

    def rows(self, rows):
        Writer.started = True
        if self.csv:
            if self.width is None:
                self.width = True
                self.out.writerow(self.cols)
            self.out.writerows([[cell(v, True) for v in r] for r in rows])
            return
        text = [[cell(v, False) for v in r] for r in rows]
        if self.width is None:
            self.num = [bool(rows) and all(isinstance(r[i], (int, np.integer)) for r in rows)
                        for i in range(len(self.cols))]
            self.width = [max([len(c)] + [len(r[i]) for r in text])
                          for i, c in enumerate(self.cols)]
            self.line(self.cols)
        for r in text:
            self.line(r)

    def line(self, r):
        print("  ".join(c.rjust(self.width[i]) if self.num[i] else c.ljust(self.width[i])
                        for i, c in enumerate(r)).rstrip())

    def close(self, note=None):
        if self.width is None:
            self.rows([])
        if note and not self.csv:
            print()
            print(note)


def each_partition(frame):
    """The partitions of a (persisted) Dask frame, one at a time."""
    for i in range(frame.npartitions):
        yield frame.get_partition(i).compute()


# --- the reports -------------------------------------------------------------------

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


def report_totals(f, hosts, a):
    import dask
    m, z = a.max_page_sharing, a.use_zero_pages
    by = f.groupby(["key", "lo"]).agg({"pages": "sum", "zero": "max"},
                                      split_out=max(1, f.npartitions))
    figs = by.map_partitions(content_figures, m, z, meta=content_figures(
        pd.DataFrame({"pages": [], "zero": []}), m, z))
    alone = f.map_partitions(with_saved, m, z)["saved"].sum()
    figs, pages, alone = dask.compute(figs, f["pages"].sum(), alone)
    t = figs.sum()
    saved = (int(t["pages_sharing"]) + int(t["ksm_zero_pages"])) * ksmmodel.PAGE
    w = Writer(["hosts", "pages", "distinct_pages", "pages_shared", "pages_sharing",
                "saved_bytes", "saved_bytes_hosts_alone"], a.csv)
    w.rows([[len(hosts), int(pages), int(t["distinct_pages"]), int(t["pages_shared"]),
             int(t["pages_sharing"]), saved, int(alone) * ksmmodel.PAGE]])
    w.close()


def host_table(f, a):
    """Per host number: pages, distinct_pages, saved (a pandas frame, one
    row a host)."""
    g = f.map_partitions(with_saved, a.max_page_sharing, a.use_zero_pages)
    t = g.groupby("h").agg({"pages": "sum", "key": "count", "saved": "sum"}).compute()
    return t.rename(columns={"key": "distinct_pages"})


def report_hosts(f, hosts, a):
    t = host_table(f, a)
    w = Writer(["host", "pages", "distinct_pages", "saved_bytes"], a.csv)
    w.rows([[h, int(t.at[i, "pages"]), int(t.at[i, "distinct_pages"]),
             int(t.at[i, "saved"]) * ksmmodel.PAGE] for i, h in enumerate(hosts)])
    w.close()


def pair_frame(f, kind, hosts, a):
    """The pairs that share (exact from contents, candidates estimated from
    sketches), persisted on the workers."""
    m, z = a.max_page_sharing, a.use_zero_pages
    if kind == "sketch":
        return fleetpairs.sketch_pairs(f, len(hosts), m, z).persist()
    return fleetpairs.exact_pairs(f, len(hosts), a.common, m, z).persist()


def by_gain(df, **_):
    """The pairs that gain most first, then those sharing most, then by host
    (dask's sort_values passes its own arguments: this order is the one)."""
    return df.sort_values(["saved", "shared", "a", "b"], ascending=[False, False, True, True])


SKETCH_NOTE = ("Estimated from bottom-k sketches; the error columns bound each "
               "estimate (three standard errors).")


def report_pairs(f, kind, hosts, a):
    pairs = pair_frame(f, kind, hosts, a)
    ordered = pairs.assign(neg=-pairs["saved"]).sort_values(
        "neg", sort_function=by_gain).persist()
    last = ["pages_a", "pages_b"] if kind == "contents" else ["shared_err", "saved_err"]
    w = Writer(["host_a", "host_b", "shared_contents", "saved_together_bytes"]
               + (["pages_a", "pages_b"] if kind == "contents" else
                  ["shared_contents_error", "saved_together_error"]), a.csv)
    P = ksmmodel.PAGE
    for part in each_partition(ordered):
        w.rows([[hosts[r.a], hosts[r.b], r.shared, r.saved * P] +
                ([getattr(r, last[0]), getattr(r, last[1])] if kind == "contents"
                 else [r.shared_err, r.saved_err * P])
                for r in part.itertuples(index=False)])
    w.close(SKETCH_NOTE if kind == "sketch" else None)


def report_partners(f, kind, hosts, a):
    ranked = fleetpairs.partners(pair_frame(f, kind, hosts, a), len(hosts), a.top).persist()
    w = Writer(["host", "partner", "rank", "shared_pages", "saved_bytes", "error_bytes"], a.csv)
    P = ksmmodel.PAGE
    for part in each_partition(ranked):
        w.rows([[hosts[r.host], hosts[r.partner], r.rank, r.shared_pages, r.saved * P,
                 r.saved_err * P] for r in part.itertuples(index=False)])
    w.close(SKETCH_NOTE if kind == "sketch" else None)


# --- placement ---------------------------------------------------------------------

def partner_gains(f, kind, hosts, a):
    """{host: {partner: saved pages}} from each host's top partners, both
    ways (a partner lists the host or the host lists it)."""
    ranked = fleetpairs.partners(pair_frame(f, kind, hosts, a), len(hosts), a.top)
    gain = {}
    for part in each_partition(ranked.persist()):
        for h, p, s in zip(part["host"], part["partner"], part["saved"]):
            gain.setdefault(int(h), {})[int(p)] = int(s)
            gain.setdefault(int(p), {})[int(h)] = int(s)
    return gain


def best_bin(h, pages, gain, where, used, free, capacity):
    """The bin with room where host @h gains most with its partners there
    (ties: the fullest, then the first); with no gain, the fullest bin with
    room; None for a new one."""
    g = {}
    for p, s in gain.get(h, {}).items():
        if p in where:
            g[where[p]] = g.get(where[p], 0) + s
    best = max(((s, used[b], -b) for b, s in g.items()
                if s > 0 and used[b] + pages[h] <= capacity), default=None)
    if best is not None:
        return -best[2]
    i = bisect.bisect_right(free, (capacity - pages[h], 0)) - 1
    return -free[i][1] if i >= 0 else None


def greedy_bins(pages, gain, capacity):
    """Hosts in decreasing size go to their best bin (best_bin); then their
    partners not placed yet follow them there, the best first, while it has
    room: a host's partners are known, the rest of the fleet is not.
    Return [bin of each host]."""
    used, where = [], {}
    free = []                      # (used, -bin), sorted: the fullest last

    def put(h, b):
        if b is None:
            used.append(0)
            b = len(used) - 1
        else:
            free.remove((used[b], -b))
        used[b] += pages[h]
        where[h] = b
        bisect.insort(free, (used[b], -b))
        return b

    for h in sorted(range(len(pages)), key=lambda i: (-pages[i], i)):
        if h in where:
            continue
        b = put(h, best_bin(h, pages, gain, where, used, free, capacity))
        for p, s in sorted(gain.get(h, {}).items(), key=lambda x: (-x[1], x[0])):
            if p not in where and s > 0 and used[b] + pages[p] <= capacity:
                put(p, b)
    return [where[i] for i in range(len(pages))]


def bin_saving(df, m, z):
    s = ksmmodel.saved_pages(df["pages"].to_numpy(), df["zero"].to_numpy() > 0, m, z)
    return pd.DataFrame({"bin": df["bin"].to_numpy(), "saved": s})


def bin_of(df, bins):
    return df.assign(bin=bins[df["h"].to_numpy()])


def report_placement(f, kind, hosts, a):
    import dask
    m, z = a.max_page_sharing, a.use_zero_pages
    t = host_table(f, a)
    pages = [int(t.at[i, "pages"]) for i in range(len(hosts))]
    for h, p in zip(hosts, pages):
        if p > a.capacity:
            print("%s: warning: host %s has %d pages, more than --capacity=%d: "
                  "it gets a machine of its own" % (PROG, cell(h, False), p, a.capacity),
                  file=sys.stderr)
    where = greedy_bins(pages, partner_gains(f, kind, hosts, a), a.capacity)
    bins = dask.delayed(np.array(where, dtype=np.int64), pure=True)
    # The exact saving of each machine: its hosts' contents grouped by digest.
    binned = f.map_partitions(bin_of, bins, meta=f._meta.assign(bin=np.int64(0)))
    by = binned.groupby(["bin", "key", "lo"]).agg({"pages": "sum", "zero": "max"},
                                                  split_out=max(1, f.npartitions))
    saved = by.reset_index().map_partitions(
        bin_saving, m, z, meta=pd.DataFrame({"bin": pd.Series(dtype=np.int64),
                                             "saved": pd.Series(dtype=np.int64)}))
    per_bin = saved.groupby("bin")["saved"].sum().compute()
    rows = sorted(([h, where[i], pages[i], int(per_bin.get(where[i], 0)) * ksmmodel.PAGE]
                   for i, h in enumerate(hosts)), key=lambda r: (r[1], -r[2], r[0]))
    w = Writer(["host", "bin", "pages", "saved_bytes"], a.csv)
    w.rows(rows)
    w.close()


# --- running -------------------------------------------------------------------------

MODULES = (ksmmodel, fleetread, fleetpairs, sys.modules[__name__])


def start_client(a):
    """A distributed client: the scheduler given, or a LocalCluster."""
    import cloudpickle
    from distributed import Client, LocalCluster
    for mod in MODULES:        # functions given to dask travel by value
        cloudpickle.register_pickle_by_value(mod)
    if a.scheduler:
        try:
            client = Client(a.scheduler, timeout=30)
            client.wait_for_workers(1, timeout=60)
        except (OSError, TimeoutError) as e:
            raise Failure("%s: no scheduler with a worker there: %s"
                          % (a.scheduler, str(e).splitlines()[0] if str(e) else
                             type(e).__name__), 1)
        # dask pickles some tasks (blockwise ones) with plain pickle, which
        # names functions by module: the workers, those there now and those
        # that join later, get the modules (they need not have them installed).
        for mod in MODULES:
            client.upload_file(mod.__file__)
        return client, None
    n = a.workers or os.cpu_count() or 1
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.CRITICAL)
    return Client(cluster), cluster


def run(a):
    f, kind, hosts = load(a.exports)
    if kind == "sketch" and a.report not in SKETCH_REPORTS:
        raise Failure("--report=%s needs contents exports; from sketches "
                      "ksmfleet estimates pairs and partners only" % a.report, 2)
    if a.report == "totals":
        report_totals(f, hosts, a)
    elif a.report == "hosts":
        report_hosts(f, hosts, a)
    else:
        {"pairs": report_pairs, "partners": report_partners,
         "placement": report_placement}[a.report](f, kind, hosts, a)


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
    except Exception as e:  # the cluster's, not the data's: the answer is the same
        if Writer.started:    # rows written cannot be taken back
            raise Failure("the cluster failed after the first rows were written (%s)"
                          % (str(e).splitlines()[0][:200] if str(e) else type(e).__name__), 1)
        with dask.config.set(scheduler="synchronous"):
            run(a)


def peak_rss():
    """The client's peak resident memory in MiB (VmHWM), for make bench."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


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
    except BadRow as e:
        print("%s: %s" % (PROG, cell(e.message(), False)), file=sys.stderr)
        return 1
    except Exception as e:   # also a cluster's or a library's: one line all the same
        msg = str(e).strip().splitlines()
        print("%s: %s" % (PROG, cell(msg[0] if msg else type(e).__name__, False)),
              file=sys.stderr)
        return 1
    finally:
        if client:
            client.close()
        if cluster:
            cluster.close()
        if os.environ.get("KSMFLEET_PEAK_RSS"):
            print("%s: client peak RSS %.1f MiB" % (PROG, peak_rss()), file=sys.stderr)
