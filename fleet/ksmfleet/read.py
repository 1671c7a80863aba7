r"""Reading ksmscan's exports, row by row checked, on the workers.

An export is cut into pieces (a zstd export whole, read as a stream with
the line bound and a bound on its decompressed size; a plain one in pieces
of about 64 MiB, cut between records: a quoted newline stays inside its
name), and pieces
are packed into partitions of about 64 MiB, so that 10,000 small sketches
make some 50 partitions, not 10,000 tasks. A partition's rows keep only
numbers (16 bytes of digest as two uint64, counts) and the host's name as a
pandas category: about 40 bytes a row on a worker.

The host of a row is its `host` column (ksmscan --host, by default the
machine's name), or, in an export without one (an older ksmscan's), its
`input`: one host per input. A sketch of several inputs of one host also
holds the sketch of all of them (input `*`), which is the host's (load.py
keeps those rows for such a host).

Names are read as UTF-8; a byte that is not (a process named `\xff`) is
kept as a surrogate (Python's surrogateescape) for output.py to show as
`\xHH`, and a NUL byte is kept too (pandas' reader would end the field
there): replaced by a character the piece does not hold while pandas
reads, and put back.

A partition's pieces are read as one text, straight from the bytes with
numpy (fast_rows): the lines' commas found at once, the digests' 32 hex
digits taken 8 bytes at a time as two words, the counts as digits, the
names decoded once per run of rows of one name. That takes every line as
ksmscan writes it (no quote, NUL or lone CR) and checks each field as
the slow way does. Anything else (a defect, a quoted name) sends the
partition the slow way, piece by piece: pandas' CSV reader with every
field as text, which also finds the first defect and its line.

Every defect is a BadRow: the file, what is wrong and the line, so that the
user reads `ksmfleet: FILE: what, at line N`.
"""
import io
import os
import re

import numpy as np
import pandas as pd

from .errors import BadRow

# A row is some 60 bytes and a host name (at most PATH_MAX, 4096 bytes):
# a longer line is not an export's, and reading one costs time for nothing.
MAX_LINE = 16384
# A host name (the host column, ksmscan --host) is 1 to HOST_MAX bytes, any
# but NUL: ksmscan refuses a longer --host by the same rule.
HOST_MAX = 4096
# A count is a page count of one content (or one host's distinct contents):
# 2^40 pages are 4 PiB. The fleet's pages must stay below 2^51 (8 EiB), so
# that every sum and every byte figure (pages * 4096) fits in an int64.
MAX_COUNT = 1 << 40
MAX_TOTAL = 1 << 51
BLOCK = 64 << 20
CHUNK = 1 << 20          # bytes read at a time where a file is read as a stream
ZSTD_MAX_RATIO = 1024    # MAX_LINE / 16: see zstd_text()
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ZSTD_RATIO = 4           # a zstd export's share of a partition: 4 times its size
DIGEST_RE = r"0x[0-9a-f]{32}"
COUNT_RE = r"[0-9]{1,16}"
# XXH3-128 (seed 0) of the zero page: sketches carry no zero column.
ZERO_DIGEST = "0x3ee8dc4f9e7ee49593d76fe148c689ba"
ZERO_KEY = np.uint64(int(ZERO_DIGEST[2:18], 16))
COLUMNS = {
    "contents": ["input", "digest", "pages", "zero"],
    "sketch": ["input", "digest", "pages", "distinct_pages"],
}
HOST = "host"           # the column after those, in exports that name their host
# The column after the host in exports of live processes: the content's
# distinct frames (pages counts its mappings); in others each page is a frame.
FRAMES = "frames"
ALL_INPUTS = "*"        # a sketch's rows of all the host's inputs


def columns(kind, tail):
    """The columns an export of @kind holds, with @tail (0 to 2) of those
    after the four: the host, then the frames."""
    return COLUMNS[kind] + [HOST, FRAMES][:tail]


def open_text(path, zstd):
    import zstandard
    f = open(path, "rb")
    return zstandard.ZstdDecompressor().stream_reader(f, closefd=True) if zstd else f


def header(path):
    """The first line of an export, plain or zstd, and whether it is zstd;
    a first line longer than MAX_LINE is refused."""
    with reading(path):
        with open(path, "rb") as f:
            zstd = f.read(4) == ZSTD_MAGIC
        with open_text(path, zstd) as f:
            raw = f.read(MAX_LINE + 1)
    line = raw.split(b"\n", 1)[0]
    if len(line) > MAX_LINE:
        raise BadRow(path, "a line longer than %d bytes" % MAX_LINE, 0, 1)
    return line.rstrip(b"\r").decode("utf-8", "surrogateescape"), zstd


