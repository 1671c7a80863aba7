#!/usr/bin/python3
"""ksmfleet against hostile exports and options: counts that would
overflow, counts that are no counts (inf, nan, negative, fractions), lines
longer than the bound (also one of 64 MiB spanning two pieces of a plain
export), control characters in host names, names a spreadsheet would
evaluate, an empty --scheduler, and the line a defect is at in the second
64 MiB piece of a plain export; bidi controls, bytes that are not UTF-8
and NUL in host names; tables within 80 columns; sketches whose
distinct_pages contradict their rows; counts past 64 bits; schedulers that
are not (inproc://); the local cluster listening on loopback only (its
sockets read from /proc/net/tcp while it runs).

Every export is written here; the oracle is the line the test put the
defect on, and the figures computed here in Python integers.
"""
import csv, io, json, os, re, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import PAGE, check, eq, free_port, run_suite, test, tmp, zstd_stream  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLEET = [os.path.join(ROOT, "fleet", "bin", "ksmfleet")]
HEADER = "input,digest,pages,zero"
MAX_LINE = 16384          # docs/fleet.md's bound


def fleet(*args):
    return subprocess.run(FLEET + list(args), capture_output=True, text=True, timeout=600)


def digest(i):
    return "0x%032x" % (0x9e3779b97f4a7c15 * (i + 1) % 2**128)


def export(name, lines):
    path = tmp(name)
    with open(path, "w", newline="") as f:
        f.write("\r\n".join(lines) + "\r\n")
    return path


def one_line_error(r, path, line, what):
    """Exit 1 and exactly `ksmfleet: PATH: ..., at line LINE` on stderr."""
    err = r.stderr.strip().splitlines()
    want = r"ksmfleet: %s: .+, at line %d" % (re.escape(path), line)
    check(r.returncode == 1 and len(err) == 1 and re.fullmatch(want, err[0]) is not None,
          "%s: one line naming the file and line %d, exit 1" % (what, line),
          "exit %d, %r" % (r.returncode, r.stderr[-300:]))


