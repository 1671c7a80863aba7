#!/usr/bin/python3
"""--record=FILE: a series written to one file, and the file given later as
the input, which must give the reports of the run that wrote it.

- a series of files and a live series (a child whose pages are marked
  mergeable): each report (timeline, volatility, policies, advise, summary,
  processes, the JSON of every default report, which --check reads) of the
  run that wrote the record and of the record's replay are equal, CSV line
  for line, apart from the columns of time measured here (hash_mib_s,
  ns_per_page);
- from a normal user on a copy of the file (su cloudsdk), the same;
- the record's contents checked with Python's own packages: each distinct
  page of the snapshots once, in memcmp's order (Python's bytes order),
  with its first 8 bytes, the common prefix with the next one the one
  Python counts, and which share KSM's checksum (xxhash's XXH64);
- its size: the fixture guest in at most 4 bytes a page;
- its replay's memory: it does not grow with snapshots that repeat;
- a truncated, corrupt or hostile record: one line on stderr naming the file
  and an offset, exit status 1, never a crash.

Run from the repository root with Debian's Python: /usr/bin/python3
tests/test_record.py [names].
"""
import csv, io, os, random, shutil, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import KSMSCAN, PAGE, Skip, check, eq, run, run_suite, test, tmp  # noqa: E402

MEASURED = {"hash_mib_s", "ns_per_page"}     # time taken here, not figures
MAGIC = b"KSMSCANREC\n\x1a"
HOST = ["--host-memory=8G", "--host-used=6G"]   # the tuners' host, for files
REPORTS = [["-r", "timeline"], ["-r", "volatility"],
           ["-r", "policies", "--policy=fixed,advisor,ksmtuned,kubevirt"] + HOST,
           ["-r", "advise", "--target=90%@2m"], ["-r", "summary"]]

HOLDER = r"""
import ctypes, mmap, sys
n = int(sys.argv[1])
m = mmap.mmap(-1, n * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
libc = ctypes.CDLL(None, use_errno=True)
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
buf = ctypes.c_char.from_buffer(m)
if sys.argv[2] == "huge":   # MADV_HUGEPAGE before the first touch
    libc.madvise(ctypes.addressof(buf), n * 4096, 14)
for i in range(n):      # n / 4 contents, each in 4 pages; some pages zero
    m[i * 4096:(i + 1) * 4096] = bytes([i % (n // 4) % 251]) * 4096
if sys.argv[2] in ("mergeable", "huge") and libc.madvise(ctypes.addressof(buf), n * 4096, 12):
    sys.exit("madvise: errno %d" % ctypes.get_errno())     # MADV_MERGEABLE
print("ready", flush=True)
k = 0
while not sys.stdin.readline() == "":      # a line: change a page
    m[(k % n) * 4096] = (m[(k % n) * 4096] + 1) % 256
    k += 7
"""


def snapshots(n=4, pages=400, seed=11):
    """@n raw snapshots of one memory: duplicates, zero pages, pages that
    share their first bytes and differ late (long memcmp), and changes."""
    rnd = random.Random(seed)
    base = [rnd.randbytes(PAGE) for _ in range(30)]
    near = []
    for k in range(12):             # one head, differing from byte 9 to 4095
        p = bytearray(base[0])
        p[9 + k * 340] ^= 0x40
        near.append(bytes(p))
    memory = [base[i % 30] if i % 5 else bytes(PAGE) for i in range(pages)]
    memory[100:112] = near
    memory[112:124] = near
    paths = []
    for s in range(n):
        for _ in range(25):
            memory[rnd.randrange(pages)] = rnd.choice(base + near + [rnd.randbytes(PAGE)])
        path = tmp("snap-%d.raw" % s)
        with open(path, "wb") as f:
            f.write(b"".join(memory))
        paths.append(path)
    return paths


def rows(text):
    """CSV rows without the measured columns."""
    r = list(csv.DictReader(io.StringIO(text)))
    return [{k: v for k, v in row.items() if k not in MEASURED} for row in r]


