#!/usr/bin/python3
"""The engine at the limits of the machine it runs on, and text a hostile
dump or file name brings to a terminal: each case a defect found by trying
ksmscan as a hostile user would, kept as a regression. The oracle is always
this file's own count of the pages it wrote, never ksmscan's output.

- a file size limit (ulimit -f) far below the spool's needs: one error line,
  exit status 1, the figures of a prefix of the input (not death by SIGXFSZ);
- a full $TMPDIR (a 1 MiB tmpfs): the figures of a prefix, identical for every
  -j, exit 1, an error naming the input and an offset;
- an endless stream: the spool stops before its file system has less than
  5% (or 1 GiB) free;
- -r tree keeps a small resident set (it used to keep every page);
- control characters, C1 controls and bidi overrides in file names: shown as
  '?' in tables, CSV and error messages, which stay one line each;
- a warning while the progress line is drawn starts on a line of its own.
"""
import csv, io, os, resource, signal, subprocess, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import KSMSCAN, PAGE, Skip, check, eq, run_suite, test, tmp, tmpfs  # noqa: E402

TIMEOUT = 300
UNSAFE = [b"\x1b", b"\x07", b"\x9b", "\u202e".encode(), "\u2066".encode(), b"\xc2\x9b"]


def ksm(args, timeout=TIMEOUT, **kw):
    return subprocess.run(KSMSCAN + args, capture_output=True, timeout=timeout, **kw)


def csv_row(out):
    rows = list(csv.DictReader(io.StringIO(out.decode())))
    return rows[0] if len(rows) == 1 else None


def stream_pages(n, seed):
    """n pages: distinct random ones, each fourth a repeat of an earlier page,
    each tenth zero; the oracle's own figures come from the same list."""
    rnd = __import__("random").Random(seed)
    pages = []
    for i in range(n):
        if i % 10 == 9:
            pages.append(bytes(PAGE))
        elif i % 4 == 3 and pages:
            pages.append(pages[rnd.randrange(len(pages))])
        else:
            pages.append(rnd.randbytes(PAGE))
    return pages


def oracle(pages):
    """pages, zero_pages and distinct_pages of a list of pages."""
    return {"pages": len(pages), "zero_pages": sum(p == bytes(PAGE) for p in pages),
            "distinct_pages": len(set(pages))}


def figures(row):
    return {k: int(row[k]) for k in ("pages", "zero_pages", "distinct_pages")}


def is_root():
    return os.geteuid() == 0


def one_error(err, what):
    """stderr is one line naming standard input and an offset."""
    lines = err.decode(errors="replace").splitlines()
    check(len(lines) == 1, "%s: one line on stderr" % what, repr(lines[:4]))
    check(bool(lines) and lines[0].startswith("ksmscan: -: ") and "offset" in lines[0],
          "%s: the error names the input and an offset" % what, repr(lines[:1]))


def prefix_runs(pages, jobs, what, **kw):
    """Scan @pages from standard input with each -j of @jobs where the spool
    cannot take them all: each run ends with exit status 1 and one error
    naming the input, its figures are those of a prefix of @pages (the
    oracle's), and they are the same for every -j."""
    data = b"".join(pages)
    outs = []
    for j in jobs:
        r = ksm(["--csv", "-j", j, "-"], input=data, **kw)
        eq(r.returncode, 1, "-j %s, %s: exit status" % (j, what))
        one_error(r.stderr, "-j %s, %s" % (j, what))
        row = csv_row(r.stdout)
        if not check(row is not None, "-j %s, %s: the figures are printed" % (j, what),
                     r.stdout[:200]):
            return None
        got = figures(row)
        eq(got, oracle(pages[:got["pages"]]),
           "-j %s, %s: the figures are those of the first %d pages" % (j, what, got["pages"]))
        outs.append(got)
    check(all(o == outs[0] for o in outs), "%s: the same figures for every -j" % what,
          repr(outs))
    return outs[0]["pages"]


@test("spool")
def file_size_limit():
    limit = 1000 * 1024                 # ulimit -f 1000
    pages = stream_pages(10240, 1)      # 40 MiB

    def setlimit():
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    n = prefix_runs(pages, ("1", "2", "4"), "file size limit (not SIGXFSZ)",
                    preexec_fn=setlimit)
    # The spool held what fits under the limit, and the batch (256 pages)
    # whose write failed was counted.
    check(n is not None and limit // PAGE // 2 <= n < len(pages),
          "a prefix of at least the pages under the limit", str(n))


@test("spool")
def full_tmpdir():
    if not is_root():
        raise Skip("needs root to mount a 1 MiB tmpfs")
    pages = stream_pages(2048, 2)       # 8 MiB, about 5 MiB of it distinct
    with tmpfs("1m") as d:
        n = prefix_runs(pages, ("1", "2", "3"), "full $TMPDIR",
                        env=dict(os.environ, TMPDIR=d))
        check(n is not None and 0 < n < len(pages), "a prefix was counted", str(n))