@test("fleet-hostile")
def counts_that_overflow():
    """2^62 pages in each of two exports wrapped to a negative total: a count
    above 2^40 is refused at its line."""
    a = export("big-a.csv", [HEADER, "a,%s,%d,0" % (digest(0), 2**62)])
    b = export("big-b.csv", [HEADER, "b,%s,1,0" % digest(1), "b,%s,%d,0" % (digest(0), 2**62)])
    one_line_error(fleet("--workers=1", a, b), a, 2, "a count of 2^62")
    # 2^40 is a count, but 2049 of them pass the fleet's 2^51 pages: refused
    # in the export and at the row where the sum passes it.
    a = export("many-a.csv", [HEADER] + ["a,%s,%d,0" % (digest(i), 2**40) for i in range(1500)])
    b = export("many-b.csv", [HEADER] + ["b,%s,%d,0" % (digest(i), 2**40) for i in range(1000)])
    one_line_error(fleet("--workers=1", a, b), b, 2049 - 1500 + 1, "pages past 2^51")
    # 2048 of them are 2^51 pages exactly: totals in Python's integers.
    b = export("many-b2.csv", [HEADER] + ["b,%s,%d,0" % (digest(i), 2**40) for i in range(548)])
    r = fleet("--workers=1", "--csv", a, b)
    got = list(csv.DictReader(io.StringIO(r.stdout, newline="")))
    if check(r.returncode == 0 and got, "2^51 pages: exit 0", r.stderr[-300:]):
        pages = 2**40 * 2048
        sharing = 548 * (2 * 2**40 - (2 * 2**40 // 256)) + 952 * (2**40 - 2**40 // 256)
        eq((int(got[0]["pages"]), int(got[0]["pages_sharing"]), int(got[0]["saved_bytes"])),
           (pages, sharing, sharing * PAGE), "2^51 pages: the exact figures")


@test("fleet-hostile")
def counts_that_are_not():
    for bad in ("inf", "nan", "-1", "-inf", "1.5", "1e3", "0x10", "", " 3"):
        path = export("count.csv", [HEADER, "h,%s,1,0" % digest(0), "h,%s,2,0" % digest(1),
                                    "h,%s,%s,0" % (digest(2), bad)])
        one_line_error(fleet("--workers=1", path), path, 4, "pages %r" % bad)
    for bad in ("2", "-1", "nan"):
        path = export("zero.csv", [HEADER, "h,%s,1,%s" % (digest(0), bad)])
        one_line_error(fleet("--workers=1", path), path, 2, "zero %r" % bad)
    path = export("dist.csv", ["input,digest,pages,distinct_pages",
                               "h,%s,1,inf" % digest(0)])
    one_line_error(fleet("--workers=1", "--report=pairs", path), path, 2, "distinct_pages inf")


@test("fleet-hostile")
def frames_that_are_not():
    """The frames column (exports of live processes) is a count from 0 to
    its row's pages: anything else is one line naming the file and line;
    frames 0 (mappings of frames another input holds) and frames equal to
    pages read."""
    head = HEADER + ",host,frames"
    for bad in ("inf", "nan", "-1", "1.5", "1e3", "", " 3", "3", "18446744073709551621"):
        path = export("frames.csv", [head, "p,%s,2,0,h,1" % digest(0),
                                     "p,%s,2,0,h,%s" % (digest(1), bad)])
        one_line_error(fleet("--workers=1", path), path, 3, "frames %r" % bad)
    path = export("frames-ok.csv", [head, "p,%s,2,0,h,0" % digest(0),
                                    "q,%s,3,0,h,2" % digest(0), "q,%s,2,0,h,2" % digest(1)])
    r = fleet("--workers=1", "--csv", path)
    got = list(csv.DictReader(io.StringIO(r.stdout, newline="")))
    if check(r.returncode == 0 and got, "frames 0 and frames = pages: exit 0", r.stderr[-300:]):
        # digest 0: 5 mappings on 2 frames (1 shared, 4 sharing, 1 freed);
        # digest 1: 2 on 2 (1, 1, 1)
        eq([int(got[0][k]) for k in ("pages", "pages_shared", "pages_sharing", "frames",
                                      "freed_bytes")],
           [7, 2, 5, 4, 2 * PAGE], "frames 0 and frames = pages: the figures")


@test("fleet-hostile")
def long_lines():
    name = "h" * (MAX_LINE + 1)
    path = export("long.csv", [HEADER, "h,%s,1,0" % digest(0), "%s,%s,1,0" % (name, digest(1))])
    one_line_error(fleet("--workers=1", path), path, 3, "a line of %d bytes" % (MAX_LINE + 20))
    ok = export("longest.csv", [HEADER, "%s,%s,1,0" % ("h" * (MAX_LINE - 40), digest(0))])
    r = fleet("--workers=1", "--csv", ok)
    check(r.returncode == 0, "a line within the bound is read", r.stderr[-200:])
    # One line of 64 MiB and more, across the two 64 MiB pieces of the file.
    big = tmp("huge.csv")
    with open(big, "wb") as f:
        f.write(HEADER.encode() + b"\r\nh,%s,1,0\r\n" % digest(0).encode())
        f.write(b"x" * (65 << 20) + b",%s,1,0\r\n" % digest(1).encode())
        f.write(b"h,%s,1,0\r\n" % digest(2).encode())
    one_line_error(fleet("--workers=1", big), big, 3, "a line of 65 MiB")
    path = export("longhead.csv", ["input,digest,pages,zero" + "," * MAX_LINE])
    one_line_error(fleet("--workers=1", path), path, 1, "a header past the bound")


@test("fleet-hostile")
def line_in_second_piece():
    """A defect in the second 64 MiB piece of a plain export: its line."""
    n = (70 << 20) // 47
    lines = [HEADER] + ["host-%s,%s,1,0" % ("a" if i % 2 else "b", digest(i)) for i in range(n)]
    lines[n - 5] = "host-b,%s,nan,0" % digest(n)
    path = export("second.csv", lines)
    check(os.path.getsize(path) > 64 << 20, "the export is more than 64 MiB")
    one_line_error(fleet("--workers=2", path), path, n - 4, "nan in the second piece")


def names_fleet(names):
    return [export("names%d.csv" % i, [HEADER, '"%s",%s,2,0' % (n.replace('"', '""'), digest(0))])
            for i, n in enumerate(names)]


@test("fleet-hostile")
def names_shown_safely():
    names = ["evil\x1b[31mred\x07", "=HYPERLINK(\"x\")", "+1", "-2", "@SUM(A1)", "\tTAB",
             "\rCR", "plain", "del\x7fc1\x9b"]
    shown = [n.translate({c: "?" for c in list(range(32)) + list(range(0x7f, 0xa0))})
             for n in names]
    paths = names_fleet(names)
    r = fleet("--workers=1", "--csv", "--report=hosts", *paths)
    got = [x["host"] for x in csv.DictReader(io.StringIO(r.stdout, newline=""))]
    # the quote goes before what a spreadsheet would read: a tab or CR is '?'
    exp = [("'" if s[0] in "=+-@" else "") + s for s in shown]
    eq(got, exp, "CSV: control characters as '?', formulas after a single quote")
    check(not re.search(r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]", r.stdout),
          "CSV: no control character but the line ends")
    r = fleet("--workers=1", "--report=partners", *paths)
    check(r.returncode == 0 and not re.search(r"[\x00-\x09\x0b-\x0c\x0e-\x1f\x7f-\x9f]", r.stdout),
          "table: no control character", repr(r.stdout[:200]))
    check("evil?[31mred?" in r.stdout and "=HYPERLINK" in r.stdout and "'=" not in r.stdout,
          "table: names with '?', without the quote", r.stdout[:300])


def name_export(name, raw):
    """An export of one host whose name is the bytes @raw."""
    path = tmp(name)
    with open(path, "wb") as f:
        f.write(b"input,digest,pages,zero,host\r\n")
        f.write(b'pid:9,%s,3,0,"%s"\r\n' % (digest(len(raw)).encode(), raw.replace(b'"', b'""')))
        f.write(b'pid:9,%s,1,0,"%s"\r\n' % (digest(99).encode(), raw.replace(b'"', b'""')))
    return path


HOSTILE = [  # (bytes of the name, as ksmscan shows it)
    (b"web\xe2\x80\xaeexe.cod", "web?exe.cod"),                  # U+202E
    (b"db\xe2\x80\x8f-7\xe2\x81\xa6x", "db?-7?x"),              # U+200F, U+2066
    (b"cache\xff\xfe-node", "cache\\xff\\xfe-node"),              # not UTF-8
    (b"null\x00after-the-nul", "null?after-the-nul"),                # NUL: kept, shown
    (b"c1\xc2\x9b[2J", "c1?[2J"),                                   # CSI as UTF-8 C1
    (b"\xe6\x9d\xb1\xe4\xba\xac-\xd0\xbc\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0",
     "\u6771\u4eac-\u043c\u043e\u0441\u043a\u0432\u0430"),      # UTF-8: as it is
]


@test("fleet-hostile")
def names_escaped_as_ksmscan():
    """Bidi controls, bytes that are not UTF-8, NUL and C1 in host names:
    '?' or \\xHH in table and CSV, the rest of the name kept, valid UTF-8."""
    paths = [name_export("n%d.csv" % i, raw) for i, (raw, _) in enumerate(HOSTILE)]
    want = [s for _, s in HOSTILE]
    r = subprocess.run(FLEET + ["--workers=1", "--csv", "--report=hosts"] + paths,
                       capture_output=True, timeout=600)
    try:
        text = r.stdout.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    check(text is not None, "CSV: valid UTF-8", repr(r.stdout[:200]))
    got = [x["host"] for x in csv.DictReader(io.StringIO(text or "", newline=""))]
    eq(got, want, "CSV: names shown as ksmscan shows them, never cut")
    r = subprocess.run(FLEET + ["--workers=1", "--report=hosts"] + paths,
                       capture_output=True, timeout=600)
    text = r.stdout.decode("utf-8", "replace")
    check(b"\xff" not in r.stdout and "\u202e" not in text and "\x00" not in text,
          "table: no raw byte, bidi control or NUL", repr(r.stdout[:300]))
    for s in want:
        check(s in text, "table: %r shown" % s, text[:400])


@test("fleet-hostile")
def tables_fit_80_columns():
    """Every report's table for people within 80 columns, with host names
    of 64 characters (shown as their last 29 after "…")."""
    long = ["node-%s-%02d" % ("x" * 52, i) for i in range(4)]
    paths = []
    for i, h in enumerate(long):
        rows = [HEADER + ",host"] + ["pid:1,%s,%d,0,%s" % (digest(j), 1 + (i + j) % 3, h)
                                     for j in range(i, i + 30)]
        paths.append(export("w%d.csv" % i, rows))
    for rep in ("totals", "hosts", "pairs", "partners", "placement"):
        r = fleet("--workers=1", "--report=" + rep, "--capacity=200", *paths)
        lines = r.stdout.splitlines()
        wide = [x for x in lines if len(x) > 80]
        check(r.returncode == 0 and len(lines) > 1 and not wide,
              "%s: a table within 80 columns" % rep, "exit %d, %r" % (r.returncode, (wide or
                                                                                   [r.stderr])[0][:200]))
        if rep == "hosts":
            check("\u2026" + long[0][-29:] in r.stdout, "%s: a long name shows its end" % rep,
                  r.stdout[:300])
        if rep in ("pairs", "partners"):
            check("saved" in lines[0] and "\u2026" + long[0][-15:] in r.stdout,
                  "%s: names narrowed (their last 15) before the saving is left out" % rep,
                  r.stdout[:300])
    r = fleet("--workers=1", "--csv", "--report=pairs", *paths)
    check(long[0] in r.stdout, "CSV: names whole")


@test("fleet-hostile")
def sketches_that_lie():
    """A sketch whose distinct_pages is below its own rows, or differs
    between one host's rows, is refused at the line that shows it."""
    head = "input,digest,pages,distinct_pages"
    rows = ["vm-%d,%s,1,%d" % (h, digest(10 * h + i), 7) for h in (1, 2) for i in range(7)]
    good = export("sk-good.csv", [head] + rows)
    r = fleet("--workers=1", "--report=pairs", good)
    check(r.returncode == 0, "a sketch of 7 rows of 7 distinct contents is read", r.stderr[-200:])
    few = [x.replace(",1,7", ",1,5") if x.startswith("vm-2") else x for x in rows]
    path = export("sk-few.csv", [head] + few)
    one_line_error(fleet("--workers=1", "--report=pairs", path), path, 2 + 7 + 5,
                   "distinct_pages 5 below vm-2's 7 rows: the 6th row")
    odd = list(rows)
    odd[10] = odd[10].replace(",1,7", ",1,9")
    path = export("sk-odd.csv", [head] + odd)
    one_line_error(fleet("--workers=1", "--report=partners", path), path, 12,
                   "distinct_pages differing in vm-2's 4th row")
    # the same with a host column: two inputs of one host without its * sketch
    hosted = [head + ",host"] + [x.replace("vm-", "pid:") + ",hv" for x in rows]
    path = export("sk-hosted.csv", hosted)
    one_line_error(fleet("--workers=1", "--report=pairs", path), path, 9,
                   "two inputs' sketches of host hv without the * sketch")


@test("fleet-hostile")
def counts_past_64_bits():
    for bad in ("18446744073709551621", "340282366920938463463374607431768211456"):
        path = export("c64.csv", [HEADER, "h,%s,2,0" % digest(0), "h,%s,%s,0" % (digest(1), bad)])
        r = fleet("--workers=1", path)
        one_line_error(r, path, 3, "a count of %d digits" % len(bad))
        check("out of range" not in r.stderr.lower(), "no 'Integer out of range'", r.stderr)


@test("fleet-hostile")
def schedulers_that_are_not():
    path = export("s2.csv", [HEADER, "h,%s,1,0" % digest(0)])
    for arg in ("--scheduler=inproc://y", "--scheduler=udp://127.0.0.1:1", "--dashboard=",
                "--top=0", "--common=1", "--capacity=-5"):
        r = fleet(arg, "--report=placement" if "capacity" in arg else "--report=totals", path)
        err = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(err) == 1 and err[0].startswith("ksmfleet: ")
              and "Traceback" not in r.stderr, "%s: one line, exit 2" % arg,
              "exit %d, %r" % (r.returncode, r.stderr[-300:]))


def tree(pid):
    """@pid and its descendants, from /proc."""
    kids = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open("/proc/%s/stat" % p) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(p))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def listening(pids):
    """The local addresses (hex, as /proc/net/tcp* has them) where the
    processes @pids listen."""
    inodes = set()
    for p in pids:
        try:
            for fd in os.listdir("/proc/%d/fd" % p):
                link = os.readlink("/proc/%d/fd/%s" % (p, fd))
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
        except OSError:
            continue
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                x = line.split()
                if x[3] == "0A" and x[9] in inodes:
                    out.add(x[1].split(":")[0])
    return out