def same_reports(live, record, what, cmd=None):
    """Run @live (a series' arguments) with --record, then the record with
    each report: equal CSV, and equal JSON of the default reports."""
    for rep in REPORTS + [["-r", "processes"]] * (cmd is not None):
        path = tmp("r.rec")
        a = run(live + rep + ["-o", "csv", "--record=" + path])
        check(a.rc in (0, 1), "%s %s: ran" % (what, rep[1]), a.brief())
        b = run([path] + rep + ["-o", "csv"])
        eq(b.rc, a.rc, "%s %s: the record's exit status" % (what, rep[1]))
        check(rows(b.out) and rows(b.out) == rows(a.out),
              "%s %s: the record's CSV is the run's" % (what, rep[1]),
              "run %r record %r" % (a.out[:600], b.out[:600]))
        if rep[1] == "timeline":
            shutil.copy(path, record)
    a = run(live + ["-o", "json", "--record=" + tmp("j.rec")])
    b = run([tmp("j.rec"), "-o", "json"])
    check(a.out and a.out == b.out, "%s: the JSON of the default reports" % what,
          "%r" % b.err)


@test("record")
def files_series_reproduced():
    """A series of files: every report from its record as from the files."""
    same_reports(["--series", "--interval=10s"] + snapshots(), tmp("files.rec"),
                 "files")


def holder(pages=512, kind="mergeable"):
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(pages), kind], text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    p.stdout.readline()
    return p


@test("record")
def live_series_reproduced():
    """A live series (-p PID --count): every report from its record as from
    the live run, processes and the forecast --check reads included."""
    p = holder()
    try:
        with open("/proc/%d/comm" % p.pid) as f:
            comm = f.read().strip()
        same_reports(["-p", str(p.pid), "--count=3", "--interval=0.5s"],
                     tmp("live.rec"), "live", cmd=True)
    finally:
        p.stdin.close()
        p.wait(timeout=30)
    r = run([tmp("live.rec"), "-r", "processes", "-o", "csv"])
    row = (list(csv.DictReader(io.StringIO(r.out))) or [{}])[0]
    eq(row.get("pid"), str(p.pid), "the record keeps the process's pid")
    eq(row.get("command"), comm, "... and its command, read when it ran")


def anon_huge_kb(pid):
    with open("/proc/%d/smaps_rollup" % pid) as f:
        return sum(int(l.split()[1]) for l in f if l.startswith("AnonHugePages:"))


@test("record")
def live_huge_pages_reproduced():
    """A live series of a process in transparent huge pages (root: the
    replay reads them from kpageflags): the record keeps each address's huge
    page, so its reports, the pages the splits free among them, are the
    live run's."""
    if os.geteuid() != 0:
        raise Skip("needs root (huge pages are read from /proc/kpageflags)")
    p = holder(pages=1536, kind="huge")
    try:
        if anon_huge_kb(p.pid) < 2048:
            raise Skip("the child got no transparent huge page (THP off?)")
        live = ["-p", str(p.pid), "--count=2", "--interval=0.5s"]
        a = run(live + ["-r", "timeline", "-o", "csv", "--record=" + tmp("thp.rec")])
        last = (rows(a.out) or [{}])[-1]
        check(int(last.get("thp_zero_freed_pages") or 0) > 0,
              "the live replay split huge pages and freed zero subpages", a.out[-300:])
        b = run([tmp("thp.rec"), "-r", "timeline", "-o", "csv"])
        check(rows(b.out) and rows(b.out) == rows(a.out),
              "the record's timeline is the live run's, huge pages and all",
              "live %r record %r" % (a.out[-300:], b.out[-300:]))
    finally:
        p.stdin.close()
        p.wait(timeout=30)


