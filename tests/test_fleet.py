#!/usr/bin/python3
"""Hosts and fleets: -r contents, -r sketch, -r matrix, --group, -P and
--all-processes with the kernel's per-process figures, and ksmfleet.

Oracles, never ksmscan itself: Python's xxhash (XXH3-128 of each page the
test wrote), the KSM grouping of ksmtest.ksm_group() over contents counted
in Python from the bytes, /proc read here (comm, stat flags, smaps of the
test's own children), and the kernel's KSM (/proc/PID/ksm_merging_pages,
only with KSMSCAN_LIVE_TESTS=1 through live.ksm_session()). The fleet tool
is checked against the same Python oracle and against ksmscan's '*' rows
and -r matrix, as its contract says it must equal them.
"""
import collections, csv, ctypes, io, itertools, os, random, re, signal, \
    socket, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import KSMSCAN, PAGE, ZERO, Run, Skip, check, eq, fixture, ksm_group, live_session, \
    THP_ENABLED, proc_comm, proc_stat_fields, run_suite, skip, test, thp_mode, tmp, \
    zero_page_mapped  # noqa: E402
import live  # noqa: E402
import xxhash  # noqa: E402
import zstandard  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLEET = [os.path.join(ROOT, "fleet", "bin", "ksmfleet")]
TIMEOUT = 300


class R:
    def __init__(self, p, cmd):
        self.rc, self.out, self.err, self.cmd = p.returncode, p.stdout, p.stderr, cmd


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=TIMEOUT, **kw)
    return R(p, " ".join(cmd))


def ksmscan(*args, **kw):
    return run(KSMSCAN + list(args), **kw)


def rows(r):
    return list(csv.DictReader(io.StringIO(r.out, newline="")))


def ok(r, what):
    return check(r.rc == 0, "%s: exit 0" % what, "exit %d, stderr %r" % (r.rc, r.err[:300]))


# --- inputs built to share known contents -------------------------------------