class reading:
    """A block that reads @path: an OSError in it (a file that cannot be
    opened or read: a directory, EACCES, EIO) or a damaged zstd frame is
    one BadRow naming the file, with no line."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, kind, e, tb):
        if kind is None or issubclass(kind, BadRow) or not issubclass(kind, Exception):
            return False
        if issubclass(kind, OSError):
            raise BadRow(self.path, "cannot read: %s" % (e.strerror or e), None) from None
        raise BadRow(self.path, "cannot decompress: %s" % e, None) from None


def piece_size():
    """The size of a plain export's pieces and of a partition: BLOCK, or
    KSMFLEET_PIECE bytes (for the tests: a small export cut in pieces)."""
    v = os.environ.get("KSMFLEET_PIECE", "")
    return int(v) if v.isdigit() and 4096 <= int(v) <= BLOCK else BLOCK


def cuts(path, size, block):
    """The offsets where a plain export of @size bytes is cut into pieces of
    about @block bytes: each just after a newline that ends a record (an
    even number of quotes before it, so that a quoted newline stays inside
    its name). The export is read once, here, in CHUNK bytes at a time; a
    line longer than MAX_LINE, or a quote left open for @block bytes, is
    refused at its line."""
    out, want = [0], block
    parity, pos, last_nl, last_rec, lines, rec_line = 0, 0, -1, -1, 0, 0
    with reading(path), open(path, "rb") as f:
        while pos < size:
            a = np.frombuffer(f.read(min(CHUNK, size - pos)), dtype=np.uint8)
            if not len(a):
                break
            q = (np.cumsum(a == 34) + parity) & 1
            nl = np.flatnonzero(a == 10)
            lens = np.diff(np.concatenate(([last_nl - pos], nl, [len(a)]))) - 1
            long = np.flatnonzero(lens > MAX_LINE)
            if len(long):
                raise BadRow(path, "a line longer than %d bytes" % MAX_LINE, 0,
                             lines + int(long[0]) + 1)
            rec = nl[q[nl] == 0]
            ends = rec + pos + 1
            while True:
                k = int(np.searchsorted(ends, want))
                if k == len(ends) or ends[k] >= size:
                    break
                out.append(int(ends[k]))
                want = out[-1] + block
            if len(rec):
                last_rec, rec_line = pos + int(rec[-1]), lines + int(np.searchsorted(nl, rec[-1])) + 1
            if pos + len(a) - last_rec > block:
                raise BadRow(path, "a quote left open for %d bytes" % block, 0, rec_line + 1)
            parity = int(q[-1])
            last_nl = pos + int(nl[-1]) if len(nl) else last_nl
            lines += len(nl)
            pos += len(a)
    return out


def pieces(path, zstd, size, block=BLOCK):
    """(path, zstd, start, end) byte ranges of one export (end None: to its
    end), cut between records."""
    if zstd or size <= block:
        return [(path, zstd, 0, None)]
    at = cuts(path, size, block)
    return [(path, zstd, s, e) for s, e in zip(at, at[1:] + [None])]


def partitions(exports, block=BLOCK):
    """Pack the pieces of [(path, zstd, size)] into partitions of about
    @block bytes of text: [[(file number, piece), ...], ...]."""
    out, cur, used = [], [], 0
    for i, (path, zstd, size) in enumerate(exports):
        for p in pieces(path, zstd, size, block):
            weight = size * ZSTD_RATIO if zstd else (p[3] or size) - p[2]
            if cur and used + weight > block:
                out.append(cur)
                cur, used = [], 0
            cur.append((i, p))
            used += weight
    return out + ([cur] if cur else [])


def zstd_text(path):
    """The text of a zstd export, read as a stream CHUNK bytes at a time:
    a line longer than MAX_LINE is refused at its line as soon as it is
    seen, and so is more text than ZSTD_MAX_RATIO times the compressed
    size (a row holds a digest of 16 random bytes, which no compressor
    shrinks, and is at most MAX_LINE bytes): a zstd bomb costs some MiB."""
    limit = ZSTD_MAX_RATIO * max(os.path.getsize(path), 1 << 10)
    parts, total, run, lines = [], 0, 0, 0
    with open_text(path, True) as f:
        while True:
            chunk = f.read(CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise BadRow(path, "decompresses to more than %d times its size: not an "
                             "export (a zstd bomb?)" % ZSTD_MAX_RATIO, None)
            nl = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
            lens = np.diff(np.concatenate(([-1 - run], nl, [len(chunk)]))) - 1
            long = np.flatnonzero(lens > MAX_LINE)
            if len(long):
                raise BadRow(path, "a line longer than %d bytes" % MAX_LINE, 0,
                             lines + int(long[0]) + 1)
            run = len(chunk) - 1 - int(nl[-1]) if len(nl) else run + len(chunk)
            lines += len(nl)
            parts.append(chunk)
    return b"".join(parts)


def piece_text(path, zstd, start, end):
    """The bytes of a piece (a zstd export: all of it; a plain one: bytes
    [start, end), which begin and end between records) and its first
    byte's offset."""
    if zstd:
        return zstd_text(path), 0
    with open(path, "rb") as f:
        f.seek(start)
        return (f.read() if end is None else f.read(end - start)), start


