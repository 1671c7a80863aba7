#!/usr/bin/python3
"""The architecture as the README's table draws it, checked from the code's
own #include lines (no compiler involved, so this cannot agree with itself):

- every folder includes only from itself and the folders below it, in the
  order util, host, hash, dump, compress, model, then scan and check (which
  do not include each other), report, cli (the command line, which may use
  every table below it), then ksmscan.c on top;
- only host/ reads the live kernel: no other file opens a /proc or /sys path
  itself (it asks host/, whose root the tests can move);
- no two headers or sources include each other in a cycle;
- every quoted include names a file that exists;
- report/ is in rooms: the writers (write/), report.h with the registry,
  and the reports grouped by what they need (figures/, contents/, series/,
  host/), none of which includes another's;
- no comment or document in the repository cites a file it does not hold
  (nor a docs/ page that does not exist)
  (the project's contract lives outside it; docs/ says everything itself;
  the optional large fixture may be looked for beside the clone, no more);
- a tuner is known above model/ only by its table of operations: no
  POLICY_ constant (an enum of the tuners), no enum policy, no tuner's
  table named outside model/;
- no text file under tests/ is over 1000 lines: the suites are cut by
  feature, so that a suite is found by its name (tests/README.md's table).

Closing line: N passed, N failed.
"""
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(here)
sys.path.insert(0, here)
import ksmtest  # noqa: E402

RANK = {"compat": 0, "util": 0, "host": 1, "hash": 2, "dump": 3, "compress": 4, "model": 5,
        "scan": 6, "check": 6, "report": 7, "cli": 8, ".": 9}
# A kernel path opened without host/: open("/proc...", fopen("/sys...",
# opendir("/proc"), or a /proc or /sys path built with a format.
RAW_KERNEL_PATH = re.compile(
    r'(?<![\w])(?:open|fopen|opendir|openat|stat|access)\s*\(\s*"/(?:proc|sys)\b'
    r'|printf\s*\([^;]*?"/(?:proc|sys)/[^"]*%')
# A file of the repository cited by its path: docs/model.md, host/ksm.c,
# tests/test_check.py, fleet/ksmfleet/cli.py.
CITED = re.compile(r"(?<![\w/.-])(?:util|host|hash|dump|compress|model|scan|check|"
                   r"report|cli|compat|tests|fuzz|bench|fleet|docs|man|completions|"
                   r"scripts|systemd)/[\w./-]*?[a-z0-9_]\.(?:c|h|py|md|1|sh|bash|service|timer)"
                   r"(?![\w-]|\.\w)")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s%s" % (what, ": " + detail if detail else ""))


def product_files():
    """The shipped C files: every folder of RANK, ksmscan.c at the top."""
    files = []
    for folder in RANK:
        if folder == ".":
            files.append("ksmscan.c")
            continue
        for d, subs, names in os.walk(os.path.join(top, folder)):
            subs.sort()
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    files.append(os.path.relpath(os.path.join(d, name), top))
    return files


def folder_of(path):
    """The room a file is in: its top folder (report/write/csv.c: report)."""
    d = os.path.dirname(path)
    return d.split("/")[0] if d else "."


def includes(path):
    with open(os.path.join(top, path)) as f:
        text = f.read()
    out = []
    for inc in INCLUDE.findall(text):
        out.append(os.path.normpath(os.path.join(os.path.dirname(path), inc)))
    return out


# report/'s own rooms: the writers (write/), the registry and what every
# report shares (report/ itself), and the reports grouped by what they need.
REPORT_ROOMS = {"report/write": 0, "report": 0, "report/figures": 1,
                "report/contents": 1, "report/series": 1, "report/host": 1}


def test_report_rooms(files, graph):
    """Every file of report/ is in one of its rooms; a report includes the
    writers and report.h, never another group's report (each is a plug-in:
    one file plus one row of reports.c's table)."""
    for f in files:
        if folder_of(f) != "report":
            continue
        a = os.path.dirname(f)
        check(a in REPORT_ROOMS, "%s is in a room of report/" % f, a)
        for inc in graph[f]:
            b = os.path.dirname(inc)
            if folder_of(inc) != "report" or a == b or a not in REPORT_ROOMS:
                continue
            check(REPORT_ROOMS.get(b, 9) < REPORT_ROOMS[a] or
                  {a, b} == {"report", "report/write"},
                  "%s may include %s" % (f, inc),
                  "a report includes report.h and the writers, not another report")