def page(tag, n):
    """A page no other (tag, n) gives."""
    return (b"%s:%d:" % (tag.encode(), n)).ljust(64, b".") * (PAGE // 64)


def write_input(name, pages):
    path = tmp(name)
    with open(path, "wb") as f:
        f.write(b"".join(pages))
    return path


def shared_inputs(rng):
    """Four inputs: contents shared by all, by some pairs, zero pages, groups
    around max_page_sharing, and unique pages; shuffled."""
    common = [page("common", i) for i in range(6)]
    ab = [page("ab", i) for i in range(5)]
    bc = [page("bc", i) for i in range(3)]
    spec = {
        "a.raw": common * 3 + ab * 2 + [ZERO] * 7 + [page("a", i) for i in range(9)]
        + [page("big", 0)] * 255,
        "b.raw": common + ab + bc * 4 + [ZERO] * 2 + [page("big", 0)] * 3,
        "c.raw": common[:2] + bc + [page("c", i) for i in range(4)] + [page("big", 0)],
        "d.raw": [page("d", i) for i in range(5)] + [ZERO],
    }
    paths, data = [], {}
    for name, pages in spec.items():
        pages = list(pages)
        rng.shuffle(pages)
        paths.append(write_input(name, pages))
        data[paths[-1]] = pages
    return paths, data


def counts(pages):
    return collections.Counter(pages)


def saved(c, zero, m, z):
    if zero and z:
        return c
    return ksm_group(c, m)[1] if c >= 2 else 0


def figures(cnt, m, z):
    """The summary's KSM figures of a Counter of pages."""
    f = dict(pages=sum(cnt.values()), zero_pages=cnt.get(ZERO, 0),
             distinct_pages=len(cnt), pages_shared=0, pages_sharing=0,
             ksm_zero_pages=0)
    for p, c in cnt.items():
        if p == ZERO and z:
            f["ksm_zero_pages"] = c
            continue
        sh, sg = ksm_group(c, m) if c >= 2 else (0, 0)
        f["pages_shared"] += sh
        f["pages_sharing"] += sg
    f["saved_bytes"] = (f["pages_sharing"] + f["ksm_zero_pages"]) * PAGE
    f["general_profit"] = f["saved_bytes"] - (f["pages"] - f["ksm_zero_pages"]) * 64
    return f


def digest(p):
    return "0x%032x" % xxhash.xxh3_128_intdigest(p)


def pair_oracle(ca, cb, m, z):
    shared = [p for p in ca if p in cb]
    extra = sum(saved(ca[p] + cb[p], p == ZERO, m, z) - saved(ca[p], p == ZERO, m, z)
                - saved(cb[p], p == ZERO, m, z) for p in shared)
    return len(shared), sum(ca[p] for p in shared), sum(cb[p] for p in shared), extra * PAGE


# --- contents and sketch ------------------------------------------------------

@test("contents")
def contents_rows():
    paths, data = shared_inputs(random.Random(1))
    for extra in ([], ["-j", "1"], ["-a", "crc32c,xxh128"]):
        r = ksmscan("-r", "contents", "--csv", *extra, *paths)
        if not ok(r, "contents %s" % extra):
            continue
        got = [(x["input"], x["digest"], int(x["pages"]), int(x["zero"]), x["host"])
               for x in rows(r)]
        exp = []
        for path in paths:
            cnt = counts(data[path])
            exp += sorted((path, digest(p), c, int(p == ZERO), socket.gethostname())
                          for p, c in cnt.items())
        eq(got, exp, "contents %s: every content of every input, sorted by digest, "
           "the host column gethostname()'s" % extra)
        eq(r.out.splitlines()[0], "input,digest,pages,zero,host", "contents: the columns")
        check(all(re.fullmatch(r"0x[0-9a-f]{32}", g[1]) for g in got),
              "contents: digests are 0x and 32 lower-case hex digits")
    # A stream and a zstd file give the same rows as the file.
    with open(paths[0], "rb") as f:
        raw = f.read()
    zpath = tmp("a.raw.zst")
    with open(zpath, "wb") as f:
        f.write(zstandard.ZstdCompressor().compress(raw))
    want = sorted((digest(p), c) for p, c in counts(data[paths[0]]).items())
    for args, kw in ((["-"], {"input": raw.decode("latin-1")}), ([zpath], {})):
        r = run(KSMSCAN + ["-r", "contents", "--csv"] + args, **kw) if not kw else \
            subprocess.run(KSMSCAN + ["-r", "contents", "--csv", "-"], input=raw,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out = r.out if isinstance(r, R) else r.stdout.decode()
        got = sorted((x["digest"], int(x["pages"]))
                     for x in csv.DictReader(io.StringIO(out, newline="")))
        eq(got, want, "contents of %s equal the file's" % args[0])
    # JSON and table hold the same rows; the report keeps its place.
    r = ksmscan("-r", "summary,contents", "--json", *paths[:2])
    if ok(r, "contents in JSON"):
        import json
        j = json.loads(r.out)
        eq(len(j["contents"]), len(counts(data[paths[0]])) + len(counts(data[paths[1]])),
           "JSON: one contents row per distinct content of each input")


@test("sketch")
def sketch_rows():
    paths, data = shared_inputs(random.Random(2))
    for k, host in ((1, "h\u00e9te-1"), (5, "rack 7"), (4096, "n=3")):
        r = ksmscan("-r", "sketch", "--csv", "--sketch-size=%d" % k, "--host=" + host, *paths)
        if not ok(r, "sketch %d" % k):
            continue
        got = [(x["input"], x["digest"], int(x["pages"]), int(x["distinct_pages"]), x["host"])
               for x in rows(r)]
        exp = []
        for path in paths:
            cnt = counts(data[path])
            exp += sorted((path, digest(p), c, len(cnt), host) for p, c in cnt.items())[:k]
        # then the sketch of all of them, the host's own: the union's k smallest
        cnt = counts([p for path in paths for p in data[path]])
        exp += sorted(("*", digest(p), c, len(cnt), host) for p, c in cnt.items())[:k]
        eq(got, exp, "sketch --sketch-size=%d: the k smallest digests per input, then of "
           "all inputs (input *), host %r" % (k, host))
    r = ksmscan("-r", "sketch", "--csv", paths[0])
    eq(sorted({x["input"] for x in rows(r)}), [paths[0]], "sketch of one input: no * rows")
    r = ksmscan("-r", "sketch", "--host=", paths[0])
    check(r.rc == 2 and r.err.startswith("ksmscan: ") and not r.out,
          "--host= (empty): usage error", "exit %d, %r" % (r.rc, r.err[:100]))
    for bad in ("0", "x", "268435456"):
        r = ksmscan("-r", "sketch", "--sketch-size=" + bad, paths[0])
        check(r.rc == 2 and r.err.startswith("ksmscan: ") and not r.out,
              "--sketch-size=%s: usage error" % bad, "exit %d, %r" % (r.rc, r.err[:100]))


# --- matrix and groups -----------------------------------------------------------

@test("matrix")
def matrix_pairs():
    paths, data = shared_inputs(random.Random(3))
    for opts, m, z in (([], 256, False), (["-m", "3"], 3, False), (["-z"], 256, True),
                       (["-z", "-m", "2"], 2, True)):
        r = ksmscan("-r", "matrix", "--csv", *opts, *paths)
        if not ok(r, "matrix %s" % opts):
            continue
        got = [(x["input_a"], x["input_b"], int(x["shared_contents"]), int(x["pages_a"]),
                int(x["pages_b"]), int(x["saved_together_bytes"])) for x in rows(r)]
        exp = []
        for i, j in itertools.combinations(range(len(paths)), 2):
            s, pa, pb, sv = pair_oracle(counts(data[paths[i]]), counts(data[paths[j]]), m, z)
            exp.append((paths[i], paths[j], s, pa, pb, sv, i, j))
        exp.sort(key=lambda e: (-e[5], -e[2], e[6], e[7]))
        eq(got, [e[:6] for e in exp], "matrix %s: every pair, the pairs gaining most first" % opts)
        # The extra saving is the union's less each alone (the summary's figures).
        for e in exp:
            u = counts(data[e[0]] + data[e[1]])
            alone = figures(counts(data[e[0]]), m, z)["saved_bytes"] + \
                figures(counts(data[e[1]]), m, z)["saved_bytes"]
            eq(e[5], figures(u, m, z)["saved_bytes"] - alone,
               "oracle: saved_together is saved(a+b) - saved(a) - saved(b)")
    r = ksmscan("-r", "matrix", "--csv", paths[0])
    eq((r.rc, rows(r)), (0, []), "matrix of one input: no pair")


@test("groups")
def group_rows():
    paths, data = shared_inputs(random.Random(4))
    a, b, c, d = paths
    groups = {"ab": [a, b], "cd": [c, d], "solo": [b], "abc": [a, b, c]}
    args = ["--group=%s=%s" % (g, ",".join(v)) for g, v in groups.items()]
    cols = ("pages", "zero_pages", "distinct_pages", "pages_shared", "pages_sharing",
            "ksm_zero_pages", "saved_bytes", "general_profit")
    for opts, m, z in (([], 256, False), (["-m", "2", "-z"], 2, True)):
        r = ksmscan("--csv", *opts, *args, *paths)
        if not ok(r, "--group %s" % opts):
            continue
        rs = rows(r)
        eq([x["input"] for x in rs], paths + ["*"] + ["group:" + g for g in groups],
           "rows: inputs, '*', then the groups in order")
        for x in rs[5:]:
            g = x["input"][6:]
            f = figures(counts([p for path in groups[g] for p in data[path]]), m, z)
            eq({k: int(x[k]) for k in cols}, f, "group %s %s: figures" % (g, opts))
    # A group naming an input twice counts it once; the table shows the rows.
    r = ksmscan("--group=x=%s,%s" % (a, a), a, b)
    check(r.rc == 0 and re.search(r"^group:x\s", r.out, re.M), "table shows group:x", r.out[-300:])
    for bad in ("noequals", "=a", "x=", "x=nope", "x=%s,nope" % a):
        r = ksmscan("--group=" + bad, a, b)
        check(r.rc == 2 and r.err.startswith("ksmscan: ") and not r.out,
              "--group=%s: usage error, one line first" % bad, "exit %d, %r" % (r.rc, r.err[:120]))
    r = ksmscan("--group=x=%s" % a, "--group=x=%s" % b, a, b)
    check(r.rc == 2 and "twice" in r.err.splitlines()[0], "a group name twice: usage error", r.err[:100])


# --- live processes ----------------------------------------------------------------

CHILD = r"""
import ctypes, mmap, sys, os
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(15, ctypes.c_char_p(sys.argv[1].encode()), 0, 0, 0)   # PR_SET_NAME
npages, huge = int(sys.argv[2]), int(sys.argv[3])
m = mmap.mmap(-1, npages * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(npages):
    m[i * 4096:(i + 1) * 4096] = bytes([i % 3 + 1]) * 4096
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
if libc.madvise(addr, npages * 4096, 12) != 0:                   # MADV_MERGEABLE
    print("madvise", ctypes.get_errno(), flush=True); sys.exit(1)
if huge:
    H = 2 << 20
    h = mmap.mmap(-1, (huge + 1) * H, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    base = ctypes.addressof(ctypes.c_char.from_buffer(h))
    start = (base + H - 1) // H * H
    libc.madvise(start, huge * H, 14)                            # MADV_HUGEPAGE
    off = start - base
    for i in range(huge * H // 4096):
        h[off + i * 4096] = 1
    print("%x %x" % (addr, start), flush=True)
else:
    print("%x" % addr, flush=True)
sys.stdin.read()
"""


def start_child(name, npages, huge=0):
    p = subprocess.Popen([sys.executable, "-c", CHILD, name, str(npages), str(huge)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().split()
    if not line or line[0] == "madvise":
        p.kill()
        raise Skip("the child could not mark memory mergeable: %r" % line)
    p.addrs = [int(x, 16) for x in line]
    return p


def stop(children):
    for p in children:
        p.kill()
        p.wait()


def smaps_area(pid, start, key):
    """A field of the smaps entry of the area at @start, in kB."""
    with open("/proc/%d/smaps" % pid) as f:
        inside = False
        for line in f:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) ", line)
            if m:
                inside = int(m.group(1), 16) <= start < int(m.group(2), 16)
            elif inside and line.startswith(key + ":"):
                return int(line.split()[1])
    return None


def kernel_threads():
    out = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                flags = int(proc_stat_fields(d)[6])
            except OSError:
                continue
            if flags & 0x00200000:
                out.add(int(d))
    return out


def read_int(path):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


@test("processes")
def process_regex():
    tag = "kft%d" % os.getpid()
    kids = [start_child("%s_%d" % (tag, i), 16 + 8 * i) for i in range(3)]
    try:
        # ksmd, when it runs on this host, merges the children's pages
        # while the test looks: ksmscan's figure lies between the kernel's
        # before and after the scan (merging only grows it; nothing here
        # unmerges).
        before = [read_int("/proc/%d/ksm_merging_pages" % p.pid) for p in kids]
        r = ksmscan("-P", "^%s_[0-9]+$" % tag, "--csv")
        after = [read_int("/proc/%d/ksm_merging_pages" % p.pid) for p in kids]
        if not ok(r, "-P"):
            return
        rs = [x for x in rows(r) if x["input"] != "*"]
        eq(sorted(x["input"] for x in rs), sorted("pid:%d" % p.pid for p in kids),
           "-P finds exactly the test's children")
        for p, i in zip(kids, range(3)):
            x = next((x for x in rs if x["input"] == "pid:%d" % p.pid), None)
            if not x:
                continue
            eq(x["command"], "%s_%d" % (tag, i), "command column is /proc/PID/comm")
            eq(int(x["mergeable_pages"]), 16 + 8 * i, "mergeable_pages = the MADV_MERGEABLE pages")
            got = int(x["ksm_merging_pages"])
            check(before[i] <= got <= after[i],
                  "ksm_merging_pages as /proc/PID/ksm_merging_pages",
                  "%d, the kernel's %d before and %d after" % (got, before[i], after[i]))
        star = [x for x in rows(r) if x["input"] == "*"]
        check(star and star[0]["mergeable_pages"] == "", "'*' leaves the process columns empty")
        check("Host: KSM has merged" in ksmscan("-P", "^%s_" % tag).out,
              "the table's closing sentence for the host")
        # A file among processes: empty process columns.
        f = write_input("f.raw", [page("f", 0)])
        r = ksmscan("-P", "^%s_0$" % tag, f, "--csv")
        x = [x for x in rows(r) if x["input"] == f]
        check(x and x[0]["mergeable_pages"] == "" and x[0]["command"] == "",
              "a file's process columns are empty")
        # Without a process, no process columns at all.
        check("mergeable_pages" not in ksmscan(f, "--csv").out.splitlines()[0],
              "no process: no process columns")
        # --all-processes: the children, never a kernel thread, not ksmscan.
        r = ksmscan("--all-processes", "-q", "--csv", "-r", "regions")
        got = {int(x["input"][4:]) for x in rows(r) if x["input"].startswith("pid:")}
        check({p.pid for p in kids} <= got, "--all-processes takes the children")
        kt = kernel_threads()
        check(kt and not (got & kt), "--all-processes skips kernel threads",
              "%d kernel threads, taken: %r" % (len(kt), sorted(got & kt)[:5]))
    finally:
        stop(kids)
    for bad in ("(", "[a", "*x"):
        r = ksmscan("-P", bad)
        check(r.rc == 2 and r.err.startswith("ksmscan: bad regular expression"),
              "-P %r: usage error naming the regex" % bad, "exit %d, %r" % (r.rc, r.err[:100]))
    # A regex that matches no command name (checked against /proc here):
    # finding no process is the run's failure, exit 1, said in one line.
    none = "^kfnone%d$" % os.getpid()
    comms = set()
    for d in os.listdir("/proc"):
        try:
            comms.add(proc_comm(d))
        except OSError:
            pass
    check(not any(re.search(none.encode(), c) for c in comms), "no process is named %s" % none)
    for q in ([], ["-q"]):
        r = ksmscan(*q, "-P", none)
        eq((r.rc, r.out, r.err), (1, "", "ksmscan: -P '%s': no process to read\n" % none),
           "-P with no match %s: exit 1, one line" % " ".join(q))


@test("processes")
def processes_that_exit_are_left_out():
    """-P processes that exit after they were listed and before their turn:
    no row, one line saying how many, the '*' row not partial, exit 0, and
    the people's summary names each process's command. The turn is made
    certain with standard input as the first input: ksmscan has listed the
    processes when it waits in read() on the pipe (/proc/PID/syscall says
    so: read(2) of file descriptor 0), and waits there while the test ends
    them. (A named FIFO would be
    refused: test_hostile_input.py.)"""
    tag = "kfg%d" % os.getpid()
    kids = [start_child("%s_%d" % (tag, i), 4) for i in range(3)]
    fifo = "first"
    try:
        p = subprocess.Popen(KSMSCAN + ["--csv", "--label=first", "-", "-P",
                                        "^%s_[01]$" % tag], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with open("/proc/%d/syscall" % p.pid) as f:
                    # read(2) of fd 0: not any read (the sanitizers'
                    # runtime reads /proc/self/maps as it starts)
                    if f.read().split()[:2] == ["0", "0x0"]:
                        break
            except OSError:
                break
            time.sleep(0.01)
        stop(kids[:2])
        p.stdin.write(page(tag, 99) * 2)
        p.stdin.close()
        out, err = p.stdout.read().decode(), p.stderr.read().decode()
        p.wait(timeout=120)
        r = Run(p.args, p.returncode, out, err)
        got = rows(r)
        eq([(x["input"], x["pages"], x["status"]) for x in got],
           [(fifo, "2", "ok"), ("*", "2", "ok")],
           "the two processes that exited have no row; '*' is the FIFO's, not partial")
        eq(r.err, "ksmscan: 2 of the processes listed exited before they could be read: "
           "left out\n", "one line says how many")
        eq(r.rc, 0, "exit 0")
        t = ksmscan("-P", "^%s_2$" % tag, fixture("vectors.img"))
        head = t.out.splitlines()[0].split() if t.out else []
        line = [l for l in t.out.splitlines() if l.startswith("pid:%d " % kids[2].pid)]
        check(head[:2] == ["input", "command"] and line and line[0].split()[1] == "%s_2" % tag,
              "the people's summary has the command of each process", t.out[:300])
    finally:
        stop(kids)


CHURN = r"""
import ctypes, mmap, os, random, select, sys, time
libc = ctypes.CDLL(None)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
tag = sys.argv[1].encode()
m = mmap.mmap(-1, 32 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(0, len(m), 4096):
    m[i] = 1
# Every other page read-only: 8192 areas, which make an exit slow to tear
# down (the window in which the process is exiting but not yet a zombie).
base = ctypes.addressof(ctypes.c_char.from_buffer(m))
for i in range(0, len(m), 8192):
    libc.mprotect(base + i, 4096, mmap.PROT_READ)
rng, kids = random.Random(1), set()
print("ready", flush=True)
while not select.select([sys.stdin], [], [], 0)[0]:
    life = rng.random() * 0.01
    pid = os.fork()
    if pid == 0:
        libc.prctl(15, ctypes.c_char_p(tag), 0, 0, 0)   # PR_SET_NAME
        for i in range(4096, len(m), 8192):             # pages of its own
            m[i] = 2
        time.sleep(life)
        os._exit(0)
    kids.add(pid)
    while len(kids) >= 6:
        kids.discard(os.waitpid(-1, 0)[0])
    for k in list(kids):
        if os.waitpid(k, os.WNOHANG)[0]:
            kids.discard(k)
"""


@test("processes")
def processes_that_exit_while_listed_are_no_error():
    """-P processes that exit at any moment (a live host's short-lived
    processes): before their turn, while exiting (the kernel sets
    PF_EXITING and releases the memory while the state still reads R, and
    /proc/PID/mem then answers ESRCH), or while they are read. None is an
    error: exit 0, and no line about one process (a process that exits
    as it is listed may refuse even its own user: not 'could not be read'
    either), only the lines that count them. A churn of children
    of 8192 areas each, that live up to 10 ms, is read 12 times; the old
    rule (gone only when /proc/PID/stat was missing or read Z) failed half
    the runs with "cannot open /proc/PID/mem: No such process", exit 1,
    and printed "memory changed during the scan" for those that exited
    while they were read."""
    tag = "kfx%d" % os.getpid()
    churn = subprocess.Popen([sys.executable, "-c", CHURN, tag], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    counts = re.compile(r"ksmscan: \d+ of the processes listed exited (before they could be "
                        r"read: left out|while they were read: their figures cover what "
                        r"was read)$")
    bad, counted = [], 0
    try:
        churn.stdout.readline()
        for _ in range(12):
            r = ksmscan("-P", "^%s$" % tag, "--csv", "-j", "1")
            if r.rc == 1 and r.err == "ksmscan: -P '^%s$': no process to read\n" % tag:
                continue                        # between two children
            lines = r.err.splitlines()
            counted += any(counts.match(l) for l in lines)
            # A line of its own for a process is the fault (a normal user
            # also reads that frame numbers are hidden: no process's fault).
            if r.rc != 0 or any(l.startswith("ksmscan: pid:") for l in lines):
                bad.append("exit %d: %s" % (r.rc, r.err[-400:]))
    finally:
        churn.stdin.close()
        churn.wait(timeout=60)
    eq(bad, [], "every run exits 0, with no line about one process")
    check(counted > 0, "some processes exited in some run (the case was met)")


@test("processes")
def process_unreadable():
    """As another user, the root processes -P matches are counted in one
    warning (one line, however many); one alone is named."""
    if os.geteuid() != 0:
        raise Skip("needs root to run ksmscan as nobody")
    tag = "kfu%d" % os.getpid()
    kids = [start_child("%s_%d" % (tag, i), 4) for i in range(2)]
    try:
        f = write_input("u.raw", [page("u", 0)])
        os.chmod(os.path.dirname(f), 0o755)
        os.chmod(f, 0o644)
        r = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
                + KSMSCAN + ["-P", "^%s_" % tag, f, "--csv"])
        eq(r.rc, 0, "unreadable processes are not an error")
        eq([l for l in r.err.splitlines() if "could not be read" in l],
           ["ksmscan: 2 processes could not be read (permission denied): run as root"],
           "one warning counts them")
        eq([x["input"] for x in rows(r)], [f], "only the file is an input")
        r = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
                + KSMSCAN + ["-P", "^%s_1$" % tag, f, "--csv"])
        said = [l for l in r.err.splitlines() if "could not be read" in l]
        check(len(said) == 1 and said[0].startswith(
              "ksmscan: pid:%d (%s_1) could not be read: permission denied" % (kids[1].pid, tag)),
              "one unreadable process: one warning naming it", r.err)
    finally:
        stop(kids)


@test("processes")
def process_thp():
    if thp_mode() == "never":
        raise Skip("no transparent huge pages here (%s: never, or missing)" % THP_ENABLED)
    kid = start_child("kfh%d" % os.getpid(), 4, huge=2)
    try:
        made = (smaps_area(kid.pid, kid.addrs[1], "AnonHugePages") or 0) // 4
        if not made:
            raise Skip("THP enabled (%s) but the kernel gave the test no huge page" % thp_mode())
        with open("/proc/%d/smaps" % kid.pid) as f:
            total = sum(int(l.split()[1]) for l in f if l.startswith("AnonHugePages:")) // 4
        r = ksmscan("-p", str(kid.pid), "--csv")
        x = rows(r)
        if ok(r, "-p THP child") and x:
            check(int(x[0]["thp_pages"]) >= made, "thp_pages holds the test's huge pages",
                  "%s < %d" % (x[0]["thp_pages"], made))
            eq(int(x[0]["thp_pages"]), total, "thp_pages = AnonHugePages of the process")
    finally:
        stop([kid])


@test("processes")
def process_live_ksm():
    session = live_session(live.ksm_session)
    with session as ks:
        kid = None
        try:
            ks.set("pages_to_scan", 10000)
            ks.set("sleep_millisecs", 10)
            ks.set("run", 1)
            kid = start_child("kfk%d" % os.getpid(), 300)
            last, stable = -1, 0
            for _ in range(600):
                v = read_int("/proc/%d/ksm_merging_pages" % kid.pid)
                stable = stable + 1 if v == last and v > 0 else 0
                last = v
                if stable >= 20:
                    break
                time.sleep(0.05)
            if last <= 0:
                raise Skip("KSM merged nothing of the child in 30 s")
            r = ksmscan("-p", str(kid.pid), "--csv")
            x = rows(r)
            if ok(r, "-p under KSM") and x:
                eq(int(x[0]["ksm_merging_pages"]),
                   read_int("/proc/%d/ksm_merging_pages" % kid.pid),
                   "ksm_merging_pages as the kernel's, while KSM runs")
                check(int(x[0]["ksm_rmap_items"]) > 0, "ksm_rmap_items from ksm_stat")
        finally:
            if kid:
                stop([kid])


# --- the fleet tool -----------------------------------------------------------------

def fleet(*args):
    return run(FLEET + list(args))


def exports(paths, kind="contents", extra=(), compress=()):
    out = []
    for i, path in enumerate(paths):
        r = ksmscan("-r", kind, "--csv", "--host=" + path, *extra, path)
        e = tmp(os.path.basename(path) + "." + kind + ".csv")
        if i in compress:
            e += ".zst"
            with open(e, "wb") as f:
                f.write(zstandard.ZstdCompressor().compress(r.out.encode()))
        else:
            with open(e, "w", newline="") as f:
                f.write(r.out)
        out.append(e)
    return out


@test("fleet")
def fleet_totals():
    paths, data = shared_inputs(random.Random(5))
    ex = exports(paths, compress=(1, 3))
    for opts, m, z in (([], 256, False), (["-m", "3"], 3, False), (["-z"], 256, True)):
        r = fleet("--workers=2", "--csv", *opts, *ex)
        if not ok(r, "ksmfleet totals %s" % opts):
            continue
        got = {k: int(v) for k, v in rows(r)[0].items()}
        f = figures(counts([p for path in paths for p in data[path]]), m, z)
        alone = sum(figures(counts(data[p]), m, z)["saved_bytes"] for p in paths)
        exp = {k: f[k] for k in ("pages", "distinct_pages", "pages_shared",
                                 "pages_sharing", "saved_bytes")}
        # files: each page its own frame, so KSM frees what it saves
        exp.update(hosts=len(paths), saved_bytes_hosts_alone=alone, frames=f["pages"],
                   freed_bytes=f["saved_bytes"])
        eq(got, exp, "totals %s: the Python oracle's" % opts)
        star = [x for x in rows(ksmscan("--csv", *opts, *paths)) if x["input"] == "*"][0]
        eq({k: got[k] for k in ("pages", "distinct_pages", "pages_shared", "pages_sharing",
                                "saved_bytes")},
           {k: int(star[k]) for k in ("pages", "distinct_pages", "pages_shared",
                                      "pages_sharing", "saved_bytes")},
           "totals %s: ksmscan's '*' row" % opts)
    r = fleet("--workers=2", "--csv", "--report=hosts", *ex)
    if ok(r, "hosts"):
        eq([(x["host"], int(x["pages"]), int(x["distinct_pages"]), int(x["saved_bytes"]))
            for x in rows(r)],
           [(p, len(data[p]), len(counts(data[p])), figures(counts(data[p]), 256, 0)["saved_bytes"])
            for p in paths], "hosts: each host alone")
    r = fleet("--workers=2", "--csv", "--report=pairs", *ex)
    mx = ksmscan("-r", "matrix", "--csv", *paths)
    if ok(r, "pairs"):
        eq([(x["host_a"], x["host_b"], x["shared_contents"], x["saved_together_bytes"],
             x["pages_a"], x["pages_b"]) for x in rows(r)],
           [(x["input_a"], x["input_b"], x["shared_contents"], x["saved_together_bytes"],
             x["pages_a"], x["pages_b"]) for x in rows(mx) if x["shared_contents"] != "0"],
           "pairs: as -r matrix, the pairs that share")
    r = fleet("--workers=2", "--report=totals", *ex)
    check(r.rc == 0 and r.out.startswith("hosts"), "a table without --csv", r.out[:200])


# A prefork server: the parent writes n pages at an address it prints
# (2 MiB-aligned in MADV_HUGEPAGE memory with huge=1), the first dup of 8
# contents (dup/8 times each, dup/8 frames each) and the rest once, and
# reads the next `reads` pages without writing them (each maps the kernel's
# zero page), then forks two children, which share every frame; the first
# child then writes one new content over pages 0-15 (16 frames of its own).
PREFORK = r"""
import ctypes, mmap, os, sys
n, dup, huge, reads = (int(x) for x in sys.argv[1:5])
H = 2 << 20
m = mmap.mmap(-1, (n + reads) * 4096 + H * huge,
              flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
base = ctypes.addressof(ctypes.c_char.from_buffer(m))
off = -base % H if huge else 0
m.madvise(mmap.MADV_HUGEPAGE if huge else mmap.MADV_NOHUGEPAGE, off, (n + reads) * 4096)
for i in range(n):
    tag = b"c%d" % (i % 8) if i < dup else b"u%d" % i
    m[off + i * 4096:off + (i + 1) * 4096] = tag.ljust(4096, b".")
assert all(m[off + i * 4096] == 0 for i in range(n, n + reads))
kids = []
for k in range(2):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        if k == 0:
            for i in range(16):
                m[off + i * 4096:off + (i + 1) * 4096] = b"w".ljust(4096, b".")
        os.write(w, b"x")
        sys.stdin.read()
        os._exit(0)
    os.read(r, 1)
    kids.append(pid)
print(base + off, base + off + (n + reads) * 4096, os.getpid(), *kids, flush=True)
sys.stdin.read()
for pid in kids:
    os.waitpid(pid, 0)
"""

FIGURES = ("pages", "distinct_pages", "pages_shared", "pages_sharing", "saved_bytes",
           "frames", "freed_bytes")


def prefork_figures(n, dup, reads):
    """What PREFORK built, by hand: 3n mappings on n + 16 frames; each of
    the 8 contents 3 dup/8 - 2 mappings (the writing child lost 2 of each)
    on dup/8 frames, the child's content 16 on 16: all 9 merge (sharing:
    every mapping but one, fork-shared ones too; freed: every frame but
    one); the n - dup held once, on one frame the three processes map,
    never merge (mm/ksm.c never merges a page with itself). The pages only
    read map the zero page, 3 reads mappings that are neither pages nor
    frames; on a kernel that gives each a frame of its own (this test's
    VM, s390's KVM guests), they are one more content, zero-filled: 3 reads
    mappings on reads frames, which merge."""
    sharing, freed = 8 * (3 * dup // 8 - 2 - 1) + 15, 8 * (dup // 8 - 1) + 15
    f = {"pages": 3 * n, "distinct_pages": 8 + (n - dup) + 1, "pages_shared": 9,
         "frames": n + 16, "zero_page_mappings": 3 * reads}
    if reads and not zero_page_mapped():
        sharing, freed = sharing + 3 * reads - 1, freed + reads - 1
        f.update(pages=f["pages"] + 3 * reads, distinct_pages=f["distinct_pages"] + 1,
                 pages_shared=10, frames=f["frames"] + reads, zero_page_mappings=0)
    return dict(f, pages_sharing=sharing, saved_bytes=sharing * PAGE, freed_bytes=freed * PAGE)


def prefork_through_fleet(n, dup, huge, reads, what):
    """PREFORK's '*' row and ksmfleet's totals of its contents export, each
    against prefork_figures(); the export, or None."""
    p = subprocess.Popen([sys.executable, "-c", PREFORK, str(n), str(dup), str(huge),
                          str(reads)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        lo, hi, *pids = (int(x) for x in p.stdout.readline().split())
        if huge and not smaps_area(pids[0], lo, "AnonHugePages"):
            raise Skip("the kernel gave the prefork parent no huge page")
        args = ["--range=0x%x-0x%x" % (lo, hi)] + sum((["-p", str(x)] for x in pids), [])
        star = [x for x in rows(ksmscan("--csv", *args)) if x["input"] == "*"]
        if not check(star, "%s: ksmscan's '*' row" % what):
            return None
        want = prefork_figures(n, dup, reads)
        eq({k: int(star[0][k]) for k in want}, want, "%s: '*' as constructed" % what)
        r = ksmscan("-r", "contents", "--csv", *args)
        e = tmp("prefork%d.contents.csv" % huge)
        with open(e, "w", newline="") as f:
            f.write(r.out)
        r = fleet("--workers=1", "--csv", e)
        if ok(r, "%s: ksmfleet totals of the contents export" % what):
            eq({k: int(rows(r)[0][k]) for k in FIGURES}, {k: int(star[0][k]) for k in FIGURES},
               "%s: ksmfleet's totals are the '*' row's" % what)
        sk = rows(ksmscan("-r", "sketch", "--csv", *args))
        eq([sum(int(x[c]) for x in sk if (x["input"] == "*") == s)
            for s in (False, True) for c in ("pages", "frames")] +
           [sum(1 for x in sk if x["input"] == "*")],
           [want["pages"], want["frames"]] * 2 + [want["distinct_pages"]],
           "%s: the sketch's mappings and frames, in the inputs' rows and '*'" % what)
        return e
    finally:
        p.stdin.close()
        p.wait()


@test("fleet")
def fleet_frames_of_forked_processes():
    # The export of a prefork server gives each content's mappings (pages)
    # and frames: ksmfleet counts as the kernel does, and its totals are
    # the '*' row's, every column. Constructed: 336 mappings on 128 frames,
    # 25 contents; 9 merge, 279 mappings sharing, 103 frames freed; the 16
    # held once merge nothing (counting mappings alone, 2 each would); the
    # 24 mappings of the zero page are neither pages nor frames (or, on a
    # kernel that maps none there, 24 mappings on 8 frames that merge).
    e = prefork_through_fleet(112, 96, 0, 8, "prefork")
    if e is None:
        return
    # What ksmscan wrote before the frames column (pages were frames, a row
    # with none left out) still reads as it did: its frames are its pages.
    with open(e, newline="") as f:
        new = list(csv.DictReader(f))
    old = tmp("prefork.old.csv")
    with open(old, "w", newline="") as f:
        f.write("input,digest,pages,zero,host\r\n" + "".join(
            "%s,%s,%s,%s,%s\r\n" % (x["input"], x["digest"], x["frames"], x["zero"], x["host"])
            for x in new if x["frames"] != "0"))
    r = fleet("--workers=1", "--csv", old)
    want = prefork_figures(112, 96, 8)
    if ok(r, "an export without frames"):
        eq({k: int(rows(r)[0][k]) for k in FIGURES},
           {"pages": want["frames"], "distinct_pages": want["distinct_pages"],
            "pages_shared": want["pages_shared"], "pages_sharing": want["freed_bytes"] // PAGE,
            "saved_bytes": want["freed_bytes"], "frames": want["frames"],
            "freed_bytes": want["freed_bytes"]},
           "an export without frames: a frame a page, as before")
    # A stored line of an export of a file: 3 pages of one content.
    one = tmp("stored.csv")
    with open(one, "w") as f:
        f.write("input,digest,pages,zero,host\n"
                "a.raw,0x0123456789abcdef0123456789abcdef,3,0,h\n")
    r = fleet("--workers=1", "--csv", one)
    if ok(r, "a stored export of a file"):
        eq({k: int(rows(r)[0][k]) for k in FIGURES},
           {"pages": 3, "distinct_pages": 1, "pages_shared": 1, "pages_sharing": 2,
            "saved_bytes": 2 * PAGE, "frames": 3, "freed_bytes": 2 * PAGE},
           "a stored export of a file: frames are its pages")


@test("fleet")
def fleet_frames_of_forked_huge_pages():
    # The same in MADV_HUGEPAGE memory: 512 pages, one huge page of the
    # parent's that the first child shares (and splits where it writes).
    if os.geteuid() != 0:
        raise Skip("huge pages' frames are read from kpageflags: root")
    if thp_mode() == "never":
        raise Skip("no transparent huge pages here (%s: never, or missing)" % THP_ENABLED)
    prefork_through_fleet(512, 480, 1, 0, "prefork in a huge page")


@test("fleet")
def fleet_placement():
    paths, data = shared_inputs(random.Random(6))
    ex = exports(paths)
    cap = 330
    r = fleet("--workers=2", "--csv", "--report=placement", "--capacity=%d" % cap, *ex)
    if not ok(r, "placement"):
        return
    rs = rows(r)
    eq(sorted(x["host"] for x in rs if x["host"] != "*"), sorted(paths), "placement: every host once")
    bins = collections.defaultdict(list)
    for x in rs:
        if x["host"] != "*":
            bins[x["bin"]].append(x["host"])
    for b, hosts in bins.items():
        pages = sum(len(data[h]) for h in hosts)
        check(pages <= cap or len(hosts) == 1, "bin %s within --capacity" % b, "%d pages" % pages)
        exp = figures(counts([p for h in hosts for p in data[h]]), 256, 0)["saved_bytes"]
        eq([int(x["saved_bytes"]) for x in rs if x["bin"] == b and x["host"] == "*"], [exp],
           "bin %s: one machine row, saved_bytes of its hosts on one KSM" % b)
    # a and b share most: they go together when they fit.
    a, bb = paths[0], paths[1]
    check(any(a in h and bb in h for h in bins.values()), "the two hosts sharing most share a bin")


@test("fleet")
def fleet_sketch_bounds():
    rng = random.Random(7)
    inputs, truth = [], {}
    base = [page("pool", i) for i in range(4000)]
    for name, lo, hi, dup in (("s1", 0, 2500, 2), ("s2", 1500, 4000, 1), ("s3", 2400, 3000, 3)):
        pages = base[lo:hi] * dup + [page(name, i) for i in range(500)]
        rng.shuffle(pages)
        inputs.append(write_input(name + ".raw", pages))
        truth[inputs[-1]] = counts(pages)
    ex = exports(inputs, "sketch", ["--sketch-size=400"])
    r = fleet("--workers=2", "--csv", "--report=pairs", *ex)
    if not ok(r, "sketch pairs"):
        return
    for x in rows(r):
        s, _, _, sv = pair_oracle(truth[x["host_a"]], truth[x["host_b"]], 256, False)
        es, esv = int(x["shared_contents"]), int(x["saved_together_bytes"])
        check(abs(es - s) <= int(x["shared_contents_error"]),
              "sketch %s/%s: shared_contents %d within %s of %d"
              % (x["host_a"], x["host_b"], es, x["shared_contents_error"], s))
        check(abs(esv - sv) <= int(x["saved_together_error"]),
              "sketch %s/%s: saved_together %d within %s of %d"
              % (x["host_a"], x["host_b"], esv, x["saved_together_error"], sv))
        check(int(x["shared_contents_error"]) < max(s, 100),
              "the bound says something (%s vs %d)" % (x["shared_contents_error"], s))
    # A sketch holding the whole input is exact.
    ex = exports(inputs, "sketch", ["--sketch-size=100000"])
    r = fleet("--workers=2", "--csv", "--report=pairs", *ex)
    for x in rows(r):
        s, _, _, sv = pair_oracle(truth[x["host_a"]], truth[x["host_b"]], 256, False)
        eq((int(x["shared_contents"]), int(x["saved_together_bytes"]),
            x["shared_contents_error"]), (s, sv, "0"), "complete sketches are exact")


@test("fleet")
def fleet_cluster_lost():
    """When the cluster itself fails (distributed's KeyError for a task input a
    worker lost under load), ksmfleet computes again in its own process and
    answers as before: run() is made to fail once here."""
    import dask
    from ksmfleet import cli
    from ksmfleet.output import Output
    calls = []

    def flaky(a, out):
        calls.append(dask.config.get("scheduler", None))
        if len(calls) == 1:
            raise KeyError("('concat-5e84789b', 0)")
    real, cli.run = cli.run, flaky
    try:
        cli.run_here_if_lost(None, Output(True))
        eq(calls, [None, "synchronous"], "a lost cluster: computed again, here")
        cli.run = lambda a, out: (_ for _ in ()).throw(ValueError("bad.csv: digest"))
        try:
            cli.run_here_if_lost(None, Output(True))
            check(False, "an export's error is not retried")
        except ValueError as e:
            eq(str(e), "bad.csv: digest", "an export's error goes to the user as it is")
    finally:
        cli.run = real


@test("fleet")
def fleet_errors():
    good = exports([write_input("g.raw", [page("g", 0)] * 2)])[0]
    cases = {
        "header.csv": "foo,bar\r\n",
        "digest.csv": "input,digest,pages,zero\r\nh,0x12,1,0\r\n",
        "pages.csv": "input,digest,pages,zero\r\nh,0x%032x,many,0\r\n" % 5,
        "short.csv": "input,digest,pages,zero\r\nh,0x%032x\r\n" % 5,
        "empty.csv": "",
    }
    for name, text in cases.items():
        path = tmp(name)
        with open(path, "w", newline="") as f:
            f.write(text)
        r = fleet("--workers=1", good, path)
        lines = r.err.strip().splitlines()
        check(r.rc == 1 and len(lines) == 1 and lines[0].startswith("ksmfleet: %s" % path),
              "malformed export %s: one line naming it, exit 1" % name,
              "exit %d, %r" % (r.rc, r.err[-300:]))
    for args in (["--report=nope", good], ["--report=placement", good],
                 ["--workers=0", good], ["-m", "1", good], []):
        r = fleet(*args)
        check(r.rc == 2 and r.err.startswith("ksmfleet: ") and len(r.err.strip().splitlines()) == 1,
              "usage error %r: one line, exit 2" % args, "exit %d, %r" % (r.rc, r.err[-200:]))
    r = fleet("--workers=1", good, good)
    check(r.rc == 1 and "in two exports" in r.err, "a host in two exports: exit 1", r.err[-200:])
    r = fleet("--workers=1", tmp("missing.csv"))
    check(r.rc == 1 and "missing.csv" in r.err, "a missing export: exit 1", r.err[-200:])


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-fleet-"))