def check_lines(data, path, start):
    """Refuse a line longer than MAX_LINE, naming it."""
    nl = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    ends = np.append(nl, len(data))
    lengths = np.diff(np.insert(ends, 0, -1)) - 1
    long = np.flatnonzero(lengths > MAX_LINE)
    if len(long):
        raise BadRow(path, "a line longer than %d bytes" % MAX_LINE, start, int(long[0]) + 1)


def counts(col, low, high):
    """A column of decimal counts as int64, and the rows that are not one
    from @low to @high (inf, nan, negative, fractions, too large)."""
    ok = col.str.fullmatch(COUNT_RE)
    v = pd.to_numeric(col.where(ok, "0")).astype(np.int64)
    return v, ~ok | (v < low) | (v > high)


def first_defect(df, kind):
    """(row, what) of the first defective row, or None."""
    df = df.fillna("")        # a row with fewer fields than the header
    found = []
    digest_bad = ~df["digest"].str.fullmatch(DIGEST_RE)
    found.append((digest_bad, lambda r: "digest %r is not 0x and 32 lower-case hex "
                  "digits" % df["digest"].iat[r][:40]))
    pages, bad = counts(df["pages"], 1, MAX_COUNT)
    found.append((bad, lambda r: "pages %r is not a count from 1 to 2^40"
                  % df["pages"].iat[r][:40]))
    col = COLUMNS[kind][3]
    top = 1 if kind == "contents" else MAX_COUNT
    _, bad = counts(df[col], 0, top)
    found.append((bad, lambda r: "%s %r is not %s" % (
        col, df[col].iat[r][:40], "0 or 1" if top == 1 else "a count up to 2^40")))
    found.append((df["input"] == "", lambda r: "a row without input"))
    if HOST in df.columns:
        found.append((df[HOST] == "", lambda r: "a row without host"))
        found.append((host_bytes(df[HOST]) > HOST_MAX, lambda r: "a host name longer "
                      "than %d bytes" % HOST_MAX))
    if FRAMES in df.columns:
        frames, bad = counts(df[FRAMES], 0, MAX_COUNT)
        found.append((bad | (frames > pages), lambda r: "frames %r is not a count "
                      "from 0 to the row's pages" % df[FRAMES].iat[r][:40]))
    best = None
    for mask, what in found:
        rows = np.flatnonzero(mask.to_numpy())
        if len(rows) and (best is None or rows[0] < best[0]):
            best = (int(rows[0]), what)
    return None if best is None else (best[0], best[1](best[0]))


def host_bytes(col):
    """The length of each name in bytes (as the export holds it)."""
    return col.map(lambda x: len(x.encode("utf-8", "surrogateescape")))


def digest_words(col):
    """The digests as two uint64 columns (key: the first 64 bits, which
    order sketches; lo: the other 64), or None if one is not 0x and 32
    lower-case hex digits. Checked on the bytes of the column at once."""
    raw = col.str.cat().encode("utf-8", "surrogateescape") if len(col) else b""
    if len(raw) != 34 * len(col):
        return None
    a = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 34)
    hexd = a[:, 2:]
    if not ((a[:, 0] == 48).all() and (a[:, 1] == 120).all()
            and (((hexd >= 48) & (hexd <= 57)) | ((hexd >= 97) & (hexd <= 102))).all()):
        return None
    words = np.frombuffer(bytes.fromhex(hexd.tobytes().decode()), dtype=">u8")
    return words.astype(np.uint64).reshape(-1, 2)


