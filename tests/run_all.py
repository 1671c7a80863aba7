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
"""
import glob, os, re, subprocess, sys

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
passed = failed = skipped = 0
broken = []
for s in suites:
    name = os.path.basename(s)
    print("== %s" % name, flush=True)
    cmd = [sys.executable, s] if s.endswith(".py") else [s]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, env=env,
                       stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(r.stdout)
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