def test_layers(files, graph):
    for f in files:
        for inc in graph[f]:
            check(os.path.exists(os.path.join(top, inc)),
                  "%s includes %s, which exists" % (f, inc))
            a, b = folder_of(f), folder_of(inc)
            if a == b:
                continue
            ok = b in RANK and RANK[b] < RANK[a]
            check(ok, "%s (%s) may include %s (%s)" % (f, a, inc, b),
                  "a folder includes only from the folders below it")


def test_host_only(files):
    """/proc and /sys are read through host/ alone."""
    for f in files:
        if folder_of(f) == "host":
            continue
        with open(os.path.join(top, f)) as fh:
            text = fh.read()
        bad = [text.count("\n", 0, m.start()) + 1
               for m in RAW_KERNEL_PATH.finditer(text)]
        check(not bad, "%s reads no /proc or /sys path itself" % f,
              "lines %s: ask host/ (host/host.h)" % bad)


# A variable in static storage that can change: not const, or a pointer
# that is not itself const (static const char *p; may be set).
MUTABLE_STATIC = re.compile(r"^\s*static\s+(?!const\b)(?![^;(]*\()[^;]*[;=]"
                            r"|^\s*static\s+const\s[^;(=]*\*\s*\w+\s*(?:\[[^]]*\]\s*)?[;=]",
                            re.M)


def test_report_state(files):
    """The output layer keeps no state of its own between calls: a writer's
    state is its instance's (writer_open()), a report's is its sink's."""
    for f in files:
        if folder_of(f) != "report":
            continue
        with open(os.path.join(top, f)) as fh:
            text = fh.read()
        bad = [text.count("\n", 0, m.start()) + 1 for m in MUTABLE_STATIC.finditer(text)]
        check(not bad, "%s keeps no mutable static state" % f, "lines %s" % bad)


def test_cycles(files, graph):
    """Depth-first search for a back edge among the files."""
    state = {}
    cycle = []

    def visit(f, path):
        state[f] = 1
        for g in graph.get(f, []):
            if state.get(g) == 1:
                cycle.append(" -> ".join(path + [f, g]))
            elif g in graph and not state.get(g):
                visit(g, path + [f])
        state[f] = 2

    for f in files:
        if not state.get(f):
            visit(f, [])
    check(not cycle, "no include cycle among the files", "; ".join(cycle[:3]))
    # Folders: an edge a -> b where b also reaches a is a cycle.
    edges = {(folder_of(f), folder_of(g)) for f in files for g in graph[f]
             if folder_of(f) != folder_of(g)}
    back = [(a, b) for (a, b) in edges if (b, a) in edges]
    check(not back, "no include cycle among the folders", repr(sorted(back)))