def whole_numbers(col, low, high):
    """A column of decimal counts from @low to @high as int64, or None if
    one is not (inf, nan, negative, a fraction, a blank): its bytes checked
    at once."""
    if not len(col):
        return np.zeros(0, dtype=np.int64)
    if col.str.len().max() > 16:      # 2^40 has 13 digits; 2^64 would not parse
        return None
    raw = np.frombuffer(col.str.cat(sep="\n").encode("utf-8", "surrogateescape"),
                        dtype=np.uint8)
    digit, nl = (raw >= 48) & (raw <= 57), raw == 10
    if (not raw.size or not (digit | nl).all() or int(nl.sum()) != len(col) - 1 or not digit[0]
            or not digit[-1] or (nl[1:] & nl[:-1]).any()):
        return None
    v = pd.to_numeric(col).to_numpy()
    if v.dtype.kind not in "iu" or (v < low).any() or (v > high).any():
        return None
    return v.astype(np.int64)


def typed(df, kind, fileno, tail):
    """The rows as numbers, or None if a row is defective (first_defect
    then says which and why)."""
    words = digest_words(df["digest"])
    pages = whole_numbers(df["pages"], 1, MAX_COUNT)
    fourth = whole_numbers(df[COLUMNS[kind][3]], 0, 1 if kind == "contents" else MAX_COUNT)
    name = df[HOST] if tail else df["input"]
    frames = whole_numbers(df[FRAMES], 0, MAX_COUNT) if tail > 1 else pages
    if frames is not None and pages is not None and (frames > pages).any():
        frames = None
    if (words is None or pages is None or fourth is None or frames is None
            or (df["input"] == "").any()
            or (name == "").any() or (tail and (host_bytes(name) > HOST_MAX).any())):
        return None
    out = pd.DataFrame({"file": np.full(len(df), fileno, dtype=np.int32),
                        "host": name.to_numpy(), "input": df["input"].to_numpy(),
                        "key": words[:, 0], "lo": words[:, 1], "pages": pages,
                        "frames": frames})
    if kind == "sketch":
        out["zero"] = (out["key"] == ZERO_KEY).astype(np.int64)
        out["distinct"] = fourth
    else:
        out["zero"] = fourth
    return out


def nul_stand_in(data):
    """A character (UTF-8) that @data does not hold, to stand for NUL."""
    for c in range(0xe000, 0xf900):
        if chr(c).encode() not in data:
            return chr(c)
    raise ValueError("no private-use character is free")   # 6400 of them: never


def parse(data, path, cols, off, has_header):
    """pandas' reading of a piece; a CSV defect is a BadRow. Read without a
    header (the export's was checked by load.export_kind), so that a row of
    more fields than the header is named as such: with one, pandas would
    take a first extra field as the index and shift the others."""
    nul = nul_stand_in(data) if b"\0" in data else None
    if nul:
        data = data.replace(b"\0", nul.encode())
    try:
        df = pd.read_csv(io.BytesIO(data), header=None, dtype=str, index_col=False,
                         keep_default_na=False, na_filter=False,
                         encoding="utf-8", encoding_errors="surrogateescape")
    except pd.errors.EmptyDataError:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as e:
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(e))
        if m:
            raise BadRow(path, "a row of %s fields, where the header has %d" % (
                m.group(3), len(cols)), off, int(m.group(2)))
        m = re.search(r"line (\d+)", str(e))
        raise BadRow(path, "not CSV as ksmscan writes it (%s)" % str(e).split(". ")[-1][:80],
                     off, int(m.group(1)) if m else 1)
    if df.shape[1] != len(cols):
        raise BadRow(path, "a row of %d fields, where the header has %d" % (
            df.shape[1], len(cols)), off, 1)
    df.columns = cols
    if has_header:
        df = df.iloc[1:].reset_index(drop=True)
    if nul:
        for c in ("input", HOST):
            if c in df.columns:
                df[c] = df[c].str.replace(nul, "\0", regex=False)
    return df


def piece_bytes(piece):
    """piece_text(), its errors as BadRows."""
    with reading(piece[0]):
        return piece_text(*piece)


def read_piece(fileno, piece, kind, tail, text=None):
    """The rows of one piece (@text: its piece_bytes(), if read already)."""
    path, zstd, start, end = piece
    data, off = text or piece_bytes(piece)
    out = fast_typed(data, kind, fileno, tail, start == 0)
    if out is not None:
        return out
    check_lines(data, path, off)     # the slow path: it names the defect
    df = parse(data, path, columns(kind, tail), off, start == 0)
    out = typed(df, kind, fileno, tail)
    if out is None:   # the row by row check, to name the first defect
        bad = first_defect(df, kind) or (0, "a defective row")
        raise BadRow(path, bad[1], off, bad[0] + (2 if start == 0 else 1))
    return out