LOOPBACK = {"0100007F", "00000000000000000000000001000000"}


@test("fleet-hostile")
def local_cluster_on_loopback():
    """While ksmfleet's local cluster runs, every socket its processes
    listen on is on 127.0.0.1 (or ::1): scheduler, workers, their HTTP."""
    paths = []
    for i in range(6):
        paths.append(export("lb%d.csv" % i, [HEADER] + ["h%d,%s,%d,0" % (i, digest(j), 1 + j % 4)
                                                        for j in range(i * 50, i * 50 + 4000)]))
    p = subprocess.Popen(FLEET + ["--workers=2", "--report=partners"] + paths,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = set()
    while p.poll() is None:
        seen |= listening(tree(p.pid))
        time.sleep(0.1)
    err = p.stderr.read().decode()
    check(p.returncode == 0, "the run ends well", err[-200:])
    check(len(seen) >= 1, "sockets seen while it ran", repr(seen))
    eq(sorted(seen - LOOPBACK), [], "every listening socket on loopback")


@test("fleet-hostile")
def empty_scheduler():
    path = export("s.csv", [HEADER, "h,%s,1,0" % digest(0)])
    for arg in ("--scheduler=", "--scheduler= "):
        r = fleet(arg, path)
        err = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(err) == 1 and err[0].startswith("ksmfleet: ")
              and not r.stdout, "%r: usage error, one line, exit 2" % arg,
              "exit %d, %r" % (r.returncode, r.stderr[-300:]))


