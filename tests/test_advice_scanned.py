#!/usr/bin/python3
"""Only what KSM will scan (docs/policies.md, "What the advice is of").

-r advise of live processes replays only the memory ksmd would scan: the
areas marked mergeable (madvise MADV_MERGEABLE, PR_SET_MEMORY_MERGE); a
process none of whose memory is marked is left out, reported beside the
advice (CSV's mergeable_pages, not_mergeable_pages,
not_mergeable_saved_pages; the sentence "Not scanned by KSM now"), and
--enable=NAME counts a unit's processes as marked, its lines in -o sh.

The processes are this suite's own children, each holding 256 pages of 64
contents (4 pages each, the same 64 in every child), one child with them
marked mergeable and one without. By construction: the marked memory is 256
pages, of which a replay to its end saves 256 - 64 = 192; the unmarked
child's 256 pages all hold contents the marked child has, so marking it
saves at least 256 pages more. The same on fake processes in a tree of
files, exactly, where beta's unit has a name systemctl or sh would misread
and --enable's `systemctl set-property` runs (a systemctl of the test's
own records it) before the settings are written. No test needs KSM, and
none writes to /sys/kernel/mm/ksm: the scripts run with KSM_SYSFS a
temporary folder.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ksmtest  # noqa: E402
from ksmtest import (check, eq, parse_csv, run, run_suite, skip, test,  # noqa: E402
                     tmp)
from test_advice_sound import end, holder, piped  # noqa: E402
from test_host import fake_ksm, fake_process  # noqa: E402

ADVICE = ["--count=2", "--interval=1s", "-r", "advise", "--target=90%@1m"]
COLS = ["mergeable_pages", "not_mergeable_pages", "not_mergeable_saved_pages"]


def figures(args, what):
    """The three columns of the advice's CSV (equal on every row), or None."""
    r = run(args + ["-o", "csv"])
    rows = parse_csv(r, what, ["input", "policy"])
    if not check(rows and all(c in rows[0] for c in COLS),
                 "%s: CSV has %s" % (what, ", ".join(COLS)), r.brief()):
        return None
    vals = {tuple(int(x[c]) for c in COLS) for x in rows}
    check(len(vals) == 1, "%s: the same figures on every row" % what, repr(vals))
    return dict(zip(COLS, vals.pop()))


@test("scanned")
def only_marked_memory():
    """A marked child and an unmarked one: the advice is of the 256 marked
    pages alone (its reference, 192 pages saved), the other child's pages
    beside it, with what marking them would save more (>= 256)."""
    a, b = holder("mergeable"), holder("plain")
    try:
        args = ["-p", str(a.pid), "-p", str(b.pid)] + ADVICE
        f = figures(args, "marked and unmarked")
        if f:
            eq(f["mergeable_pages"], 256, "the advice replays the 256 marked pages")
            check(f["not_mergeable_pages"] >= 256, "the unmarked child's pages "
                  "are not scanned (>= its 256)", repr(f))
            check(f["not_mergeable_saved_pages"] >= 256, "marking them saves "
                  ">= 256 pages more (all duplicates of marked ones)", repr(f))
        t = run(args)
        text = " ".join(t.out.split())
        check("ends at (192 pages)" in text, "the target is a share of the "
              "marked memory's saving, 192 pages", text[-1500:])
        m = re.search(r"Not scanned by KSM now: (\d+) pages.*?With (\S+) they "
                      r"would save (\d+) pages more", text)
        check(m and f and int(m.group(1)) == f["not_mergeable_pages"]
              and int(m.group(3)) == f["not_mergeable_saved_pages"]
              and m.group(2).startswith("--enable=cgroup:"),
              "the table says what is not scanned and the --enable for it",
              text[-900:])
    finally:
        end(a)
        end(b)