# --- the fast path: bytes read as numbers at once ------------------------------------

NIBBLE = np.full(256, 255, dtype=np.uint8)
NIBBLE[np.frombuffer(b"0123456789abcdef", dtype=np.uint8)] = np.arange(16, dtype=np.uint8)
POW10 = 10 ** np.arange(15, -1, -1, dtype=np.int64)
SPAN = np.arange(16)


def words8(data):
    """Every 8 bytes of @data from each offset as one uint64 (little-endian):
    an unaligned view, no copy."""
    return np.ndarray(shape=(len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))


def bytes16(w8, at):
    """The 16 bytes from offset @at of each row: an (n, 16) uint8 array."""
    return np.stack([w8[at], w8[at + 8]], axis=1).view(np.uint8)


def digests(w8, at):
    """The 32 hex digits from byte @at of each row as (key, lo) uint64, or
    None if one is not a lower-case hex digit."""
    nib = NIBBLE[np.concatenate([bytes16(w8, at), bytes16(w8, at + 16)], axis=1)]
    if len(nib) and nib.max() > 15:
        return None
    packed = np.ascontiguousarray((nib[:, 0::2] << 4) | nib[:, 1::2])
    words = packed.view(">u8").astype(np.uint64)
    return words[:, 0], words[:, 1]


def decimal(w8, s, e, low, high):
    """The decimal counts in bytes [s, e) of each row (s >= 16) as int64,
    or None if one is not 1 to 16 digits from @low to @high."""
    n = e - s
    if not len(n) or n.min() < 1 or n.max() > 16:
        return None
    top = int(n.max())                        # digits of the longest
    d = bytes16(w8, e - 16)[:, 16 - top:] - np.uint8(48)   # not a digit: > 9
    inside = SPAN[None, :top] >= (top - n)[:, None]
    if (d[inside] > 9).any():
        return None
    v = (d * inside).astype(np.int64) @ POW10[16 - top:]
    if v.min() < low or v.max() > high:
        return None
    return v


def names(data, buf, s, e):
    """The names in bytes [s, e) of each row as a pandas Categorical (sorted
    categories, as astype("category") makes them), or None if one is empty.
    A row whose name is its previous row's (same length, same bytes) is
    found at once; the names are then decoded once per run of rows."""
    n = e - s
    if not len(n) or n.min() < 1:
        return None
    same = np.zeros(len(s), dtype=bool)
    same[1:] = n[1:] == n[:-1]
    active, j = np.flatnonzero(same), 0
    while len(active):
        ok = buf[s[active] + j] == buf[s[active - 1] + j]
        same[active[~ok]] = False
        active = active[ok]
        j += 1
        active = active[n[active] > j]
    runs = np.flatnonzero(~same)
    code, which = {}, []
    for r, a, b in zip(runs.tolist(), s[runs].tolist(), e[runs].tolist()):
        which.append(code.setdefault(data[a:b], len(code)))
    text = [b.decode("utf-8", "surrogateescape") for b in code]
    order = sorted(range(len(text)), key=text.__getitem__)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    codes = np.repeat(rank[np.array(which, dtype=np.int64)], np.diff(np.append(runs, len(s))))
    return pd.Categorical.from_codes(codes, categories=[text[i] for i in order])


def body(data, cols, has_header):
    """The rows' bytes of a piece, ending in a newline: after its header
    (which must be @cols exactly), or None."""
    if has_header:
        cut = data.find(b"\n")
        if cut < 0 or data[:cut].rstrip(b"\r") != ",".join(cols).encode():
            return None
        data = data[cut + 1:]
    return data if not data or data.endswith(b"\n") else data + b"\n"


