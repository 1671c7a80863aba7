#!/usr/bin/python3
"""Run every test suite of tests/ and print one closing line for all of them.

Each suite (tests/test_*.py, and the C unit tests named in
$KSMSCAN_UNITS, built by make from tests/unit_*.c) is a program that prints
`N passed, N failed` (or `N passed, N failed, N skipped`) as its last line.
This runner runs them in turn against
$KSMSCAN (default ./ksmscan) with the interpreter it runs on, shows their
output, and ends with the sums. The suites import the source's ksmfleet as
any package is imported: fleet/ is first on their PYTHONPATH (run one alone
with PYTHONPATH=fleet).
Arguments are suite names to run only those (e.g. `run_all.py test_format_`
for every input format's suite).

Suites run side by side, $KSMSCAN_TEST_JOBS at a time (default: the CPUs
this process may use, at most 4; 1 runs them in turn), their output shown
whole and in order. The suites that may change the kernel (those that use
tests/live.py or look at KSMSCAN_LIVE_TESTS) run after the others, one at a
time: a live suite needs KSM idle, and another suite's mergeable child
would make it skip.
"""
import concurrent.futures, glob, os, re, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
# A missing Python module ends the run here with one line naming its package.
sys.path.insert(0, here)
import ksmtest  # noqa: E402
suites = sorted(glob.glob(os.path.join(here, "test_*.py"))) + os.environ.get(
    "KSMSCAN_UNITS", "").split()
if len(sys.argv) > 1:
    suites = [s for s in suites if any(a in os.path.basename(s) for a in sys.argv[1:])]

fleet = os.path.join(os.path.dirname(here), "fleet")
env = dict(os.environ, PYTHONPATH=os.pathsep.join(
    [fleet] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
LIVE_MARKS = ("import live", "live_session", "KSMSCAN_LIVE_TESTS", "with_ksm_running")


def is_live(suite):
    if not suite.endswith(".py"):
        return False
    with open(suite) as f:
        text = f.read()
    return any(m in text for m in LIVE_MARKS)


def run(suite):
    cmd = [sys.executable, suite] if suite.endswith(".py") else [suite]
    return subprocess.run(cmd, stdout=subprocess.PIPE, env=env,
                          stderr=subprocess.STDOUT, text=True)


def jobs():
    try:
        n = int(os.environ.get("KSMSCAN_TEST_JOBS", "0"))
    except ValueError:
        n = 0
    return n if n > 0 else max(1, min(4, len(os.sched_getaffinity(0))))


def results():
    """(suite, its run) in order: the others side by side, then the live
    ones in turn."""
    others = [s for s in suites if not is_live(s)]
    with concurrent.futures.ThreadPoolExecutor(jobs()) as pool:
        for s, r in zip(others, pool.map(run, others)):
            yield s, r
    for s in suites:
        if is_live(s):
            print("== %s" % os.path.basename(s), flush=True)
            yield s, run(s)


passed = failed = skipped = 0
broken = []
for s, r in results():
    name = os.path.basename(s)
    if not is_live(s):
        print("== %s" % name, flush=True)
    sys.stdout.write(r.stdout)
    sys.stdout.flush()
    lines = r.stdout.strip().splitlines()
    m = re.fullmatch(r"(\d+) passed, (\d+) failed(?:, (\d+) skipped)?",
                     lines[-1].strip()) if lines else None
    if not m:
        broken.append(name)
        failed += 1
        print("%s: no closing 'N passed, N failed' line (exit %d)" % (name, r.returncode))
        continue
    passed += int(m.group(1))
    failed += int(m.group(2))
    skipped += int(m.group(3) or 0)
    if r.returncode and not int(m.group(2)):
        failed += 1
        broken.append(name)
        print("%s: exit status %d" % (name, r.returncode))

print(ksmtest.closing_line(passed, failed, skipped))
sys.exit(1 if failed else 0)