@test("scanned")
def nothing_marked_writes_nothing():
    """Only an unmarked child: no advice rows, the reason and how to mark it,
    and `-o sh | sh` fails writing nothing; the pages are still reported."""
    b = holder("plain")
    try:
        args = ["-p", str(b.pid)] + ADVICE
        rc, err, files = piped(args, "nothing marked")
        check(rc != 0 and files == {} and "none of the memory is marked "
              "mergeable" in err and "--enable" in err,
              "`-o sh | sh` fails, writes nothing, says why and how", "%r %r %r"
              % (rc, err[-400:], files))
        t = run(args)
        text = " ".join(t.out.split())
        m = re.search(r"Not scanned by KSM now: (\d+) pages", text)
        check(t.rc == 1 and m and int(m.group(1)) >= 256 and "MemoryKSM=yes"
              in text, "the table exits 1, says the child's pages are not "
              "scanned and how to mark them", t.brief() + text[-600:])
        tf = run(args + ["-o", "tmpfiles"])
        check(tf.rc == 1 and not any(x.startswith("w ") for x in tf.out.splitlines()),
              "-o tmpfiles has no `w` line, exit 1", tf.brief())
    finally:
        end(b)


@test("scanned")
def enable_counts_them():
    """The --enable the table suggests (the unmarked child's cgroup, which
    is the marked one's too): both children in the advice, nothing left out, and the
    script writes the first row's setting."""
    a, b = holder("mergeable"), holder("plain")
    try:
        base = ["-p", str(a.pid), "-p", str(b.pid)] + ADVICE
        f0 = figures(base, "without --enable")
        # the --enable the table suggests, as a shell word
        m = re.search(r"With (\S+) they would save", " ".join(run(base).out.split()))
        if not check(m, "the table suggests an --enable", ""):
            return
        args = base + shlex.split(m.group(1))
        f = figures(args, "with --enable")
        if f and f0:
            eq((f["mergeable_pages"], f["not_mergeable_pages"],
                f["not_mergeable_saved_pages"]),
               (f0["mergeable_pages"] + f0["not_mergeable_pages"], 0, 0),
               "--enable adds the left-out pages to the advice")
        rc, err, files = piped(args, "with --enable")
        eq((rc, sorted(files)), (0, ["pages_to_scan", "run", "sleep_millisecs"])
           if "pages_to_scan" in files else (0, ["advisor_max_cpu", "advisor_mode",
                                                 "advisor_target_scan_time", "run"]),
           "`-o sh | sh` applies the advice: " + err[-300:])
        sh = run(args + ["-o", "sh"])
        check("# --enable: the advice counts the processes of cgroup:" in sh.out,
              "the script says what --enable counts", sh.out[-800:])
    finally:
        end(a)
        end(b)


MERGE_ANY = r"""
import ctypes, mmap, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(67, 1, 0, 0, 0):      # PR_SET_MEMORY_MERGE (Linux 6.4)
    print("no %d" % ctypes.get_errno(), flush=True)
    sys.exit(0)
m = mmap.mmap(-1, 256 * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(256):
    m[i * 4096:(i + 1) * 4096] = bytes([i % 64 + 1]) * 4096
print("ready", flush=True)
sys.stdin.read()
"""