def fast_rows(data, kind, tail):
    """The rows of @data (lines ending in a newline, no header) as
    typed() makes them but for the file column, when every line is as
    ksmscan writes it: no quote, NUL or lone CR, within MAX_LINE, its
    columns' commas, a digest of 0x and 32 lower-case hex digits, counts
    of digits in range, names not empty. Anything else is None: the slow
    way reads it as pandas does and names the first defect."""
    k = len(columns(kind, tail)) - 1
    if not data or b'"' in data or b"\0" in data:
        return None
    buf = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    starts = np.empty(len(nl), dtype=np.int64)
    starts[0], starts[1:] = 0, nl[:-1] + 1
    if (nl - starts).max() > MAX_LINE:
        return None
    cr = buf[nl - 1] == 13
    ends = nl - cr
    if (ends <= starts).any() or int(np.count_nonzero(buf == 13)) != int(cr.sum()):
        return None
    comma = np.flatnonzero(buf == 44)
    if len(comma) != k * len(nl) or (np.diff(np.searchsorted(comma, nl), prepend=0) != k).any():
        return None
    c = comma.reshape(-1, k)
    d0 = c[:, 0] + 1
    if ((c[:, 1] - d0) != 34).any() or (buf[d0] != 48).any() or (buf[d0 + 1] != 120).any():
        return None
    w8 = words8(data)
    dig = digests(w8, d0 + 2)
    pages = decimal(w8, c[:, 1] + 1, c[:, 2], 1, MAX_COUNT)
    fourth = decimal(w8, c[:, 2] + 1, c[:, 3] if tail else ends,
                     0, 1 if kind == "contents" else MAX_COUNT)
    host_end = c[:, 4] if tail > 1 else ends
    frames = decimal(w8, c[:, 4] + 1, ends, 0, MAX_COUNT) if tail > 1 else pages
    if dig is None or pages is None or fourth is None or frames is None:
        return None
    if (frames > pages).any() or (tail and (host_end - c[:, 3] - 1).max() > HOST_MAX):
        return None
    inputs = names(data, buf, starts, c[:, 0])
    host = names(data, buf, c[:, 3] + 1, host_end) if tail else inputs
    if inputs is None or host is None:
        return None
    key, lo = dig
    out = pd.DataFrame({"host": host, "input": inputs, "key": key, "lo": lo, "pages": pages,
                        "frames": frames})
    if kind == "sketch":
        out["zero"] = (key == ZERO_KEY).astype(np.int64)
        out["distinct"] = fourth
    else:
        out["zero"] = fourth
    return out


def fast_typed(data, kind, fileno, tail, has_header):
    """typed() of a piece read straight from its bytes, or None."""
    rows = body(data, columns(kind, tail), has_header)
    out = fast_rows(rows, kind, tail) if rows else None
    if out is None:
        return None
    out.insert(0, "file", np.full(len(out), fileno, dtype=np.int32))
    return out


def fast_partition(items, texts, kind, tail):
    """The rows of a partition's pieces read as one text, or None."""
    if len({int(tail[i]) for i, _ in items}) != 1:
        return None
    hh = int(tail[items[0][0]])
    cols = columns(kind, hh)
    parts, files, rows = [], [], []
    for (i, piece), (data, _) in zip(items, texts):
        b = body(data, cols, piece[2] == 0)
        if b is None:
            return None
        parts.append(b)
        files.append(i)
        rows.append(b.count(b"\n"))
    out = fast_rows(b"".join(parts), kind, hh)
    if out is None:
        return None
    return out.assign(file=np.repeat(np.array(files, dtype=np.int32), rows))


def meta(kind):
    """The columns of a partition: the host's and input's names as
    categories, the digest as two words, the counts."""
    cols = {"file": np.int32, "host": object, "input": object, "key": np.uint64,
            "lo": np.uint64, "pages": np.int64, "frames": np.int64, "zero": np.int64}
    if kind == "sketch":
        cols["distinct"] = np.int64
    m = pd.DataFrame({c: pd.Series(dtype=t) for c, t in cols.items()})
    return m.astype({"host": "category", "input": "category"})


def categories(col):
    return col.array if isinstance(col.dtype, pd.CategoricalDtype) else pd.Categorical(col)


def read_partition(items, kind, tail):
    """One partition: the rows of its pieces (@items: (file number, piece)),
    names as categories. Its pieces are read as one text when all are as
    ksmscan writes them; else piece by piece, the slow way where needed."""
    if not items:
        return meta(kind)
    texts = [piece_bytes(piece) for _, piece in items]
    out = fast_partition(items, texts, kind, tail)
    if out is None:
        frames = [read_piece(i, piece, kind, tail[i], t)
                  for (i, piece), t in zip(items, texts)]
        from pandas.api.types import union_categoricals
        names = {c: union_categoricals([categories(f[c]) for f in frames],
                                       sort_categories=True) for c in ("host", "input")}
        out = pd.concat([f.drop(columns=["host", "input"]) for f in frames], ignore_index=True)
        out = out.assign(**names)
    return out[list(meta(kind).columns)]