@test("spool")
def endless_stream_keeps_disk_free():
    if not is_root():
        raise Skip("needs root to mount a tmpfs")
    with tmpfs("320m") as d:
        st = os.statvfs(d)
        size = st.f_blocks * st.f_frsize
        keep = min(size * 5 // 100, 1 << 30)
        least = [size]
        # A character device is read only as standard input (a named one is
        # refused: test_hostile_input.py).
        urandom = open("/dev/urandom", "rb")
        p = subprocess.Popen(KSMSCAN + ["--csv", "-"], stdin=urandom, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=dict(os.environ, TMPDIR=d))
        urandom.close()
        out = []
        reader = threading.Thread(target=lambda: out.append(p.communicate(timeout=TIMEOUT)))
        reader.start()
        while reader.is_alive():
            st = os.statvfs(d)
            least[0] = min(least[0], st.f_bavail * st.f_frsize)
            time.sleep(0.005)
        reader.join()
        stdout, stderr = out[0]
        eq(p.returncode, 1, "an endless stream ends with exit status 1")
        err = stderr.decode().splitlines()
        check(len(err) == 1 and "free" in err[0], "one error saying why the spool stopped",
              repr(err[:3]))
        check(least[0] >= keep, "the tmpfs never had less than 5%% free",
              "least free %d of %d" % (least[0], size))
        row = csv_row(stdout)
        check(row is not None and int(row["pages"]) >= 16384,
              "the figures of what was spooled are printed", stdout[:200])


@test("memory")
def tree_resident_set():
    if any(x in KSMSCAN[0] for x in ("build-check", "build-tsan")):
        raise Skip("peak RSS is measured on the release build (sanitizers add shadow memory)")
    n = 65536                           # 256 MiB of distinct pages
    path = tmp("tree.img")
    with open(path, "wb") as f:
        for _ in range(n // 256):
            f.write(os.urandom(256 * PAGE))
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + KSMSCAN + ["-r", "tree", path],
                       capture_output=True, text=True, timeout=TIMEOUT)
    eq(r.returncode, 0, "-r tree on 256 MiB: exit status")
    rss = int(r.stderr.strip().splitlines()[-1]) * 1024
    # The summary's budget (32 bytes a page + 64 MiB) and the two trees'
    # nodes (64 bytes each): 78 MiB, where keeping the pages took 256 MiB more.
    budget = n * 32 + (64 << 20) + 2 * n * 64
    check(rss <= budget, "-r tree peak RSS within budget",
          "%.1f MiB > %.1f MiB" % (rss / 2**20, budget / 2**20))
    os.unlink(path)


def hostile_name(suffix):
    return tmp(b"x\x1b[31m\x07\x9b\xe2\x80\xae\xe2\x81\xa6\xc2\x9bgnp.".decode(
        "utf-8", "surrogateescape") + suffix)


@test("text")
def hostile_names_in_output():
    path = hostile_name("img")
    with open(path, "wb") as f:
        f.write(os.urandom(2 * PAGE))
    for args, what in ((["-r", "summary,regions"], "table"), (["--csv"], "CSV")):
        r = ksm(args + [path])
        eq(r.returncode, 0, "%s of a hostile file name: exit status" % what)
        for u in UNSAFE:
            check(u not in r.stdout, "%s shows no %r from a file name" % (what, u))
        check(b"?gnp." in r.stdout or b"gnp." in r.stdout, "%s still shows the name" % what)
    r = ksm(["--csv", path])
    rows = list(csv.reader(io.StringIO(r.stdout.decode(errors="replace"))))
    eq(len(rows), 2, "CSV of a hostile file name: a header and one row")


@test("text")
def hostile_names_in_errors():
    bad = hostile_name("missing\nksmscan: forged line")
    r = ksm([bad])
    eq(r.returncode, 1, "a missing file with a hostile name: exit status")
    lines = r.stderr.split(b"\n")
    eq(len([x for x in lines if x]), 1, "the error stays one line")
    for u in UNSAFE:
        check(u not in r.stderr, "the error shows no %r from the name" % u)


@test("text")
def warning_after_progress_line():
    # Standard input arrives slowly, so that the progress line is drawn
    # before the next input's error.
    p = subprocess.Popen(KSMSCAN + ["--progress", "-", tmp("no-such-file")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    for _ in range(3):
        p.stdin.write(os.urandom(256 * PAGE))
        p.stdin.flush()
        time.sleep(0.4)
    _, err = p.communicate(timeout=TIMEOUT)
    err = err.decode()
    at = err.find("ksmscan: " + tmp("no-such-file"))
    if not check(at >= 0, "the missing input's error is printed", err[-300:]):
        return
    check("\r" in err[:at], "the progress line was drawn first", repr(err[:80]))
    check(err[:at].endswith("\r\033[K"),
          "the error starts a line of its own after the progress line",
          repr(err[max(0, at - 40):at + 20]))


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-limits-"))
