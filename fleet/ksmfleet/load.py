"""The exports as one Dask frame of numbered hosts, checked across rows.

read.py checks each row on the workers; what needs the rows of a whole
host, which may span partitions (and, by mistake, exports), is checked
here from a summary of each partition (a few numbers per host and
partition, never a row): a host in two exports, the fleet's pages past
2^51, and for sketches the rows a host's sketch must have.

A host's rows are those of its name (the `host` column, else `input`).
A host of several inputs (a whole-host export: --all-processes, -P, -p
given several times) has, in a contents export, one row per content of
each input: its contents are their sums, grouped here by digest. In a
sketch export it has its inputs' sketches and the sketch of all of them
(input `*`), which alone is the host's: it is kept, the others dropped.

Errors name the file and the line: the line of a row is found by counting
the rows of its export in the partitions before it, only when there is an
error to report.
"""
import os

import numpy as np
import pandas as pd

from . import read
from .errors import BadRow, Failure


def export_kind(path):
    """('contents' or 'sketch', whether it is zstd, its columns after the
    four (read.columns(): 0, 1 the host, 2 the host and frames)), from the
    header."""
    line, zstd = read.header(path)
    cols = line.split(",")
    for kind, want in read.COLUMNS.items():
        if cols in (want, want + [read.HOST], want + [read.HOST, read.FRAMES]):
            return kind, zstd, len(cols) - 4
        if cols[:4] == want:
            raise BadRow(path, "a header of %d columns: a %s export has %s and maybe %s "
                         "and %s" % (len(cols), kind, ", ".join(want), read.HOST,
                                     read.FRAMES), 0, 1)
    raise BadRow(path, "not a ksmscan contents or sketch export (header %r)"
                 % line[:80], 0, 1)


def star_of(df, tail):
    """Per row: is it of a sketch of all of a host's inputs?"""
    col = df["input"]
    if isinstance(col.dtype, pd.CategoricalDtype):       # its codes: no string compared
        cats = col.cat.categories
        star = (col.cat.codes.to_numpy() == cats.get_loc(read.ALL_INPUTS)
                if read.ALL_INPUTS in cats else np.zeros(len(col), dtype=bool))
    else:
        star = (col.astype(object) == read.ALL_INPUTS).to_numpy()
    return star & (tail[df["file"].to_numpy()] > 0)


def summary(df, tail):
    """Per export, host and kind of row (its own or `*`), in order of
    appearance: [file, host, star, rows, pages, min and max distinct,
    first distinct, first input, inputs]."""
    if not len(df):
        return []
    host, inp = df["host"].array, df["input"].array     # names as codes: fast to group
    d = pd.DataFrame({"file": df["file"].to_numpy(), "host": host.codes,
                      "star": star_of(df, tail), "pages": df["pages"].to_numpy(),
                      "input": inp.codes,
                      "distinct": df["distinct"].to_numpy() if "distinct" in df else 0})
    g = d.groupby(["file", "host", "star"], sort=False)
    t = g.agg(rows=("pages", "size"), pages=("pages", "sum"), dmin=("distinct", "min"),
              dmax=("distinct", "max"), dfirst=("distinct", "first"),
              first_input=("input", "first"), inputs=("input", "nunique"))
    hn, im = host.categories, inp.categories
    return [[int(f), str(hn[h]), bool(s), int(r), int(p), int(a), int(b), int(c), str(im[i]),
             int(n)] for (f, h, s), r, p, a, b, c, i, n in zip(
                 t.index, t["rows"], t["pages"], t["dmin"], t["dmax"], t["dfirst"],
                 t["first_input"], t["inputs"])]


def find_row(df, fileno, host, star, tail, test):
    """The row (from 0, among the export's rows in this partition) of
    @host's first row (of the kind @star) that passes @test: ("any",),
    ("distinct_not", v), ("input_not", name), ("nth", k) or ("room", pages)
    (where the pages of the export's rows pass it)."""
    mine = (df["file"] == fileno).to_numpy()
    g = df[mine]
    if test[0] == "room":
        return int(np.searchsorted(np.cumsum(g["pages"].to_numpy()), test[1], side="right"))
    sel = (g["host"].astype(object) == host).to_numpy() & (star_of(g, tail) == star)
    if test[0] == "distinct_not":
        sel &= g["distinct"].to_numpy() != test[1]
    elif test[0] == "input_not":
        sel &= (g["input"].astype(object) != test[1]).to_numpy()
    rows = np.flatnonzero(sel)
    return int(rows[test[1] if test[0] == "nth" else 0])


