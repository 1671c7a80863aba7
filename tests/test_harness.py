#!/usr/bin/python3
"""The test suites' own harness (tests/ksmtest.py), each against a case built
here:

- ksmtest.fixture(): committed fixtures from tests/fixtures (their sha256 as
  tests/fixtures/README.md lists them), the optional kdump from
  $KSMSCAN_FIXTURES, then ../shared/fixtures, else a Skip saying how to
  provide it; no other file of tests/ names ../shared;
- a missing Python module: one line naming its Debian package (the names are
  Debian's, written here, and scripts/install-deps must install them), no
  traceback, for ksmtest, a whole suite and run_all.py;
- every Python child a suite starts runs on sys.executable (the interpreter
  the Makefile names), never a hard-coded python3.

The guards of the live tests (tests/live.py) are in test_guards.py.
"""
import hashlib
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ksmtest  # noqa: E402
from ksmtest import Skip, check, eq, run_suite, test, tmp  # noqa: E402

ROOT = os.path.dirname(HERE)

# ---------------------------------------------------------------------------
# ksmtest.fixture
# ---------------------------------------------------------------------------
@test("fixtures")
def committed_fixtures_match_readme():
    with open(os.path.join(HERE, "fixtures", "README.md")) as f:
        sums = dict((m.group(2), m.group(1)) for m in
                    re.finditer(r"^\s+([0-9a-f]{64})  (\S+)$", f.read(), re.M))
    for name in ksmtest.COMMITTED_FIXTURES:
        path = ksmtest.fixture(name)
        eq(os.path.dirname(path), os.path.join(ROOT, "tests", "fixtures"),
           "%s is found in tests/fixtures" % name)
        with open(path, "rb") as f:
            eq(hashlib.sha256(f.read()).hexdigest(), sums.get(name),
               "%s: sha256 as tests/fixtures/README.md lists it" % name)
    fake_root = tmp("fake-repo")
    os.makedirs(fake_root)
    try:
        ksmtest.fixture("vectors.img", env={}, root=fake_root)
        check(False, "a committed fixture missing is an error, not a skip")
    except FileNotFoundError:
        check(True, "a committed fixture missing is an error, not a skip")


@test("fixtures")
def optional_fixture_search_order():
    name = "guest-b.kdump-zlib"
    base = tmp("optional")
    repo = os.path.join(base, "ksmscan")        # ../shared beside it: none yet
    os.makedirs(repo)
    own = os.path.join(base, "mine")
    os.makedirs(own)
    try:
        ksmtest.fixture(name, env={}, root=repo)
        check(False, "no ../shared, no $KSMSCAN_FIXTURES: Skip")
    except Skip as e:
        msg = str(e)
        check(name in msg and "KSMSCAN_FIXTURES" in msg and
              os.path.join(base, "shared", "fixtures") in msg,
              "no ../shared, no $KSMSCAN_FIXTURES: Skip naming the file, the folder "
              "looked in and the variable", msg)
    shared = os.path.join(base, "shared", "fixtures")
    os.makedirs(shared)
    with open(os.path.join(shared, name), "w") as f:
        f.write("x")
    eq(ksmtest.fixture(name, env={"KSMSCAN_FIXTURES": own}, root=repo),
       os.path.join(shared, name), "$KSMSCAN_FIXTURES without it: ../shared/fixtures")
    with open(os.path.join(own, name), "w") as f:
        f.write("y")
    eq(ksmtest.fixture(name, env={"KSMSCAN_FIXTURES": own}, root=repo),
       os.path.join(own, name), "$KSMSCAN_FIXTURES holding it comes first")


@test("fixtures")
def one_place_names_shared():
    """Only ksmtest.py knows where the fixtures are."""
    bad = []
    for fn in sorted(os.listdir(HERE)):
        if fn.endswith(".py") and fn not in ("ksmtest.py", "test_harness.py"):
            with open(os.path.join(HERE, fn)) as f:
                for i, line in enumerate(f, 1):
                    if re.search(r"""["']shared["']|shared/fixtures|FIXTURES\s*=""", line):
                        bad.append("%s:%d" % (fn, i))
    eq(bad, [], "no suite names ../shared or sets its own FIXTURES")


# ---------------------------------------------------------------------------
# Missing modules, and the interpreter
# ---------------------------------------------------------------------------
DEBIAN = {"xxhash": "python3-xxhash", "crc32c": "python3-crc32c",
          "zstandard": "python3-zstandard"}


