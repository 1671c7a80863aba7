#!/usr/bin/python3
"""Live processes (-p PID) and their gcore.

    /usr/bin/python3 tests/test_format_process.py [NAME-SUBSTRING...]

`-p PID --range` of a child's private anonymous mapping (untouched pages
absent), the summary's figures, shared anonymous and file mappings only with
--all-mappings, a page changed while the scan runs; then `gcore` of the
child (gdb with ptrace permission, else SKIP): the same pages by p_vaddr;
`-p` of a pid that does not exist.

Oracle: the bytes the child wrote.
"""
import os, random, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import STATE, Skip, check, eq, tmp  # noqa: E402
from dump_helpers import (PAGE, ZERO, as_int, check_figures, check_pages_report,
                          expect_broken, figures, main, run, sane, summary, test, write)  # noqa: E402


# ---------------------------------------------------------------------------
# 3. gcore and live processes
# ---------------------------------------------------------------------------
CHILD = r"""
import ctypes, mmap, sys
P = 4096
spec = open(sys.argv[1], 'rb').read()
npriv, nshared, nfile = 64, 16, 8
priv = mmap.mmap(-1, npriv * P, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
try:
    priv.madvise(mmap.MADV_NOHUGEPAGE)
except (AttributeError, OSError):
    pass
untouched = set(range(20, 24))
for i in range(npriv):
    if i not in untouched:
        priv[i * P:(i + 1) * P] = spec[i * P:(i + 1) * P]
shared = mmap.mmap(-1, nshared * P, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
shared[:] = spec[npriv * P:(npriv + nshared) * P]
ff = open(sys.argv[2], 'rb')
fmap = mmap.mmap(ff.fileno(), nfile * P, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)
touch = sum(fmap[i * P] for i in range(nfile))
addr = lambda m: ctypes.addressof(ctypes.c_char.from_buffer(m))
print(addr(priv), addr(shared), flush=True)
# the read-only file mapping's address comes from /proc/self/maps
for line in open('/proc/self/maps'):
    if line.rstrip().endswith(sys.argv[2]):
        print(int(line.split('-')[0], 16), flush=True)
        break
for line in sys.stdin:
    if line.strip() == 'change':
        priv[24 * P:25 * P] = spec[(npriv + nshared) * P:(npriv + nshared + 1) * P]
        print('changed', flush=True)
"""


def child_spec():
    rnd = random.Random(11)
    A, B = rnd.randbytes(PAGE), bytes([7]) * PAGE
    priv = ([A] * 10 + [B] * 5 + [ZERO] * 5 + [ZERO] * 4 +
            [rnd.randbytes(PAGE) for _ in range(40)])
    shared = [rnd.randbytes(PAGE) for _ in range(8)] + [A] * 8
    new24 = rnd.randbytes(PAGE)
    filedata = [rnd.randbytes(PAGE) for _ in range(7)] + [ZERO]
    return priv, shared, new24, filedata