# --- issue 43: bounded compressed input, read errors, pieces, options -------------------

def bounded_run(args, env=None, seconds=240):
    """ksmfleet @args run from a child Python that reports its children's
    peak RSS (resource.getrusage): (exit, stderr, seconds, peak MiB).
    A run past @seconds is killed (its process group) and reported as such."""
    code = ("import resource, subprocess, sys, json\n"
            "try:\n"
            "    r = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=%d)\n"
            "    out = [r.returncode, r.stderr]\n"
            "except subprocess.TimeoutExpired:\n"
            "    out = [-1, 'timed out']\n"
            "out.append(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)\n"
            "print(json.dumps(out))\n" % seconds)
    began = time.monotonic()
    r = subprocess.run([sys.executable, "-c", code] + FLEET + list(args), capture_output=True,
                       text=True, timeout=seconds + 120, env=env, start_new_session=True)
    rc, err, peak = json.loads(r.stdout)
    return rc, err, time.monotonic() - began, peak


def zstd_file(name, head, chunk, times):
    """A zstd export: @head, then @chunk @times times, compressed as a stream."""
    return zstd_stream(tmp(name), head, chunk, times)


@test("fleet-hostile")
def zstd_bombs():
    """A zstd export of 64 KB holding 2 GiB of zeros after its header (a
    line that never ends), and one of 135 KB holding 1.5 GiB of one valid
    row repeated: each refused in one line naming the file, in bounded time
    and memory (before: 295 s and 6.4 GB of RSS on a shared machine)."""
    zeros = zstd_file("bomb-zeros.csv.zst", b"input,digest,pages,zero\n", b"\0" * (1 << 24), 128)
    row = b"h,%s,1,0\n" % digest(0).encode()
    rows = zstd_file("bomb-rows.csv.zst", b"input,digest,pages,zero\n",
                     row * ((16 << 20) // len(row)), 96)
    for path, what in ((zeros, r"a line longer than 16384 bytes, at line 2"),
                       (rows, r"decompresses to more than 1024 times its size.*")):
        check(os.path.getsize(path) < 256 << 10, "%s: a small file" % path)
        rc, err, took, peak = bounded_run(["--workers=1", path])
        lines = err.strip().splitlines()
        check(rc == 1 and len(lines) == 1
              and re.fullmatch(r"ksmfleet: %s: %s" % (re.escape(path), what), lines[0]),
              "%s: one line naming the file, exit 1" % os.path.basename(path),
              "exit %d, %r" % (rc, err[-300:]))
        check(took < 180 and peak < 1024, "%s: within 180 s and 1 GiB of RSS"
              % os.path.basename(path), "%.0f s, %.0f MiB" % (took, peak))


def unreadable_cases(folder):
    """[(path, how)] of exports ksmfleet cannot read, made in @folder: a
    file of mode 000, a directory, a FIFO, /proc/self/mem (EIO at offset
    0, also for root) and /proc/1/environ (a normal user's EACCES)."""
    locked = os.path.join(folder, "locked.csv")
    with open(locked, "w") as f:
        f.write(HEADER + "\nh,%s,1,0\n" % digest(0))
    os.chmod(locked, 0)
    fifo = os.path.join(folder, "fifo.csv")
    os.mkfifo(fifo)
    return [(locked, "cannot read: Permission denied"), (folder, "not a regular file"),
            (fifo, "not a regular file"), ("/proc/self/mem", "cannot read: .+"),
            ("/proc/1/environ", "cannot read: Permission denied")]


@test("fleet-hostile")
def exports_that_cannot_be_read():
    """Every export ksmfleet cannot read is one line naming it, exit 1, as
    a normal user (as root: as nobody, by setpriv); no traceback and no
    line number (before: the error path opened the file again and died
    with three exceptions)."""
    import shutil
    import tempfile
    folder = tempfile.mkdtemp(prefix="ksmfleet-unreadable-")
    os.chmod(folder, 0o755)
    try:
        cases = unreadable_cases(folder)
        become = []
        if os.geteuid() == 0:
            if not shutil.which("setpriv"):
                check(False, "setpriv (util-linux) to run as nobody")
                return
            become = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        for path, why in cases:
            r = subprocess.run(become + FLEET + ["--workers=1", path], capture_output=True,
                               text=True, timeout=600, cwd="/tmp")
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 1 and len(lines) == 1
                  and re.fullmatch(r"ksmfleet: %s: %s" % (re.escape(path), why), lines[0]),
                  "%s: one line naming it, exit 1" % path,
                  "exit %d, %r" % (r.returncode, r.stderr[-400:]))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def quoted_fleet(path, m, tail=b""):
    """An export of two hosts whose names hold a quoted newline (and, for
    host B, a quoted line that looks like a row), each with the m contents
    digest(0..m-1) of one page: the oracle is 2m pages, m distinct, m
    shared and m sharing."""
    a = b'"rack 1\nnode-a"'
    b = b'"rack 2\nh,%s,999,0,forged\r\nnode-b"' % digest(10 ** 9).encode()
    with open(path, "wb") as f:
        f.write(b"input,digest,pages,zero,host\r\n")
        for lo in range(0, m, 4096):
            f.write(b"".join(b'"pid:1\n%d",%s,1,0,%s\r\n' % (i % 7, digest(i).encode(), h)
                             for i in range(lo, min(m, lo + 4096)) for h in (a, b)))
        f.write(tail)
    return path


def quoted_totals(path, m, env=None):
    r = subprocess.run(FLEET + ["--workers=2", "--csv", path], capture_output=True, text=True,
                       timeout=900, env=env)
    got = list(csv.DictReader(io.StringIO(r.stdout, newline="")))
    if check(r.returncode == 0 and len(got) == 1, "%s: read (exit 0)" % os.path.basename(path),
             "exit %d, %r" % (r.returncode, r.stderr[-300:])):
        eq([int(got[0][k]) for k in ("hosts", "pages", "distinct_pages", "pages_shared",
                                     "pages_sharing")],
           [2, 2 * m, m, m, m], "%s: the totals of the rows written" % os.path.basename(path))


@test("fleet-hostile")
def quoted_newlines_across_pieces():
    """Host and input names with quoted newlines (one holding a forged row)
    in an export cut in pieces: cut only between records, the totals those
    of the rows written. At the real piece size (64 MiB: an export of 70
    MiB, refused before) and with KSMFLEET_PIECE=4096 (hundreds of pieces,
    every cut next to a quoted newline); an open quote is refused at its
    line."""
    big = quoted_fleet(tmp("quoted-big.csv"), 400000)
    check(os.path.getsize(big) > 64 << 20, "the export is more than 64 MiB",
          "%d bytes" % os.path.getsize(big))
    quoted_totals(big, 400000)
    env = dict(os.environ, KSMFLEET_PIECE="4096")
    small = quoted_fleet(tmp("quoted-small.csv"), 3000)
    quoted_totals(small, 3000, env)
    opened = quoted_fleet(tmp("quoted-open.csv"), 3000, b'"pid:2,' + b"x\n" * 5000)
    r = subprocess.run(FLEET + ["--workers=1", opened], capture_output=True, text=True,
                       timeout=600, env=env)
    one_line_error(r, opened, 3000 * 7 + 2, "a quote left open")


@test("fleet-hostile")
def rows_of_more_fields():
    """A sixth field in every row is named as such (before: pandas took the
    first as an index and the digest was blamed); a sixth column in the
    header too (before: read as if it were not there)."""
    path = export("six.csv", [HEADER + ",host", "h,%s,1,0,x,extra" % digest(0)])
    r = fleet("--workers=1", path)
    one_line_error(r, path, 2, "a sixth field")
    check("6 fields" in r.stderr and "digest" not in r.stderr, "the fields named, not the digest",
          r.stderr)
    path = export("sixh.csv", [HEADER + ",host,more", "h,%s,1,0,x,y" % digest(0)])
    r = fleet("--workers=1", path)
    one_line_error(r, path, 1, "a header of six columns")
    check("6 columns" in r.stderr, "the header's columns counted", r.stderr)


@test("fleet-hostile")
def host_names_past_the_bound():
    """A host name of 4097 bytes is refused at its line (ksmscan --host
    refuses it too); 4096 bytes are read."""
    ok = export("h4096.csv", [HEADER + ",host", "p,%s,1,0,%s" % (digest(0), "h" * 4096)])
    r = fleet("--workers=1", "--csv", "--report=hosts", ok)
    check(r.returncode == 0 and "h" * 4096 in r.stdout, "4096 bytes: read", r.stderr[-200:])
    for name in ("h" * 4097, "\u00e9" * 2049):
        bad = export("h4097.csv", [HEADER + ",host", "p,%s,1,0,x" % digest(0),
                                   "p,%s,1,0,%s" % (digest(1), name)])
        r = fleet("--workers=1", bad)
        one_line_error(r, bad, 3, "a host of %d bytes" % len(name.encode()))
        check("longer than 4096 bytes" in r.stderr, "the bound named", r.stderr)


@test("fleet-hostile")
def capacity_as_a_size():
    """--capacity takes pages (a plain number) or bytes (K, M, G, T, powers
    of 1024, as ksmscan's sizes): 64G is 16777216 pages, the same
    placement; a lower-case suffix, an exponent, hex or less than a page
    is a usage error."""
    rows = [HEADER + ",host"] + ["p,%s,%d,0,h%d" % (digest(i % 40), 1 + i % 3, i // 40)
                                 for i in range(200)]
    path = export("cap.csv", rows)
    out = {}
    for arg in ("--capacity=16777216", "--capacity=64G", "--capacity=65536M", "--capacity=.0625T",
                "--capacity=120", "--capacity=480K", "--capacity=0.46875M"):
        r = fleet("--workers=1", "--csv", "--report=placement", arg, path)
        check(r.returncode == 0, "%s: exit 0" % arg, r.stderr[-200:])
        out[arg] = r.stdout
    eq({out[k] for k in ("--capacity=16777216", "--capacity=64G", "--capacity=65536M",
                         "--capacity=.0625T")} == {out["--capacity=64G"]}, True,
       "64G, 65536M, .0625T and 16777216 pages: one placement")
    eq(out["--capacity=480K"] == out["--capacity=120"] == out["--capacity=0.46875M"], True,
       "480K and 0.46875M are 120 pages")
    check(out["--capacity=120"] != out["--capacity=64G"], "the capacity changes the placement")
    for bad in ("64g", "1e3G", "0x10", "64GB", "0", "1K", "-5", "G", "1.5", "9" * 17,
                "%dT" % (1 << 40)):
        r = fleet("--workers=1", "--report=placement", "--capacity=" + bad, path)
        err = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(err) == 1 and "--capacity" in err[0]
              and "Traceback" not in r.stderr, "--capacity=%s: one line, exit 2" % bad,
              "exit %d, %r" % (r.returncode, r.stderr[-300:]))


@test("fleet-hostile")
def schedulers_that_fail_fast():
    """--scheduler addresses that cannot work: a usage error (exit 2) for
    a port out of 1-65535 or not an address, one line for ucx:// without
    its module; a closed port fails at once saying what was tried (before:
    30 s each, a raw ModuleNotFoundError, a raw int() error). Loopback
    only."""
    path = export("sf.csv", [HEADER, "h,%s,1,0" % digest(0)])
    port = free_port()
    cases = [(":1/x", 2, r"--scheduler wants .*':1/x'"),
             ("tcp://127.0.0.1:0", 2, r"--scheduler: port 0 is not one from 1 to 65535"),
             ("tcp://127.0.0.1:-5", 2, r"--scheduler wants .*"),
             ("tcp://127.0.0.1:65536", 2, r"--scheduler: port 65536 .*"),
             ("tcp://127.0.0.1:1/x", 2, r"--scheduler wants .*"),
             ("ucx://127.0.0.1:%d" % port, 1, r"--scheduler=ucx://\S+: the ucx scheme needs "
              r"the Python module \S+, which is not installed"),
             ("tcp://127.0.0.1:%d" % port, 1, r"--scheduler=\S+: no scheduler there: tried "
              r"127.0.0.1 port %d: nothing listens there \(connection refused\)" % port),
             ("[::1]:%d" % port, 1, r"--scheduler=\S+: no scheduler there: tried ::1 port "
              r"%d: .+" % port)]
    for arg, status, want in cases:
        began = time.monotonic()
        r = fleet("--scheduler=" + arg, path)
        took = time.monotonic() - began
        err = r.stderr.strip().splitlines()
        check(r.returncode == status and len(err) == 1
              and re.fullmatch("ksmfleet: " + want, err[0]) is not None,
              "--scheduler=%s: one line, exit %d" % (arg, status),
              "exit %d, %r" % (r.returncode, r.stderr[-300:]))
        check(took < 25, "--scheduler=%s: fails fast" % arg, "%.1f s" % took)


@test("fleet-hostile")
def scheduler_that_does_not_answer():
    """A loopback port that accepts and says nothing: one line whose
    seconds are those waited (before: distributed's "after 30 s",
    whatever the time)."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(4)
    try:
        path = export("sq.csv", [HEADER, "h,%s,1,0" % digest(0)])
        began = time.monotonic()
        r = fleet("--scheduler=tcp://127.0.0.1:%d" % s.getsockname()[1], path)
        took = time.monotonic() - began
    finally:
        s.close()
    err = r.stderr.strip().splitlines()
    m = re.fullmatch(r"ksmfleet: --scheduler=\S+: no scheduler answered at \S+ in (\d+) s "
                     r"\((?!.*after \d).*\)", err[0]) if len(err) == 1 else None
    check(r.returncode == 1 and m is not None and int(m.group(1)) <= took + 1,
          "one line, exit 1, the seconds waited", "exit %d, %.0f s, %r"
          % (r.returncode, took, r.stderr[-300:]))


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-fleet-hostile-"))
