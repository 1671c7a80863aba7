"""Rows out: CSV (RFC 4180) or a table for people in 80 columns, with
names shown as ksmscan shows them.

A name (a host's) may hold anything a file may: it is shown with each
control character (C0 with NUL, DEL, C1) and each bidirectional control
(U+200E-U+200F, U+202A-U+202E, U+2066-U+2069) as '?', and each byte that is
not UTF-8 (read.py keeps it as a surrogate) as \\xHH, so that every output
is valid UTF-8 and no name can move the cursor, recolour a terminal or
reorder what a person reads. A NUL is shown, never the end of the name.
In CSV, a name a spreadsheet would take for a formula (a leading = + - @,
tab or CR) is written after a single quote, as OWASP recommends.

A table's columns are as wide as the header and the first rows need
(rows are written as they come), a name column at most 30 (a longer name
shows "…" and its end, which says most), narrowed down to 16 before a
column of figures is left out; columns that still do not fit 80 are left
out, named in a note after the table (--csv shows every column).
"""
import csv
import sys
import textwrap

import numpy as np

WIDTH = 80
NAME_COLS = 30
MIN_NAME = 16           # a name column narrowed to fit: its last 15 characters
FORMULA = ("=", "+", "-", "@", "\t", "\r")
UNSAFE = set(range(0x20)) | {0x7f} | set(range(0x80, 0xa0)) | {0x200e, 0x200f} \
    | set(range(0x202a, 0x202f)) | set(range(0x2066, 0x206a))


def shown(name):
    """@name as every output shows it: '?' for controls, \\xHH for bytes
    that are not UTF-8."""
    out = []
    for ch in str(name):
        c = ord(ch)
        if 0xdc80 <= c <= 0xdcff:
            out.append("\\x%02x" % (c - 0xdc00))
        elif c in UNSAFE or 0xd800 <= c <= 0xdfff:
            out.append("?")
        else:
            out.append(ch)
    return "".join(out)


def shorten(text, cols=NAME_COLS):
    """@text in at most @cols columns: "…" and its end if longer."""
    return text if len(text) <= cols else "\u2026" + text[len(text) - cols + 1:]


def cell(v, as_csv):
    """A cell as text: numbers as they are, names shown safely."""
    if v is None:
        return ""
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    text = shown(v)
    return "'" + text if as_csv and text.startswith(FORMULA) else text


def is_number(v):
    return isinstance(v, (int, np.integer))


class Output:
    """A run's standard output: CSV or tables for people, and whether a row
    went out already (then the run cannot start again)."""

    def __init__(self, as_csv):
        self.csv, self.started = as_csv, False


class Writer:
    """Rows to stdout as they come, CSV or a table for people (@output)."""

    def __init__(self, cols, output, names=()):
        self.cols, self.csv, self.names = cols, output.csv, set(names)
        self.output = output
        self.width = self.keep = self.num = None
        if self.csv:
            self.out = csv.writer(sys.stdout, lineterminator="\r\n")

    def rows(self, rows):
        self.output.started = True
        if self.csv:
            if self.width is None:
                self.width = True
                self.out.writerow(self.cols)
            self.out.writerows([[cell(v, True) for v in r] for r in rows])
            return
        text = [[self.text(i, v) for i, v in enumerate(r)] for r in rows]
        if self.width is None:
            self.layout(rows, text)
        for r in text:
            self.line(r)

    def text(self, i, v):
        t = cell(v, False)
        return shorten(t) if self.cols[i] in self.names else t

    def narrow_names(self):
        """Name columns give up width (down to MIN_NAME) before a column
        of figures is left out."""
        names = [i for i, c in enumerate(self.cols) if c in self.names]
        over = sum(self.width) + 2 * (len(self.cols) - 1) - WIDTH
        while over > 0 and names:
            i = max(names, key=lambda j: self.width[j])
            if self.width[i] <= max(MIN_NAME, len(self.cols[i])):
                break
            self.width[i] -= 1
            over -= 1

    def layout(self, rows, text):
        """The columns' widths and alignment from the first rows; the
        columns that fit WIDTH, left to right."""
        n = len(self.cols)
        self.num = [bool(rows) and all(is_number(r[i]) or r[i] is None for r in rows)
                    for i in range(n)]
        self.width = [max([len(c)] + [len(r[i]) for r in text]) for i, c in enumerate(self.cols)]
        self.narrow_names()
        self.keep, used = [], -2
        for i in range(n):
            if used + 2 + self.width[i] > WIDTH:
                break
            self.keep.append(i)
            used += 2 + self.width[i]
        self.line(self.cols)

    def line(self, r):
        r = [shorten(t, self.width[i]) if self.cols[i] in self.names else t
             for i, t in enumerate(r)]
        print("  ".join(r[i].rjust(self.width[i]) if self.num[i] else r[i].ljust(self.width[i])
                        for i in self.keep).rstrip())

    def close(self, note=None):
        if self.width is None:
            self.rows([])
        if self.csv:
            return
        left = [c for i, c in enumerate(self.cols) if i not in self.keep]
        if left or note:
            print()
        if left:
            print("\n".join(textwrap.wrap("Left out to fit %d columns (--csv shows them): %s"
                                          % (WIDTH, ", ".join(left)), WIDTH)))
        if note:
            print(note)


def one_row(cols, values, output):
    """A report of one row: CSV as any other, a person reads it as one
    figure a line."""
    if output.csv:
        w = Writer(cols, output)
        w.rows([values])
        return
    for c, v in zip(cols, values):
        print("%-*s  %s" % (max(map(len, cols)), c, cell(v, False)))