def test_no_outside_citations():
    """Nothing tracked names a file the repository does not have."""
    tracked = subprocess.run(["git", "ls-files"], cwd=top, text=True,
                             stdout=subprocess.PIPE).stdout.split()
    if not tracked:
        check(True, "no git checkout: citations not checked")
        return
    bad, missing = [], set()
    for path in tracked:
        if path.startswith("tests/fixtures/") or path.startswith("tests/corpus/") \
                or path == os.path.relpath(__file__, top):
            continue
        try:
            with open(os.path.join(top, path), encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if re.search(r"\bSPEC\b|SPEC\.md|DESIGN\.md", line):
                bad.append("%s:%d" % (path, n))
            for doc in CITED.findall(line):
                if not os.path.exists(os.path.join(top, doc)) and \
                        not os.path.exists(os.path.join(top, os.path.dirname(path), doc)):
                    missing.add("%s:%d %s" % (path, n, doc))
    check(not bad, "no file cites the outside contract (SPEC, DESIGN)",
          ", ".join(bad[:12]) + (" (+%d more)" % (len(bad) - 12) if len(bad) > 12 else ""))
    check(not missing, "every file of the repository that a file cites exists",
          ", ".join(sorted(missing)[:12]))


# The tuners are the tables of operations model/ defines: "const struct
# policy_ops advisor_policy = {".
TUNER_TABLE = re.compile(r"\bconst\s+struct\s+policy_ops\s+(\w+)_policy\s*=")


def tuner_leaks(text, tuners):
    """Where a file outside model/ names a tuner other than through the
    table of operations: a POLICY_ constant, enum policy, or a tuner's own
    table (advisor_policy). Returns the lines."""
    names = "|".join(sorted(tuners)) or "(?!)"
    leak = re.compile(r"\bPOLICY_\w+|\benum\s+policy\b|\b(?:%s)_policy\b" % names)
    return [text.count("\n", 0, m.start()) + 1 for m in leak.finditer(text)]


def test_tuners(files):
    """Above model/, the replay's callers, the series driver, the command
    line and the reports see a tuner only through struct policy_ops and
    its flags, so a new tuner is its file and its row in model/policy.c."""
    tuners = set()
    for f in files:
        if folder_of(f) == "model" and f.endswith(".c"):
            with open(os.path.join(top, f)) as fh:
                tuners.update(TUNER_TABLE.findall(fh.read()))
    check({"fixed", "advisor", "ksmtuned", "kubevirt"} <= tuners,
          "the tuners' tables are found in model/", repr(sorted(tuners)))
    # the rule finds each kind of leak, and passes the table's own words
    sample = ("if (p == POLICY_ADVISOR)\nenum policy x;\n&kubevirt_policy\n"
              "ops->flags & TUNER_LOOKS_AT_HOST\nconst struct policy_ops *o;\n")
    check(tuner_leaks(sample, tuners) == [1, 2, 3],
          "the tuner rule finds POLICY_, enum policy and a tuner's table",
          repr(tuner_leaks(sample, tuners)))
    for f in files:
        if folder_of(f) == "model":
            continue
        with open(os.path.join(top, f)) as fh:
            bad = tuner_leaks(fh.read(), tuners)
        check(not bad, "%s knows the tuners only by their operations" % f,
              "lines %s: a POLICY_ constant, enum policy or a tuner's table "
              "outside model/" % bad)


MAX_TEST_LINES = 1000


def long_files(root, limit=MAX_TEST_LINES):
    """The text files below root with more than limit lines, as "path (N)"
    (binary fixtures, which are not read as UTF-8 or hold a NUL, are not)."""
    out = []
    for d, dirs, names in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for name in sorted(names):
            path = os.path.join(d, name)
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue
            n = text.count("\n") + (not text.endswith("\n") and text != "")
            if "\0" not in text and n > limit:
                out.append("%s (%d)" % (os.path.relpath(path, root), n))
    return out


def test_test_sizes():
    """No file under tests/ is over 1000 lines; the check itself finds a
    file of 1001 lines and passes one of 1000 and a binary one."""
    with tempfile.TemporaryDirectory() as d:
        for name, text in (("ok.py", "x\n" * MAX_TEST_LINES),
                           ("long.py", "x\n" * (MAX_TEST_LINES + 1))):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        with open(os.path.join(d, "fixture.zst"), "wb") as f:
            f.write(b"\x28\xb5\x2f\xfd" + b"\n\xff" * 2000)
        check(long_files(d) == ["long.py (1001)"],
              "the line count finds a file of 1001 lines, no other", repr(long_files(d)))
    bad = long_files(here)
    check(not bad, "no file under tests/ is over %d lines (cut it by feature)"
          % MAX_TEST_LINES, ", ".join(bad))


def main():
    files = product_files()
    graph = {f: includes(f) for f in files}
    test_layers(files, graph)
    test_host_only(files)
    test_report_state(files)
    test_report_rooms(files, graph)
    test_cycles(files, graph)
    test_tuners(files)
    test_no_outside_citations()
    test_test_sizes()
    print(ksmtest.closing_line(passed, failed, 0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
