#!/usr/bin/python3
"""Shared pieces of the ksmscan test suites: the harness (test registry,
check/eq/skip, the main loop) and the independent oracles (the kernel's
jhash2 written from include/linux/jhash.h, crc32c in the kernel's convention
from python-crc32c, the xxHash family from python-xxhash, and KSM's grouping).

It is also the one place that finds the fixtures (fixture()) and that says
which Debian package a missing Python module comes from.

Run the suites with the interpreter the Makefile names ($(PYTHON), Debian's
/usr/bin/python3 with python3-xxhash, python3-crc32c and python3-zstandard);
each prints one line per failing check and last "N passed, N failed".
"""
import csv
import importlib
import io
import os
import re
import shlex
import shutil
import struct
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The Python modules the suites use, and the Debian package of each.  A missing
# one ends the importing program with one line naming the packages (and the
# closing line every suite prints), not a traceback.
MODULE_PACKAGES = {"xxhash": "python3-xxhash", "crc32c": "python3-crc32c",
                   "zstandard": "python3-zstandard"}


def missing_modules(modules=MODULE_PACKAGES):
    """The modules that cannot be imported, in order."""
    out = []
    for mod in modules:
        try:
            importlib.import_module(mod)
        except ImportError:
            out.append(mod)
    return out


def missing_message(mods, python=sys.executable):
    """The one line that names the packages of missing modules."""
    return ("tests need %s: run scripts/install-deps (%s not found by %s)"
            % (", ".join(MODULE_PACKAGES[m] for m in mods), ", ".join(mods), python))


_MISSING = missing_modules()
if _MISSING:
    print(missing_message(_MISSING))
    print("0 passed, 1 failed")
    sys.exit(1)

import crc32c as crc32c_mod  # noqa: E402
import xxhash  # noqa: E402

# ---------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------
# Committed in tests/fixtures/ (see its README.md): the default suite needs them.
FIXTURES = os.path.join(HERE, "fixtures")
COMMITTED_FIXTURES = ("guest-b.elf.zst", "guest-b.truth.json", "vectors.img", "vectors.csv")
# Too large to commit: looked for in $KSMSCAN_FIXTURES, then ../shared/fixtures.
OPTIONAL_FIXTURES = ("guest-b.kdump-zlib",)


def optional_fixture_dirs(env=None, root=ROOT):
    """Where optional fixtures are looked for, in order."""
    env = os.environ if env is None else env
    dirs = []
    if env.get("KSMSCAN_FIXTURES"):
        dirs.append(env["KSMSCAN_FIXTURES"])
    dirs.append(os.path.join(os.path.dirname(root), "shared", "fixtures"))
    return dirs


def fixture(name, env=None, root=ROOT):
    """The path of fixture NAME.  A committed fixture is always in
    tests/fixtures (missing: FileNotFoundError, a failure).  An optional one
    is the first found in optional_fixture_dirs(); when none has it, Skip
    with the reason and how to provide it."""
    if name in OPTIONAL_FIXTURES:
        dirs = optional_fixture_dirs(env, root)
        for d in dirs:
            path = os.path.join(d, name)
            if os.path.isfile(path):
                return path
        raise Skip("optional fixture %s not found in %s (not in the repository: set "
                   "KSMSCAN_FIXTURES to a folder holding it)" % (name, " or ".join(dirs)))
    path = os.path.join(os.path.join(root, "tests", "fixtures"), name)
    if not os.path.isfile(path):
        raise FileNotFoundError("fixture %s missing from the repository" % path)
    return path

KSMSCAN = shlex.split(os.environ.get("KSMSCAN", "./ksmscan"))
PAGE = 4096
ZERO = bytes(PAGE)
ALGOS = ["jhash2", "crc32c", "crc32c-sw", "xxhash", "xxh32", "xxh64", "xxh3", "xxh128"]
BITS = {"jhash2": 32, "crc32c": 32, "crc32c-sw": 32, "xxhash": 32, "xxh32": 32,
        "xxh64": 64, "xxh3": 64, "xxh128": 128}
SUMMARY_COLS = ["input", "format", "algo", "pages", "zero_pages", "distinct_pages",
                "duplicate_ratio", "pages_shared", "pages_sharing", "ksm_zero_pages",
                "saved_bytes", "saved_percent", "general_profit", "collisions",
                "expected_collisions", "hash_mib_s", "ns_per_page"]