@test("record")
def live_marked_and_not():
    """Two processes, one marked mergeable and one not: -r advise replays
    the marked one's pages and says what the other would save; from the
    record the same rows."""
    a, b = holder(), holder(kind="plain")
    try:
        live = ["-p", str(a.pid), "-p", str(b.pid), "--count=2", "--interval=0.5s",
                "-r", "advise", "--target=50%@2m", "-o", "csv"]
        r = run(live + ["--record=" + tmp("m.rec")])
        rec = run([tmp("m.rec"), "-r", "advise", "--target=50%@2m", "-o", "csv"])
        check(rows(r.out) and rows(rec.out) == rows(r.out),
              "the advice of marked memory from the record", rec.out[:400])
        r = run(live[:-5] + ["-r", "advise", "--target=50%@2m", "--record=" + tmp("m.rec")])
        rec = run([tmp("m.rec"), "-r", "advise", "--target=50%@2m"])
        check("not scanned by ksm" in r.out.lower() and rec.out == r.out,
              "... and its sentences (not scanned by KSM now)", rec.out[-600:])
    finally:
        for p in (a, b):
            p.stdin.close()
            p.wait(timeout=30)


@test("record")
def normal_user_on_a_copy():
    """A normal user replays a copy of the file: the same timeline."""
    if os.geteuid() != 0:
        raise Skip("needs root to run as another user")
    if subprocess.run(["id", "cloudsdk"], capture_output=True).returncode:
        raise Skip("no user cloudsdk")
    snaps = snapshots(seed=3)
    a = run(["--series"] + snaps + ["-r", "timeline", "-o", "csv",
                                    "--record=" + tmp("u.rec")])
    d = "/tmp/ksmscan-record-user-%d" % os.getpid()
    os.makedirs(d, exist_ok=True)
    try:
        shutil.copy(tmp("u.rec"), d + "/copy.rec")
        shutil.copy(KSMSCAN[0], d + "/ksmscan")
        os.chmod(d, 0o755)
        b = subprocess.run(["su", "cloudsdk", "-c", "cd %s && ./ksmscan copy.rec "
                            "-r timeline -o csv" % d], capture_output=True, text=True)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    eq(b.returncode, 0, "a normal user reads the copy")
    check(rows(b.stdout) and rows(b.stdout) == rows(a.out),
          "... and has the run's timeline", b.stderr[-300:])


def body(path):
    import zstandard
    with open(path, "rb") as f:
        data = f.read()
    return data[:16], zstandard.ZstdDecompressor().decompress(data[16:],
                                                             max_output_size=1 << 28)


class Reader:
    """The record's fields, in the order the format (scan/record.c) has."""

    def __init__(self, b):
        self.b, self.at = b, 0

    def var(self):
        v = s = 0
        while True:
            c = self.b[self.at]
            self.at += 1
            v |= (c & 0x7f) << s
            s += 7
            if not c & 0x80:
                return v

    def raw(self, n):
        self.at += n
        return self.b[self.at - n:self.at]

    def str(self):
        return self.raw(self.var())


def contents_of(b):
    """The record's contents in their places (memcmp order): (heads, common
    prefixes with the next, checksum references, the zero page's place + 1)."""
    r = Reader(b)
    nprocs, nsnaps = r.var(), r.var()
    for _ in range(nprocs * nsnaps):
        r.str(), r.var()
    for _ in range(nprocs):
        r.raw(8), r.str()
    r.var(), r.var(), r.var(), r.str(), r.raw(r.var())      # hz cpus mem kernel ksm
    r.raw(8 * 8), r.var()                                  # interval, costs, hashed
    r.raw(8 * r.var())                                      # late
    r.raw(8), r.var(), r.var(), r.var()
    n = r.var()
    lcps = [r.var() for _ in range(n)]
    shared = [0] + [min(x, 8) for x in lcps[:-1]]   # with the one before
    up = [r.raw(1)[0] if k and shared[k] < 8 else 0 for k in range(n)]
    heads = []
    for k in range(n):      # its first differing byte: that one's + 1 + up
        p = shared[k]
        first = bytes([heads[-1][p] + 1 + up[k]]) if k and p < 8 else b""
        heads.append((heads[-1][:p] if k else b"") + first + r.raw(8 - p - len(first)))
    refs = [r.var() for _ in range(n)]
    return heads, lcps, refs, r.var()


