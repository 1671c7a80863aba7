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
saves at least 256 pages more. No test needs KSM, and none writes to
/sys/kernel/mm/ksm: the scripts run with KSM_SYSFS a temporary folder.
"""
import os
import re
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import check, eq, parse_csv, run, run_suite, test  # noqa: E402
from test_advice_sound import end, holder, piped  # noqa: E402

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


if __name__ == "__main__":
    sys.exit(run_suite("test_advice_scanned"))
