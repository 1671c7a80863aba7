#!/usr/bin/python3
"""make demo's script (scripts/demo) as a stranger meets it: run without a
terminal, it ends, its two processes are gone, and every command it suggests
at the end still works then: each is run here as printed, from the
repository's root, and must exit 0 with output (the CSV one: a header with
the summary's columns and a row for the fixture).
"""
import csv
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import ROOT, SUMMARY_COLS, check, eq, proc_stat_fields, run_suite, test  # noqa: E402


def alive(pid):
    try:
        return proc_stat_fields(pid)[0] != "Z"
    except OSError:
        return False


@test("demo")
def suggestions_work_after_the_demo():
    r = subprocess.run([os.path.join(ROOT, "scripts", "demo")], cwd=ROOT, capture_output=True,
                       text=True, stdin=subprocess.DEVNULL, timeout=600)
    if not eq(r.returncode, 0, "the demo ends with exit 0"):
        print(r.stdout[-2000:], r.stderr[-2000:])
        return
    m = re.search(r"Two python3 processes \(([0-9 ]+)\)", r.stdout)
    check(m and not m.group(1).startswith(" "), "the demo names its processes without a gap",
          r.stdout[:200])
    pids = [int(p) for p in m.group(1).split()] if m else []
    eq(len(pids), 2, "two processes")
    check(not any(alive(p) for p in pids), "the demo's processes are gone when it ends")
    tail = r.stdout.split("More, on", 1)
    if not check(len(tail) == 2, "the demo ends with suggestions", r.stdout[-500:]):
        return
    cmds = [l.strip().split("   (")[0].strip() for l in tail[1].splitlines()[1:]
            if l.startswith("  ")]
    check(len(cmds) >= 3, "three suggestions or more", repr(cmds))
    csv_path = os.path.join(ROOT, "ksm.csv")
    had_csv = os.path.exists(csv_path)
    try:
        for c in cmds:
            argv = shlex.split(c.split(">")[0])
            env = dict(os.environ, MANPAGER="cat", PAGER="cat")
            rr = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env,
                                stdin=subprocess.DEVNULL, timeout=300)
            check(rr.returncode == 0 and rr.stdout.strip(), "the suggestion %r works" % c,
                  "exit %d: %s" % (rr.returncode, rr.stderr[-300:]))
            if ">" in c:
                rows = list(csv.DictReader(rr.stdout.splitlines()))
                check(rows and list(rows[0])[:len(SUMMARY_COLS)] == SUMMARY_COLS and
                      rows[0]["input"] == "tests/fixtures/guest-b.elf.zst",
                      "%r writes the summary's CSV" % c, rr.stdout[:300])
    finally:
        if not had_csv and os.path.exists(csv_path):
            os.unlink(csv_path)


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-demo-"))