def colliding(seed=7):
    """Two pages of one KSM checksum (XXH64's low 32 bits, the kernel's
    xxhash()), found by the birthday bound (some 60000 tries)."""
    import xxhash
    page, seen = bytearray(random.Random(seed).randbytes(PAGE)), {}
    for i in range(1 << 20):
        page[:8] = i.to_bytes(8, "big")
        h = xxhash.xxh64_intdigest(bytes(page)) & 0xffffffff
        if h in seen:
            other = bytearray(page)
            other[:8] = seen[h].to_bytes(8, "big")
            return bytes(other), bytes(page)
        seen[h] = i
    raise AssertionError("no collision")


@test("record")
def contents_as_python_sees_them():
    """The record's contents: each distinct page once, in memcmp's order
    (Python's bytes order), its first 8 bytes and the common prefix with the
    next as Python counts them, and which share KSM's checksum as Python's
    xxhash says (two pages of one checksum, at one address one after the
    other, which ksmd takes for unchanged: the record's timeline the same)."""
    import xxhash
    snaps = snapshots(seed=5)
    a, b = colliding()
    for k, path in enumerate(snaps):
        with open(path, "r+b") as f:
            f.seek(7 * PAGE)
            f.write(a if k < 2 else b)
            f.seek(8 * PAGE)
            f.write(a)
    r = run(["--series", "-a", "xxhash"] + snaps + ["-r", "timeline", "-o", "csv",
                                                    "--record=" + tmp("c.rec")])
    eq(r.rc, 0, "recorded")
    rec = run([tmp("c.rec"), "-r", "timeline", "-o", "csv"])
    check(rows(rec.out) and rows(rec.out) == rows(r.out),
          "the timeline of pages that change to a content of the same checksum",
          rec.out[-300:])
    pages = set()
    for s in snaps:
        with open(s, "rb") as f:
            data = f.read()
        pages.update(data[i:i + PAGE] for i in range(0, len(data), PAGE))
    ordered = sorted(pages)
    heads, lcps, refs, zero = contents_of(body(tmp("c.rec"))[1])
    eq(len(heads), len(ordered), "each distinct page once")
    eq(heads, [p[:8] for p in ordered], "in memcmp's order, with their first 8 bytes")

    def common(a, b):
        k = 0
        while k < PAGE and a[k] == b[k]:
            k += 1
        return k
    want = [common(ordered[i], ordered[i + 1]) for i in range(len(ordered) - 1)]
    eq(lcps[:len(ordered) - 1], want, "each common prefix with the next")
    check(max(want) >= 9 + 340, "the series has long common prefixes", str(max(want)))
    last, want = {}, []
    for k, p in enumerate(ordered):     # 1: checksum 0; else 1 + places back
        h = xxhash.xxh64_intdigest(p) & 0xffffffff
        want.append(1 if h == 0 else k - last[h] + 1 if h in last else 0)
        last[h] = k
    eq(refs, want, "which contents share KSM's checksum")
    check(max(want) >= 2, "... two of them do")
    eq(zero, 1 if bytes(PAGE) in pages else 0, "the zero page's place")


@test("record")
def record_is_small():
    """The fixture guest (36896 pages, 14985 contents) is recorded in at
    most 4 bytes a page (version 1 of the format took 12.1), and a further
    snapshot of the same memory costs at most 0.1 byte a page."""
    guest = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                         "guest-b.elf.zst")
    pages = 36896
    eq(run(["--series", guest, "-r", "timeline", "--record=" + tmp("g1.rec")]).rc, 0,
       "recorded")
    one = os.path.getsize(tmp("g1.rec"))
    check(one <= 4 * pages, "at most 4 bytes a page", "%d bytes, %.2f a page"
          % (one, one / pages))
    eq(run(["--series", guest, guest, "-r", "timeline",
            "--record=" + tmp("g2.rec")]).rc, 0, "recorded twice")
    more = os.path.getsize(tmp("g2.rec")) - one
    check(more <= 0.1 * pages, "a further snapshot, unchanged: at most 0.1 byte a "
          "page", "%d bytes, %.3f a page" % (more, more / pages))