# ---------------------------------------------------------------------------
# Oracles
# ---------------------------------------------------------------------------
M32 = 0xffffffff


def _rol(x, k):
    return ((x << k) | (x >> (32 - k))) & M32


def _jmix(a, b, c):
    """__jhash_mix from include/linux/jhash.h"""
    a = (a - c) & M32; a ^= _rol(c, 4);  c = (c + b) & M32
    b = (b - a) & M32; b ^= _rol(a, 6);  a = (a + c) & M32
    c = (c - b) & M32; c ^= _rol(b, 8);  b = (b + a) & M32
    a = (a - c) & M32; a ^= _rol(c, 16); c = (c + b) & M32
    b = (b - a) & M32; b ^= _rol(a, 19); a = (a + c) & M32
    c = (c - b) & M32; c ^= _rol(b, 4);  b = (b + a) & M32
    return a, b, c


def _jfinal(a, b, c):
    """__jhash_final from include/linux/jhash.h"""
    c ^= b; c = (c - _rol(b, 14)) & M32
    a ^= c; a = (a - _rol(c, 11)) & M32
    b ^= a; b = (b - _rol(a, 25)) & M32
    c ^= b; c = (c - _rol(b, 16)) & M32
    a ^= c; a = (a - _rol(c, 4)) & M32
    b ^= a; b = (b - _rol(a, 14)) & M32
    c ^= b; c = (c - _rol(b, 24)) & M32
    return a, b, c


JHASH_INITVAL = 0xdeadbeef


def jhash2_init(nwords, initval):
    v = (JHASH_INITVAL + (nwords << 2) + initval) & M32
    return v, v, v


def jhash2_words(k, initval):
    """jhash2(const u32 *k, u32 length, u32 initval)"""
    length = len(k)
    a, b, c = jhash2_init(length, initval)
    i = 0
    while length > 3:
        a = (a + k[i]) & M32; b = (b + k[i + 1]) & M32; c = (c + k[i + 2]) & M32
        a, b, c = _jmix(a, b, c)
        length -= 3
        i += 3
    if length == 3:
        c = (c + k[i + 2]) & M32
    if length >= 2:
        b = (b + k[i + 1]) & M32
    if length >= 1:
        a = (a + k[i]) & M32
        a, b, c = _jfinal(a, b, c)
    return c


_JCACHE = {}


def jhash2_page(page):
    v = _JCACHE.get(page)
    if v is None:
        v = jhash2_words(struct.unpack("<1024I", page), 17)
        _JCACHE[page] = v
    return v


def crc32c_kernel(data):
    """Kernel crc32c(0, data, len): no pre/post inversion."""
    return crc32c_mod.crc32c(data, 0xffffffff) ^ 0xffffffff


ORACLE = {
    "jhash2": jhash2_page,
    "crc32c": crc32c_kernel,
    "crc32c-sw": crc32c_kernel,
    "xxhash": lambda p: xxhash.xxh64_intdigest(p, 0) & M32,
    "xxh32": lambda p: xxhash.xxh32_intdigest(p, 0),
    "xxh64": lambda p: xxhash.xxh64_intdigest(p, 0),
    "xxh3": lambda p: xxhash.xxh3_64_intdigest(p),
    "xxh128": lambda p: xxhash.xxh3_128_intdigest(p),
}