@test("scanned")
def merge_any_is_marked():
    """A child under prctl(PR_SET_MEMORY_MERGE) (ksm_stat: ksm_merge_any
    yes) marks every area: all of it is in the advice, nothing beside it,
    and the advice is written."""
    p = subprocess.Popen([sys.executable, "-c", MERGE_ANY], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        if p.stdout.readline().strip() != "ready":
            skip("PR_SET_MEMORY_MERGE is not in this kernel")
            return
        with open("/proc/%d/ksm_stat" % p.pid) as f:
            check("ksm_merge_any: yes" in f.read(), "the child is under "
                  "PR_SET_MEMORY_MERGE", "")
        args = ["-p", str(p.pid)] + ADVICE
        f = figures(args, "merge_any")
        if f:
            check(f["mergeable_pages"] >= 256 and f["not_mergeable_pages"] == 0
                  and f["not_mergeable_saved_pages"] == 0,
                  "every page of the child is in the advice (>= its 256)", repr(f))
        rc, err, files = piped(args, "merge_any")
        check(rc == 0 and "run" in files, "`-o sh | sh` applies it", "%r %r %r"
              % (rc, err[-300:], files))
    finally:
        p.stdin.close()
        p.wait(timeout=30)


# Fake processes in a tree of files ($KSMSCAN_HOST_ROOT, tests/test_host.py):
# alpha marks its 256 pages (64 contents, 4 pages each), beta holds the same
# 256 unmarked, in a unit whose name is made to be misread by systemctl or sh.
WEIRD = "-Hx b'$.service"
FAKE_PAGES = [i % 64 + 1 for i in range(256)]


def fake_tree():
    root = tmp("advice-scanned-host")
    if not os.path.isdir(root):
        fake_process(root, 4242, "alpha", 1000, [(0x100000, FAKE_PAGES, True)],
                     "/system.slice/alpha.service")
        fake_process(root, 4343, "beta", 2000, [(0x200000, FAKE_PAGES, False)],
                     "/system.slice/" + WEIRD)
        fake_ksm(root, 1)
    return root


def fake_run(root, args):
    return run(args, env=dict(os.environ, KSMSCAN_HOST_ROOT=root))


@test("scanned")
def exact_on_a_tree():
    """The fake tree, every figure by construction: the advice of alpha's
    256 marked pages (192 saved at the end), beta's 256 beside it, which
    would save 256 more (each a duplicate of a marked content); with
    --enable of beta's unit, 512 pages (448 saved) and none beside."""
    root = fake_tree()
    base = ["-p", "4242", "-p", "4343"] + ADVICE
    for extra, want, saved in (([], (256, 256, 256), 192),
                               (["--enable=unit:" + WEIRD], (512, 0, 0), 448)):
        r = fake_run(root, base + extra + ["-o", "csv"])
        rows = parse_csv(r, "tree %r" % extra, ["input"])
        got = {tuple(int(x.get(c, -1)) for c in COLS) for x in rows or []}
        eq(got, {want}, "tree %r: mergeable, not mergeable, saved more" % extra)
        t = " ".join(fake_run(root, base + extra).out.split())
        check("ends at (%d pages)" % saved in t, "tree %r: the target is a "
              "share of %d pages" % (extra, saved), t[:600])
    t = " ".join(fake_run(root, base).out.split())
    m = re.search(r"Not scanned by KSM now: 256 pages.*?With (.+?) they would "
                  r"save 256 pages more", t)
    check(m and shlex.split(m.group(1)) == ["--enable=unit:" + WEIRD],
          "the table's --enable is beta's unit, one shell word", t[-700:])


@test("scanned")
def enable_marks_first():
    """--enable of beta's unit, `-o sh | sh` with a systemctl of the test's
    own on PATH: it gets `set-property -- NAME MemoryKSM=yes`, the name one
    word whatever it holds, before the settings are written; tmpfiles gives
    the command as a comment only."""
    root = fake_tree()
    bin_ = tempfile.mkdtemp(prefix="ksmscan-bin-")
    log = os.path.join(bin_, "log")
    with open(os.path.join(bin_, "systemctl"), "w") as f:
        f.write("#!/usr/bin/python3\nimport json, os, sys\n"
                "open(%r, 'a').write(json.dumps([sys.argv[1:], "
                "sorted(os.listdir(os.environ['KSM_SYSFS']))]) + '\\n')\n" % log)
    os.chmod(os.path.join(bin_, "systemctl"), 0o755)
    args = ["-p", "4242", "-p", "4343"] + ADVICE + ["--enable=unit:" + WEIRD]
    old = dict(os.environ)
    os.environ.update(KSMSCAN_HOST_ROOT=root, PATH=bin_ + ":" + old["PATH"])
    try:
        rc, err, files = piped(args, "enable")
    finally:
        os.environ.clear()
        os.environ.update(old)
    calls = open(log).read().splitlines() if os.path.exists(log) else []
    shutil.rmtree(bin_)
    eq(calls, ['[["set-property", "--", %s, "MemoryKSM=yes"], []]'
               % json.dumps(WEIRD)], "systemctl marks the unit, before any write")
    check(rc == 0 and "run" in files, "`-o sh | sh` then writes the advice",
          "%r %r %r" % (rc, err[-300:], files))
    tf = fake_run(root, args + ["-o", "tmpfiles"])
    cmd = [x for x in tf.out.splitlines() if "set-property" in x]
    check(tf.rc == 0 and cmd and all(x.startswith("#") for x in cmd)
          and any(x.startswith("w ") for x in tf.out.splitlines()),
          "tmpfiles: the command as a comment, the settings as w lines", tf.out)


if __name__ == "__main__":
    # this suite's own tests, not those of the suites it borrows helpers from
    ksmtest.TESTS[:] = [t for t in ksmtest.TESTS if t[2].__module__ == "__main__"]
    sys.exit(run_suite("test_advice_scanned"))