def message_ok(r, pkgs, what):
    lines = r.stdout.splitlines()
    check(lines and lines[0].startswith("tests need %s: run scripts/install-deps"
                                        % ", ".join(pkgs)),
          "%s: the first line names %s and scripts/install-deps" % (what, ", ".join(pkgs)),
          repr(r.stdout[:300]))
    eq(lines[1:], ["0 passed, 1 failed"], "%s: then only the closing line" % what)
    eq(r.returncode, 1, "%s: exit status 1" % what)
    check("Traceback" not in r.stderr + r.stdout, "%s: no traceback" % what, r.stderr[-300:])


@test("modules")
def missing_module_one_line():
    with open(os.path.join(ROOT, "scripts", "install-deps")) as f:
        deps = f.read()
    for mod, pkg in DEBIAN.items():
        check(re.search(r"\b%s\b" % re.escape(pkg), deps),
              "scripts/install-deps installs %s" % pkg)
        code = ("import sys; sys.modules[%r] = None; sys.path.insert(0, %r); import ksmtest"
                % (mod, HERE))
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        message_ok(r, [pkg], "import ksmtest without %s" % mod)
    code = ("import sys; sys.modules['xxhash'] = sys.modules['zstandard'] = None; "
            "sys.path.insert(0, %r); import ksmtest" % HERE)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    message_ok(r, ["python3-xxhash", "python3-zstandard"], "two modules missing")
    # The control: with every module there, importing ksmtest prints nothing.
    r = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); "
                        "import ksmtest" % HERE], capture_output=True, text=True)
    eq((r.returncode, r.stdout, r.stderr), (0, "", ""), "with every module: silent import")


@test("modules")
def missing_module_in_a_suite():
    """A stub on PYTHONPATH that fails to import hides the real module from a
    whole suite and from run_all.py."""
    stub = tmp("stub")
    os.makedirs(stub)
    with open(os.path.join(stub, "zstandard.py"), "w") as f:
        f.write("raise ImportError('hidden by test_harness')\n")
    env = dict(os.environ, PYTHONPATH=stub)
    for script in ("test_forged_inputs.py", "test_format_elf.py", "run_all.py"):
        r = subprocess.run([sys.executable, os.path.join(HERE, script), "no-such-test"],
                           capture_output=True, text=True, env=env, timeout=60)
        message_ok(r, ["python3-zstandard"], "%s without zstandard" % script)


@test("modules")
def children_use_sys_executable():
    """No suite starts a hard-coded python: children run on sys.executable."""
    bad = []
    for fn in sorted(os.listdir(HERE)):
        if fn.endswith(".py"):
            with open(os.path.join(HERE, fn)) as f:
                for i, line in enumerate(f, 1):
                    if i > 1 and re.search(r"""["'](/usr/bin/)?python3?["']""", line):
                        bad.append("%s:%d: %s" % (fn, i, line.strip()))
    eq(bad, [], "no quoted python3 command in tests/*.py")


APP_SUITE = """import os, sys
sys.path.insert(0, %r)
from ksmtest import app, check, run_suite, test

@test("t", app=True)
def uses_an_app():
    app(["ksmscan-no-such-application"], "ksmscan-no-such-package")
    check(True, "not reached")

@test("t")
def plain():
    check(True, "a plain test")

sys.exit(run_suite("ksmscan-appsuite-"))
"""


@test("apps")
def missing_application_skips_or_fails():
    """A test of a real application (ksmtest.app()): in make test, one SKIP
    line naming make test-apps, no failure; in make test-apps
    (KSMSCAN_APPS=1) the application tests alone, and a missing one fails."""
    suite = tmp("appsuite.py")
    with open(suite, "w") as f:
        f.write(APP_SUITE % os.path.dirname(os.path.abspath(__file__)))
    env = {k: v for k, v in os.environ.items() if k != "KSMSCAN_APPS"}
    r = subprocess.run([sys.executable, suite], capture_output=True, text=True, env=env)
    lines = r.stdout.splitlines()
    skips = [l for l in lines if l.startswith("SKIP")]
    check(len(skips) == 1 and "`make test-apps`" in skips[0] and
          "ksmscan-no-such-package" in skips[0],
          "make test: one SKIP line naming make test-apps and the package", r.stdout)
    eq((r.returncode, lines[-1:]), (0, ["1 passed, 0 failed, 1 skipped"]),
       "make test: no failure, the plain test runs")
    r = subprocess.run([sys.executable, suite], capture_output=True, text=True,
                       env=dict(env, KSMSCAN_APPS="1"))
    lines = r.stdout.splitlines()
    check(any(l.startswith("FAIL") and "ksmscan-no-such-package" in l for l in lines),
          "make test-apps: the missing application is a failure", r.stdout)
    eq((r.returncode, lines[-1:]), (1, ["0 passed, 1 failed"]),
       "make test-apps: only the application test runs, and fails")


def main():
    return run_suite("ksmscan-harness-")


if __name__ == "__main__":
    sys.exit(main())