def hexdigest(algo, page):
    return "%0*x" % (BITS[algo] // 4, ORACLE[algo](page))


def elf_pages(elf):
    """{file offset: page} of the PT_LOAD data of an ELF64 core (whole pages)."""
    phoff, = struct.unpack_from("<Q", elf, 32)
    phentsize, phnum = struct.unpack_from("<HH", elf, 54)
    out = {}
    for i in range(phnum):
        (ptype, _, off, _, _, filesz, _, _) = struct.unpack_from(
            "<IIQQQQQQ", elf, phoff + i * phentsize)
        if ptype == 1:
            for k in range(0, filesz - filesz % PAGE, PAGE):
                out[off + k] = elf[off + k:off + k + PAGE]
    return out


def ksm_group(c, m):
    """(pages_shared, pages_sharing) of c identical pages at max_page_sharing m:
    the KSM model's ceil(c/m) and c - ceil(c/m), except that, as measured on
    Linux 6.18 (test_ksm_live.py), a single page left over beyond full KSM
    pages (c > m, c % m == 1) is not merged, so it is no KSM page either."""
    if c < 2:
        return 0, 0
    s = -(-c // m)
    return s - (c > m and c % m == 1), c - s


# ---------------------------------------------------------------------------
# Harness
# ---------------------------------------------------------------------------
TESTS = []
STATE = {"passed": 0, "failed": 0, "skipped": 0, "current": "", "tmp": None}
# Tests that run a real application of scripts/install-deps' APPS list
# (Chromium, LibreOffice, node_exporter, Redis, PostgreSQL): `make test`
# skips them when it is missing; `make test-apps` installs the applications
# and runs these tests alone, with KSMSCAN_APPS=1, where a missing one fails.
APP_TESTS = set()
APPS_ENV = "KSMSCAN_APPS"


class Skip(Exception):
    pass


class Stop(Exception):
    """The test ends here; its failure is already counted."""


def test(group, app=False):
    """Register a test function under a group name (app: it runs a real
    application, see APP_TESTS)."""
    def deco(f):
        TESTS.append((group, f.__name__, f))
        if app:
            APP_TESTS.add(f.__name__)
        return f
    return deco


def apps_run(env=None):
    """Is this `make test-apps` (KSMSCAN_APPS=1)?"""
    return (os.environ if env is None else env).get(APPS_ENV) == "1"


def app_missing(what, package, env=None):
    """The message for an application that is not installed: a Skip in
    `make test`, a failure (then Stop) in `make test-apps`."""
    msg = "%s not installed (Debian's %s): `make test-apps` installs it and runs this" % (
        what, package)
    if apps_run(env):
        check(False, msg)
        raise Stop()
    raise Skip(msg)


def app(names, package, env=None):
    """The path of the first of @names found on PATH (or given by its full
    path), else app_missing()."""
    for n in names:
        path = n if os.path.isabs(n) else shutil.which(n)
        if path and os.access(path, os.X_OK):
            return path
    return app_missing(names[0], package, env)


def check(cond, what, detail=""):
    if cond:
        STATE["passed"] += 1
    else:
        STATE["failed"] += 1
        print("FAIL [%s] %s%s" % (STATE["current"], what, (": " + detail) if detail else ""))
    return bool(cond)


def eq(got, exp, what):
    return check(got == exp, what, "expected %r, got %r" % (exp, got))


def live_session(make):
    """A session of tests/live.py (make: live.ksm_session or live.zram_session),
    or Skip saying why the kernel may not be changed now."""
    import live
    try:
        return make()
    except live.NotAllowed as e:
        raise Skip(str(e))


def skip(msg):
    """A SKIP line without leaving the test function."""
    STATE["skipped"] += 1
    print("SKIP [%s] %s" % (STATE["current"], msg))


def tmp(name):
    return os.path.join(STATE["tmp"], name)


def shortened(short, name):
    """Whether a table's @short is @name, or @name cut in the middle as
    tables for people cut names: a start of it, "…", an end of it."""
    if short == name:
        return True
    head, sep, tail = short.partition("\u2026")
    return bool(sep) and "\u2026" not in tail and name.startswith(head) and \
        name.endswith(tail) and len(head) + len(tail) < len(name)


def unique_pages(n):
    """A raw image of n random pages (no two alike), made once a run."""
    snap = tmp("unique-%d.raw" % n)
    if not os.path.exists(snap):
        with open(snap, "wb") as f:
            f.write(os.urandom(n * PAGE))
    return snap


def parse_csv(r, what, cols):
    """Parse a run's CSV output (r.out); check the header starts with cols
    and every row has as many fields (one check each). Rows as dicts, or None."""
    try:
        rows = list(csv.reader(io.StringIO(r.out, newline=""), strict=True))
    except csv.Error as e:
        check(False, "%s: CSV parses" % what, "%s; output %r" % (e, r.out[:300]))
        return None
    if not check(rows and rows[0][:len(cols)] == cols, "%s: CSV header" % what,
                 "expected %r, got %r (`%s`)" % (cols, rows[0] if rows else None,
                                                 getattr(r, "cmd", ""))):
        return None
    hdr = rows[0]
    STATE["header"] = hdr
    bad = [x for x in rows[1:] if len(x) != len(hdr)]
    if not check(not bad, "%s: every CSV row has %d fields" % (what, len(hdr)), repr(bad[:2])):
        return None
    return undigest([dict(zip(hdr, x)) for x in rows[1:]], what)


# Columns that hold digests: one per algorithm in the pages report, and
# "digest" in top (and the fleet exports).
DIGEST_COLS = {"jhash2", "crc32c", "crc32c-sw", "xxhash", "xxh32", "xxh64", "xxh3",
               "xxh128", "digest"}


def undigest(rows, what):
    """Digests in CSV and JSON are 0x-prefixed hex (so that spreadsheets keep
    them as text): check the prefix on every digest cell, once per call, and
    return the rows with it removed, for comparison with oracles' hex."""
    if not rows:
        return rows
    bad = []
    for row in rows:
        for k in DIGEST_COLS & set(row):
            v = row[k]
            if isinstance(v, str) and v.startswith("0x"):
                row[k] = v[2:]
            else:
                bad.append((k, v))
    check(not bad, "%s: digests are 0x-prefixed" % what, repr(bad[:3]))
    return rows


def as_int(v):
    """An integer cell (CSV text or JSON number) as an int, else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and re.fullmatch(r"-?\d+", v.strip()):
        return int(v)
    return None


class Run:
    """A finished ksmscan run: args, rc (or "timeout"), out and err text."""

    def __init__(self, args, rc, out, err):
        self.args, self.rc, self.out, self.err = args, rc, out, err
        self.cmd = " ".join(shlex.quote(a) for a in args)

    def brief(self):
        return "`%s` rc=%r stderr=%r" % (self.cmd, self.rc, self.err[-600:])


def run(args, input=None, timeout=300, env=None):
    """Run $KSMSCAN with args (standard input: input bytes, else none; the
    environment: env, else this one)."""
    import subprocess
    full = KSMSCAN + list(args)
    try:
        p = subprocess.run(full, input=input, capture_output=True, timeout=timeout,
                           stdin=None if input is not None else subprocess.DEVNULL,
                           env=env)
    except subprocess.TimeoutExpired as e:
        return Run(full, "timeout", (e.stdout or b"").decode("utf-8", "replace"),
                   (e.stderr or b"").decode("utf-8", "replace"))
    return Run(full, p.returncode, p.stdout.decode("utf-8", "replace"),
               p.stderr.decode("utf-8", "replace"))


@__import__("contextlib").contextmanager
def tmpfs(size):
    """A tmpfs of @size ("1m", "64m") mounted on a fresh directory, unmounted
    after (root only: Skip, with the reason, when it cannot be mounted)."""
    import subprocess
    if os.geteuid() != 0:
        raise Skip("needs root to mount a %s tmpfs" % size)
    d = tempfile.mkdtemp(prefix="ksmscan-tmpfs-")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size, "tmpfs", d],
                       capture_output=True, text=True)
    if r.returncode:
        os.rmdir(d)
        raise Skip("cannot mount a tmpfs: %s" % r.stderr.strip())
    try:
        yield d
    finally:
        subprocess.run(["umount", d])
        os.rmdir(d)


def named_child(name, seconds=300):
    """A sleeping child process whose command name (/proc/PID/comm) is the
    bytes @name, set with prctl(PR_SET_NAME) (15 bytes kept); kill() it."""
    import subprocess
    code = ("import ctypes,sys,time\n"
            "ctypes.CDLL(None).prctl(15, ctypes.c_char_p(bytes.fromhex(sys.argv[1])), 0, 0, 0)\n"
            "print('ok', flush=True)\n"
            "time.sleep(%d)\n" % seconds)
    p = subprocess.Popen([sys.executable, "-c", code, name.hex()], stdout=subprocess.PIPE)
    p.stdout.readline()
    return p


def proc_stat_fields(pid):
    """The fields of /proc/PID/stat after the command name, as text (state
    first, flags at [6], starttime at [19]). The file is read as bytes: a
    command name may be any bytes but NUL, not UTF-8, and may hold ") ".
    Raises OSError as open() does."""
    with open("/proc/%s/stat" % pid, "rb") as f:
        data = f.read()
    return data[data.rindex(b")") + 2:].decode("ascii").split()


def proc_comm(pid):
    """/proc/PID/comm as bytes, without the kernel's closing line break."""
    with open("/proc/%s/comm" % pid, "rb") as f:
        data = f.read()
    return data[:-1] if data.endswith(b"\n") else data
def run_without_merge_cost(args, input=None, timeout=300):
    """run(), with --merge-cost=0 added to a series' arguments that give no
    --merge-cost: for suites whose oracles count ksmd's CPU per page visited
    and revisited only (tests/test_frames.py checks the cost per merge)."""
    args = list(args)
    series = any(a == "--series" or a.startswith("--count") for a in args)
    if series and not any(a.startswith("--merge-cost") for a in args):
        args.append("--merge-cost=0")
    return run(args, input=input, timeout=timeout)


def zero_page_mapped():
    """Whether this kernel maps its shared zero page where a private
    anonymous page is only read: two such pages then share one frame
    (some kernels, such as s390's for KVM guests, give each its own)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    addr = libc.mmap(None, 2 * PAGE, 1, 0x02 | 0x20, -1, 0)
    ctypes.string_at(addr, 1)
    ctypes.string_at(addr + PAGE, 1)
    with open("/proc/self/pagemap", "rb") as f:
        f.seek(addr // PAGE * 8)
        a, b = struct.unpack("<QQ", f.read(16))
    mask = (1 << 55) - 1
    return (a & mask) != 0 and (a & mask) == (b & mask)


THP_ENABLED = "/sys/kernel/mm/transparent_hugepage/enabled"


def thp_mode():
    """The kernel's transparent huge page mode (always, madvise, never);
    never when the kernel has none."""
    try:
        with open(THP_ENABLED) as f:
            m = re.search(r"\[(\w+)\]", f.read())
    except OSError:
        return "never"
    return m.group(1) if m else "never"


def zstd_stream(path, head, chunk, times):
    """Write @head, then @chunk @times times, as one zstd frame compressed as
    a stream (a small file for a large export); return @path."""
    import zstandard
    with open(path, "wb") as f:
        w = zstandard.ZstdCompressor(level=19).stream_writer(f)
        w.write(head)
        for _ in range(times):
            w.write(chunk)
        w.flush(zstandard.FLUSH_FRAME)
    return path


def free_port():
    """A loopback port nothing listens on (bound, then closed)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def closing_line(passed, failed, skipped=0):
    """Every suite's last line: "N passed, N failed", and ", N skipped" when
    tests were skipped (run_all.py sums all three)."""
    return "%d passed, %d failed" % (passed, failed) + (
        ", %d skipped" % skipped if skipped else "")


def run_suite(prefix):
    """Run the registered tests (or those whose name or group contains an
    argument) in a fresh temporary directory; print the closing line."""
    only = sys.argv[1:]
    exe = KSMSCAN[0]
    if not (shutil.which(exe) or os.path.exists(exe)):
        print("FAIL ksmscan binary not found: %s (set $KSMSCAN or build ./ksmscan)" % exe)
        print("0 passed, 1 failed")
        return 1
    STATE["tmp"] = tempfile.mkdtemp(prefix=prefix)
    try:
        for group, name, fn in TESTS:
            if only and not any(o in name or o in group for o in only):
                continue
            if apps_run() and name not in APP_TESTS:
                continue                  # make test ran it
            STATE["current"] = "%s/%s" % (group, name)
            try:
                fn()
            except Skip as e:
                skip(str(e))
            except Stop:
                pass
            except Exception:
                tb = traceback.format_exc().strip().splitlines()
                check(False, "test raised an exception", " | ".join(tb[-3:]))
    finally:
        shutil.rmtree(STATE["tmp"], ignore_errors=True)
    print(closing_line(STATE["passed"], STATE["failed"], STATE["skipped"]))
    return 1 if STATE["failed"] else 0


def ram_stream(records, blocks=((b"pc.ram", 1 << 20),)):
    """A minimal QEMU migration stream written from the format (QEMU's
    migration/ram.c and savevm.c): header, RAM START with the block list,
    one PART with @records, RAM END, then a device."""
    be = lambda n, v: v.to_bytes(n, "big")  # noqa: E731
    total = sum(l for _, l in blocks)
    out = b"QEVM" + be(4, 3) + b"\x07" + be(4, 4) + b"pc-x"
    out += b"\x01" + be(4, 2) + b"\x03ram" + be(4, 0) + be(4, 4) + be(8, total | 4)
    for n, l in blocks:
        out += bytes([len(n)]) + n + be(8, l)
    out += be(8, 0x10) + b"\x7e" + be(4, 2) + b"\x02" + be(4, 2) + records + be(8, 0x10)
    out += b"\x7e" + be(4, 2) + b"\x03" + be(4, 2) + be(8, 0x10) + b"\x7e" + be(4, 2)
    return out + b"\x04" + be(4, 3) + b"\x05timer" + be(4, 0) + be(4, 2) + bytes(40)