class Tally:
    """What the summaries say of the fleet, partition after partition."""

    def __init__(self, parts, paths, tail):
        self.parts, self.paths, self.tail = parts, paths, tail
        self.where = {}            # host -> its export
        self.recs = {}             # (host, star) -> [(partition, summary row)]
        self.rows_in = {}          # (partition, export) -> its rows before
        self.seen = {}             # export -> its rows so far
        self.total = 0

    def fail(self, n, f, host, star, test, what):
        import dask
        r = dask.compute(dask.delayed(find_row)(self.parts[n], f, host, star,
                                                self.tail, test))[0]
        raise BadRow(self.paths[f], what, 0, self.rows_in[(n, f)] + r + 2)

    def add(self, n, per):
        for f in dict.fromkeys(x[0] for x in per):
            self.rows_in[(n, f)] = self.seen.get(f, 0)
        for f, host, star, rows, pages, *rest in per:
            if self.where.setdefault(host, f) != f:
                self.fail(n, f, host, star, ("any",), "host %s is in two exports: %s and %s "
                          "(ksmscan --host names a host)" % (host, self.paths[self.where[host]],
                                                            self.paths[f]))
            if self.total + pages > read.MAX_TOTAL:
                self.fail(n, f, host, star, ("room", read.MAX_TOTAL - self.total + self.pages_in(n, f)),
                          "the fleet's pages pass 2^51 (8 EiB)")
            self.total += pages
            self.seen[f] = self.seen.get(f, 0) + rows
            self.recs.setdefault((host, star), []).append((n, [f, host, star, rows, pages] + rest))

    def pages_in(self, n, f):
        """The pages of export @f's rows in partition @n counted so far."""
        return sum(r[4] for (h, s), lst in self.recs.items() for m, r in lst
                   if m == n and r[0] == f)

    def hosts(self):
        return list(self.where)

    def starred(self, host):
        return (host, True) in self.recs

    def several_inputs(self, host):
        """Does @host (its own rows) come from more than one input?"""
        recs = self.recs.get((host, False), [])
        return any(r[9] > 1 or r[8] != recs[0][1][8] for _, r in recs)

    def check_sketch(self, host):
        """A host's sketch: of one input (or `*`), one distinct count, no
        more rows than that count."""
        star = self.starred(host)
        recs = self.recs[(host, star)]
        if not star and self.several_inputs(host):
            first = recs[0][1][8]
            n, r = next((n, r) for n, r in recs if r[9] > 1 or r[8] != first)
            self.fail(n, r[0], host, False, ("input_not", first),
                      "host %s has the sketches of several inputs but not that of all of "
                      "them (input *, written by ksmscan -r sketch)" % host)
        d0 = recs[0][1][7]
        for n, r in recs:
            if r[5] != d0 or r[6] != d0:
                self.fail(n, r[0], host, star, ("distinct_not", d0),
                          "host %s's distinct_pages differs from its first row's (%d)" % (host, d0))
        done = 0
        for n, r in recs:
            if done + r[3] > d0:
                self.fail(n, r[0], host, star, ("nth", d0 - done),
                          "host %s has more sketch rows than its distinct_pages (%d)" % (host, d0))
            done += r[3]


def numbered(df, code, starred, tail):
    """The rows with h, the host's number, in place of its names and export;
    of a host with a sketch of all its inputs, only that sketch's rows."""
    names = df["host"].cat.categories
    to = np.array([code[str(c)] for c in names], dtype=np.int64)
    h = to[df["host"].cat.codes.to_numpy()] if len(names) else np.zeros(0, np.int64)
    keep = star_of(df, tail) == starred[h]
    cols = [c for c in df.columns if c not in ("host", "input", "file")]
    if keep.all():                    # one copy of the columns, not three
        return pd.DataFrame({**{c: df[c].to_numpy() for c in cols}, "h": h}, index=df.index)
    return pd.DataFrame({**{c: df[c].to_numpy()[keep] for c in cols}, "h": h[keep]},
                        index=df.index[keep])


def merged(df):
    """A host's contents of several inputs: pages and frames summed per
    digest."""
    return df.groupby(["h", "key", "lo"], as_index=False, sort=False).agg(
        {"pages": "sum", "frames": "sum", "zero": "max"})


def load(paths):
    """The exports as one Dask frame on the workers (h, key, lo, pages,
    frames, zero, and distinct for sketches); their kind; the hosts in
    order."""
    import dask
    import dask.dataframe as dd
    heads = [export_kind(p) for p in paths]
    if len({k for k, _, _ in heads}) > 1:
        raise Failure("contents and sketch exports cannot be mixed", 2)
    kind = heads[0][0]
    tail = np.array([t for _, _, t in heads], dtype=np.int64)
    sized = [(p, z, os.path.getsize(p)) for p, (_, z, _) in zip(paths, heads)]
    parts = [dask.delayed(read.read_partition)(items, kind, tail)
             for items in read.partitions(sized, read.piece_size())]
    raw = dd.from_delayed(parts, meta=read.meta(kind), verify_meta=False).persist()
    tally = Tally(raw.to_delayed(), paths, tail)
    sums = dask.compute(*[dask.delayed(summary)(p, tail) for p in tally.parts])
    for n, per in enumerate(sums):
        tally.add(n, per)
    hosts = tally.hosts()
    if kind == "sketch":
        for h in hosts:
            tally.check_sketch(h)
    code = dask.delayed({h: i for i, h in enumerate(hosts)}, pure=True)
    starred = dask.delayed(np.array([tally.starred(h) for h in hosts] or [False]), pure=True)
    meta = numbered(read.meta(kind), {}, np.zeros(1, bool), tail)
    frame = raw.map_partitions(numbered, code, starred, tail, meta=meta)
    if kind == "contents" and any(tally.several_inputs(h) for h in hosts):
        frame = frame.map_partitions(merged, meta=merged(meta)).shuffle(
            "key", npartitions=frame.npartitions).map_partitions(merged, meta=merged(meta))
    return frame.persist(), kind, hosts
