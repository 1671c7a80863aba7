#!/usr/bin/python3
"""The corpus of broken dumps (tests/corpus/, written by make_corpus.py).

For each file in expected.tsv: ksmscan exits with the expected status, the
first line of standard error is the expected one (FILE replaced by the path;
a line ending in ': ' is a prefix), every stderr line starts with 'ksmscan: ',
and standard output still holds a summary row for what was readable, as CSV
with the documented columns. The expected lines were written from how each
defect was made (tests/corpus/make_corpus.py), not taken from ksmscan.
"""
import csv, io, os, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
KSMSCAN = os.environ.get("KSMSCAN", "./ksmscan")
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s" % what)


def values():
    """Findings of the fuzzer on command-line values, kept as regressions."""
    img = os.path.join(here, "corpus", "kdump-lzo-page.bin")  # any readable file
    # fuzz_options: "0051" read as octal 41. A leading 0 is decimal: 010 = 10.
    r = subprocess.run([KSMSCAN, "--csv", "-f", "raw", "--range=08-12", img],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and int(list(csv.DictReader(io.StringIO(r.stdout)))[0]["pages"])
          == 0, "--range=08-12 is decimal 8 to 12 (no page starts there): %r %r"
          % (r.returncode, r.stderr))
    r = subprocess.run([KSMSCAN, "--csv", "-f", "raw", "--range=04096-8192", img],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and int(list(csv.DictReader(io.StringIO(r.stdout)))[0]["pages"])
          == 1, "--range=04096-8192 holds exactly the page at 4096: %r" % r.stdout[-200:])
    r = subprocess.run([KSMSCAN, "-m", "0x", img], capture_output=True, text=True)
    check(r.returncode == 2, "-m 0x is a usage error (%d)" % r.returncode)


def main():
    corpus = os.path.join(here, "corpus")
    rel = os.path.relpath(corpus)
    with open(os.path.join(corpus, "expected.tsv")) as f:
        rows = [l.rstrip("\n").split("\t") for l in f if not l.startswith("#")]
    check(len(rows) >= 20, "the corpus has at least 20 cases (%d)" % len(rows))
    for name, status, line in rows:
        path = os.path.join(rel, name)
        try:
            r = subprocess.run([KSMSCAN, "--csv", "-a", "xxhash", path],
                               capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            check(False, "%s: ksmscan did not finish in 60 s" % name)
            continue
        want = line.replace("FILE", path)
        err = r.stderr.splitlines()
        got = err[0] if err else ""
        check(r.returncode == int(status),
              "%s: exit status %d, expected %s" % (name, r.returncode, status))
        if want.endswith(": "):
            check(got.startswith(want), "%s: first stderr line\n  got:  %s\n  want: %s..."
                  % (name, got, want))
        else:
            check(got == want, "%s: first stderr line\n  got:  %s\n  want: %s"
                  % (name, got, want))
        check(all(l.startswith("ksmscan: ") for l in err),
              "%s: every stderr line starts with 'ksmscan: ': %r" % (name, r.stderr[-500:]))
        table = list(csv.DictReader(io.StringIO(r.stdout)))
        check(len(table) == 1 and table[0]["input"] == path and
              int(table[0]["pages"]) >= 0,
              "%s: a summary row is still printed: %r" % (name, r.stdout[:300]))
    values()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