@test("memory")
def replay_memory_flat():
    """Replaying a record holds what changes between its snapshots, not
    each one in full: records of 2 and 8 snapshots of one 128 MiB memory
    (a, b, a, b, ...: b has 5% of a's pages rewritten) replayed with -r
    summary differ in peak anonymous memory by under 5 bytes a page a
    snapshot (the uncompressed record, a few bytes a page, is held while
    it is read); holding each snapshot in full was about 9.6."""
    from memory_helpers import peak_anon_kib, release_build, two_memories
    if not release_build():
        raise Skip("peak memory is measured on the release build (sanitizers add shadow memory)")
    n = 32768
    a, b = two_memories(n, "rec-flat")
    for k in (2, 8):
        eq(run(["--series", "--scans=2", "--record=" + tmp("flat%d.rec" % k)]
               + [a, b] * (k // 2)).rc, 0, "%d snapshots recorded" % k)
    os.unlink(a)
    os.unlink(b)
    rc2, two = peak_anon_kib([tmp("flat2.rec"), "-r", "summary"])
    rc8, eight = peak_anon_kib([tmp("flat8.rec"), "-r", "summary"])
    eq((rc2, rc8), (0, 0), "both records replayed")
    per = (eight - two) * 1024 / (6 * n)
    check(two > 0 and per < 5, "2 to 8 snapshots: under 5 bytes a page a snapshot "
          "more (%d KiB, %d KiB: %.1f)" % (two, eight, per))


def one_line(r, path, what):
    lines = [l for l in r.err.splitlines() if l.startswith("ksmscan: ")]
    check(r.rc == 1 and len(lines) == 1 and path in lines[0] and "at offset" in lines[0],
          what, r.brief())


@test("hostile")
def truncated_and_corrupt():
    """Truncated at any point, a byte changed, counts past the file: one
    line with an offset, exit 1, never a crash."""
    import zstandard
    snaps = snapshots(n=2, pages=60, seed=9)
    eq(run(["--series"] + snaps + ["--record=" + tmp("h.rec")]).rc, 0, "recorded")
    with open(tmp("h.rec"), "rb") as f:
        data = f.read()
    bad = tmp("bad.rec")
    for n in list(range(13, len(data), max(1, len(data) // 40))) + [len(data) - 1]:
        with open(bad, "wb") as f:
            f.write(data[:n])
        one_line(run([bad, "-r", "timeline"], timeout=60), bad, "truncated at %d" % n)
    head, b = body(tmp("h.rec"))
    rnd = random.Random(1)
    for k in range(60):
        m = bytearray(b)
        for _ in range(rnd.choice((1, 3))):
            m[rnd.randrange(len(m))] = rnd.randrange(256)
        with open(bad, "wb") as f:
            f.write(head + zstandard.ZstdCompressor().compress(bytes(m)))
        r = run([bad, "-r", "timeline", "-o", "csv"], timeout=120)
        if r.rc != 0:
            one_line(r, bad, "a changed byte (%d)" % k)
    for what, forged in (
            ("a million processes", b"\xc0\x84\x3d\x01"),
            ("2^60 snapshots", b"\x01" + b"\xff" * 8 + b"\x0f"),
            ("snapshots past the file", b"\x01\x90\x4e" + b"\x00" * 40)):
        with open(bad, "wb") as f:
            f.write(head + zstandard.ZstdCompressor().compress(forged))
        one_line(run([bad], timeout=60), bad, what)
    for version in (1, 7):  # 1: the format before this one
        with open(bad, "wb") as f:
            f.write(MAGIC + bytes([version]) + b"\x02\x00\x00" + data[16:])
        r = run([bad])
        one_line(r, bad, "another version (%d)" % version)
        check("a record of version %d (this ksmscan reads %d)" % (version, data[12])
              in r.err, "... named, with the one this ksmscan reads", r.err)


@test("usage")
def record_needs_a_series():
    """--record takes a series, and a record is replayed alone."""
    snaps = snapshots(n=2, pages=20, seed=2)
    eq(run([snaps[0], "--record=" + tmp("x.rec")]).rc, 2, "--record without a series")
    eq(run(["--series"] + snaps + ["--record=" + tmp("x.rec")]).rc, 0, "recorded")
    eq(run([tmp("x.rec"), "--record=" + tmp("y.rec")]).rc, 2, "a record recorded again")
    eq(run([tmp("x.rec"), snaps[0]]).rc, 2, "a record with another input")


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-record-"))