class Child:
    def __init__(self):
        self.priv, self.shared, self.new24, self.filedata = child_spec()
        spec = write("child.spec", b"".join(self.priv + self.shared + [self.new24]))
        self.file = write("child.file", b"".join(self.filedata))
        script = write("child.py", CHILD.encode())
        self.p = subprocess.Popen([sys.executable, script, spec, self.file],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        line = self.p.stdout.readline().split()
        fline = self.p.stdout.readline().split()
        if len(line) != 2 or len(fline) != 1:
            self.stop()
            raise RuntimeError("child did not start: %r %r" % (line, self.p.stderr.read()))
        self.pa, self.sa = int(line[0]), int(line[1])
        self.fa = int(fline[0])
        self.pid = self.p.pid

    def change(self):
        self.p.stdin.write("change\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip() == "changed"

    def stop(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def rng(a, n):
    return "--range=0x%x-0x%x" % (a, a + n * PAGE)


@test
def live_process_and_gcore():
    c = Child()
    try:
        try:
            with open("/proc/%d/mem" % c.pid, "rb") as f:
                f.seek(c.pa)
                ok = f.read(PAGE) == c.priv[0]
        except OSError as e:
            raise Skip("cannot read /proc/%d/mem (ptrace not permitted?): %s" % (c.pid, e))
        if not ok:
            raise RuntimeError("child memory does not hold the expected bytes")
        name = "pid:%d" % c.pid
        P = str(c.pid)
        # private anonymous pages: 60 present (4 never touched are not present)
        present = [(c.pa + i * PAGE, d) for i, d in enumerate(c.priv) if not 20 <= i < 24]
        r = run(["-p", P, rng(c.pa, 64), "-r", "pages", "-a", "xxh64", "--csv"])
        if sane(r, "-p pages"):
            check(r.rc == 0, "-p pages: exit status 0", r.brief())
        check_pages_report(r, name, present, "-p PID --range of a private anonymous mapping "
                           "(untouched pages are not present)")
        rows = summary(["-p", P, rng(c.pa, 64)], "-p summary")
        if eq(len(rows), 1, "-p summary: one row"):
            eq(rows[0].get("format"), "pid", "-p summary: format")
            eq(rows[0].get("input"), name, "-p summary: input")
            check_figures(rows[0], figures([d for _, d in present]), "-p summary")
        # a shared anonymous mapping and a file mapping: only with --all-mappings
        for label, a, datas in (("shared anonymous", c.sa, c.shared),
                                ("file-backed", c.fa, c.filedata)):
            rows = summary(["-p", P, rng(a, len(datas))], "-p " + label)
            check(sum(as_int(x.get("pages")) or 0 for x in rows) == 0,
                  "-p without --all-mappings: %s mapping not read" % label,
                  repr([x.get("pages") for x in rows]))
            r = run(["-p", P, "--all-mappings", rng(a, len(datas)), "-r", "pages",
                     "-a", "xxh64", "--csv"])
            sane(r, "--all-mappings " + label)
            check_pages_report(r, name, [(a + i * PAGE, d) for i, d in enumerate(datas)],
                               "-p --all-mappings %s mapping" % label)
        # pages are hashed as they are now
        if check(c.change(), "child changed a page"):
            r = run(["-p", P, rng(c.pa + 24 * PAGE, 1), "-r", "pages", "-a", "xxh64",
                     "--csv"])
            sane(r, "-p after a change")
            check_pages_report(r, name, [(c.pa + 24 * PAGE, c.new24)],
                               "-p sees the page as it is now")
            c.priv[24] = c.new24
        # gcore (after the -p checks: gdb reads untouched pages too)
        core = tmp("core.%d" % c.pid)
        g = subprocess.run(["gdb", "-q", "-batch", "-p", P, "-ex", "gcore " + core],
                           capture_output=True, text=True, timeout=120)
        if not os.path.exists(core):
            STATE["skipped"] += 1
            print("SKIP [%s] gcore: gdb could not write a core (ptrace not permitted?): %s"
                  % (STATE["current"], (g.stdout + g.stderr).strip()[-200:]))
            return
        exp = [(c.pa + i * PAGE, d) for i, d in enumerate(c.priv)]
        r = run([rng(c.pa, 64), "-r", "pages", "-a", "xxh64", "--csv", core])
        if sane(r, "gcore pages"):
            check(r.rc == 0, "gcore pages: exit status 0", r.brief())
        check_pages_report(r, core, exp, "gcore core --range of the private mapping "
                           "(p_vaddr addresses)")
        rows = summary([rng(c.pa, 64), core], "gcore summary")
        if rows:
            eq(rows[0].get("format"), "elf", "gcore summary: format")
            check_figures(rows[0], figures(c.priv), "gcore summary")
        r = run([rng(c.sa, 16), "-r", "pages", "-a", "xxh64", "--csv", core])
        sane(r, "gcore shared")
        check_pages_report(r, core, [(c.sa + i * PAGE, d) for i, d in enumerate(c.shared)],
                           "gcore core --range of the shared mapping")
        os.unlink(core)
    finally:
        c.stop()


@test
def nonexistent_pid():
    p = subprocess.Popen(["/usr/bin/true"])
    p.wait()
    pid = p.pid
    if os.path.exists("/proc/%d" % pid):
        raise Skip("pid %d was reused" % pid)
    r = run(["--csv", "-p", str(pid)])
    expect_broken(r, "pid:%d" % pid, "-p of a process that does not exist", offset=False)


if __name__ == "__main__":
    sys.exit(main())
