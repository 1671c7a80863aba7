#!/usr/bin/python3
"""Hostile names in every output: a seeded, time-bounded fuzz harness.

Names made of bytes 0x01-0xFF (bytes that are not UTF-8, overlong forms,
surrogates, code points past U+10FFFF), C0 and C1 controls, ESC sequences,
bidirectional controls (U+202E), line breaks, shell metacharacters, quotes
and backslashes reach ksmscan as file names, `--label`, `--group` names and
process names (prctl(PR_SET_NAME)), through every report and output format.
Each output is checked by an independent parser: Python's strict UTF-8
decoder (every output, standard error too), its csv module, json,
xml.etree for the SVG picture, prometheus_client's OpenMetrics parser; and
each name's cell against what the manual says it shows, computed here
(Python's decoder with backslashreplace for `\\xHH`, '?' for controls;
U+FFFD per byte in JSON).

Shell lines: the `systemctl set-property` line that `--enable` prints for a
unit, whose cgroup is made here (root, cgroup2) with a hostile name, is run
through sh with systemctl shadowed by a script that records its arguments:
it must receive `set-property -- NAME MemoryKSM=yes`, the exact name (libvirt's machine-qemu\\x2d1\\x2dvm.scope,
$(...), backquotes, quotes, spaces, bytes that are not UTF-8).

And the test helpers read /proc as bytes: with a process named by bytes that
are not UTF-8 running, they still work, and so does `--all-processes` in
every format.

KSMSCAN_SEED picks the names (default: fixed); KSMSCAN_FUZZ_SECONDS bounds
the fuzzing (default 40).
"""
import codecs
import unicodedata
import csv
import io
import json
import os
import random
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET


def display_columns(line):
    """The columns a terminal gives @line: East Asian wide and fullwidth
    characters two, combining marks none, everything else one."""
    return sum(0 if unicodedata.combining(ch) else
               2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
               for ch in line)


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import (KSMSCAN, PAGE, Skip, check, eq, named_child,  # noqa: E402
                     proc_comm, proc_stat_fields, run_suite, test, tmp)

PIECES = [b"\xff", b"\xa0", b"\xc3(", "\u202e".encode(), "\u2066".encode(), b"\n", b"\r",
          b"\t", b"\x1b[31m", b"\x1b]0;x\x07", b"\x9b", b"$(touch PWNED)", b"`id`", b"'",
          b'"', b"\\", b" ", b";", b"=", b"+", b"-", b"@", b"\xc2\x85", b"\xed\xa0\x80",
          b"\xf4\x90\x80\x80", b"\xe0\x80\xaf", b"\xc0\xaf", b"&<>", b"\x7f", b"\x01",
          "\u00e9".encode(), "\u6f22".encode(), b"\\x41", b"%s%n", b"{}", b"#", b"|", b"*",
          "\U0001f600".encode(), b"\xe2\x80", b"\xf0\x9f"]

# Shown as '?': C0, DEL, C1 and the bidirectional controls.
CONTROL = (set(range(0x20)) | set(range(0x7f, 0xa0)) | {0x200e, 0x200f} |
           set(range(0x202a, 0x202f)) | set(range(0x2066, 0x206a)))

codecs.register_error("ksm_perbyte", lambda e: ("\ufffd" * (e.end - e.start), e.end))

REPORTS = ["summary", "histogram", "regions", "top", "tree", "pages", "compress", "matrix",
           "contents", "sketch", "exposure", "mitigations"]
# A series of the two files (snapshots with hostile names).
SERIES_REPORTS = ["timeline", "volatility", "policies", "advise"]
SERIES_ARGS = {"timeline": [], "volatility": [],
               "policies": [b"--policy=fixed,advisor,ksmtuned", b"--host-memory=1G",
                            b"--host-used=512M"],
               "advise": [b"--target=50%@1h"]}
# Live processes with hostile names (processes: a live series of two).
PROCESS_ARGS = {"summary": [], "doctor": [], "thp": [], "numa": [],
                "processes": [b"--count=2", b"--interval=0.05s", b"-q"]}
FORMATS = ["table", "csv", "json", "openmetrics"]


def hostile(rng, maxlen=48, forbid=b"\0"):
    parts = [rng.choice(PIECES) for _ in range(rng.randint(1, 5))]
    parts.append(bytes(rng.randint(1, 255) for _ in range(rng.randint(0, 5))))
    rng.shuffle(parts)
    name = b"".join(parts)
    for c in set(forbid) | {0}:
        name = name.replace(bytes([c]), b"_")
    return name[:maxlen] or b"x"


def shown(name, keep=""):
    """What a table, CSV or OpenMetrics shows of @name: bytes that are not
    UTF-8 as \\xHH, controls as '?' (but those in @keep)."""
    s = name.decode("utf-8", "backslashreplace")
    return "".join("?" if ord(c) in CONTROL and c not in keep else c for c in s)


def csv_shown(name):
    s = shown(name, keep="\t\r\n")
    first = name[:1]
    if first and (first in b"=+@\t\r" or (first == b"-" and len(name) > 1)):
        s = "'" + s
    return s


def json_shown(name):
    return name.decode("utf-8", "ksm_perbyte")


def strict(data, what):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        check(False, "%s: strict UTF-8" % what, "%s in %r" % (e, data[max(0, e.start - 20):e.end + 20]))
        return None


def no_controls(text, what, allow="\n"):
    bad = [c for c in text if ord(c) in CONTROL and c not in allow]
    check(not bad, "%s: no control or bidi character" % what, repr(bad[:5]))


# Runs may start in another folder: a relative $KSMSCAN is made absolute.
EXE = [os.path.abspath(KSMSCAN[0]) if "/" in KSMSCAN[0] else KSMSCAN[0]] + KSMSCAN[1:]


def ksm(args, cwd=None, input=None, env=None):
    return subprocess.run(EXE + args, cwd=cwd, input=input, capture_output=True,
                          stdin=None if input is not None else subprocess.DEVNULL,
                          timeout=120, env=env)


def check_run(p, fmt, what):
    """The run ended normally and every output parses; the text, or None."""
    check(p.returncode in (0, 1, 2), "%s: exit status 0, 1 or 2, no signal" % what,
          str(p.returncode))
    err = strict(p.stderr, what + " stderr")
    if err is not None:
        no_controls(err, what + " stderr")
        lines = err.splitlines()
        check(all(l.startswith("ksmscan: ") or l.startswith(" ") or p.returncode == 2
                  for l in lines), "%s: every message line is ksmscan's" % what, repr(lines[:3]))
    out = strict(p.stdout, what)
    if out is None or p.returncode == 2:
        return None
    if fmt == "table":
        no_controls(out, what)
    elif fmt == "csv":
        try:
            rows = list(csv.reader(io.StringIO(out, newline=""), strict=True))
            check(rows and all(len(r) == len(rows[0]) for r in rows),
                  "%s: every CSV row has the header's fields" % what)
        except csv.Error as e:
            check(False, "%s: CSV parses" % what, str(e))
    elif fmt == "json":
        try:
            json.loads(out)
        except ValueError as e:
            check(False, "%s: JSON parses" % what, str(e))
    elif fmt == "openmetrics":
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
        try:
            list(text_string_to_metric_families(out))
        except Exception as e:  # noqa: BLE001 - any parser complaint is a failure
            check(False, "%s: OpenMetrics parses" % what, "%s: %s" % (type(e).__name__, e))
    return out


def names_of(out, fmt, col="input"):
    """The @col values of every row of every report in @out."""
    if fmt == "csv":
        return {r.get(col) for r in csv.DictReader(io.StringIO(out, newline=""))}
    if fmt == "json":
        doc = json.loads(out)
        return {r.get(col) for k, rows in doc.items() if isinstance(rows, list)
                for r in rows}
    from prometheus_client.openmetrics.parser import text_string_to_metric_families
    return {s.labels.get(col) for fam in text_string_to_metric_families(out)
            for s in fam.samples}


EXPECT = {"csv": csv_shown, "json": json_shown, "openmetrics": lambda n: shown(n, keep="\n")}


def inputs_dir(rng, k):
    d = tmp("names%d" % k)
    os.makedirs(d)
    names = []
    for i in range(2):
        n = hostile(rng, forbid=b"/,=")
        if n.startswith(b"-"):
            n = b"_" + n            # not an option
        while n in names or n in (b".", b".."):
            n += b"_"
        names.append(n)
        with open(os.path.join(d.encode(), n), "wb") as f:
            f.write(bytes([i + 1]) * PAGE + os.urandom(PAGE) + bytes(PAGE))
    return d, names


@test("fuzz")
def hostile_names_every_output():
    rng = random.Random(int(os.environ.get("KSMSCAN_SEED", "3402")))
    stop = time.time() + float(os.environ.get("KSMSCAN_FUZZ_SECONDS", "40"))
    rounds = 0
    while time.time() < stop or rounds < 2:
        d, files = inputs_dir(rng, rounds)
        label = hostile(rng, forbid=b",")      # it is named in --group's list
        group = hostile(rng, forbid=b"=,")
        args = [b"--label=" + label, b"--group=" + group + b"=" + files[0] + b"," + label,
                files[0], files[1], b"-"]
        data = os.urandom(PAGE) * 2
        for report in REPORTS if rounds < 2 else [rng.choice(REPORTS)]:
            for fmt in FORMATS:
                what = "round %d -r %s -o %s" % (rounds, report, fmt)
                p = ksm([b"-o", fmt.encode(), b"-r", report.encode()] + args, cwd=d, input=data)
                out = check_run(p, fmt, what)
                if report == "summary":
                    check(p.returncode == 0, "%s: exit 0" % what,
                      p.stderr[:300].decode(errors="replace"))
                if report == "summary" and fmt == "table" and out:
                    # Tables for people fit 80 columns as a terminal shows
                    # them: a \xHH takes four, a wide character two, a
                    # combining mark none (unicodedata, not ksmscan's table).
                    wide = [l for l in out.split("\n") if display_columns(l) > 80]
                    check(not wide, "%s: lines of 80 columns at most" % what, repr(wide[:2]))
                if out is None or report != "summary" or fmt not in EXPECT:
                    continue
                got = names_of(out, fmt)
                exp = {EXPECT[fmt](n) for n in files + [label]}
                exp.add(EXPECT[fmt](b"group:" + group))
                check(exp <= got, "%s: each name as the manual says" % what,
                      "missing %r of %r" % (sorted(exp - got), sorted(got, key=str)))
        # The same files as the snapshots of a series.
        for report in sorted(SERIES_ARGS) if rounds < 2 else [rng.choice(sorted(SERIES_ARGS))]:
            for fmt in FORMATS:
                what = "round %d --series -r %s -o %s" % (rounds, report, fmt)
                p = ksm([b"-o", fmt.encode(), b"-r", report.encode(), b"--series"] +
                        SERIES_ARGS[report] + files, cwd=d)
                check_run(p, fmt, what)
                # advise exits 1 when it writes no setting (the reason said
                # once); every other report of a series reads them all: 0
                said = (p.stderr + p.stdout).lower()
                refused = report == "advise" and p.returncode == 1 and (
                    b"no setting written" in said or b"nothing to apply" in said)
                check(p.returncode == 0 or refused, "%s: exit 0 (advise: or 1, no "
                      "setting written, said why)" % what,
                      p.stderr[:300].decode(errors="replace"))
        # The picture: an XML parser reads it, names and all.
        svg = os.path.join(d, "out.svg")
        p = ksm([b"--svg=" + svg.encode(), b"-r", b"histogram,compress"] + args, cwd=d, input=data)
        check_run(p, "table", "round %d --svg" % rounds)
        check(p.returncode == 0, "round %d --svg: exit 0" % rounds, p.stderr.decode(errors="replace")[:300])
        try:
            with open(svg, "rb") as f:
                raw = f.read()
            if strict(raw, "round %d svg" % rounds) is not None:
                ET.fromstring(raw)
                no_controls(raw.decode(), "round %d svg" % rounds, allow="\n\t")
        except (OSError, ET.ParseError) as e:
            check(False, "round %d: the SVG parses" % rounds, str(e))
        shutil.rmtree(d)
        rounds += 1
    check(rounds >= 2, "at least two rounds ran", str(rounds))


@test("fuzz")
def hostile_process_names():
    """Processes named by hostile bytes: the processes report's command
    column, in every format, is the name as shown; a line break inside a
    name is not cut there."""
    rng = random.Random(int(os.environ.get("KSMSCAN_SEED", "3402")) + 1)
    names = [b"a\nb\xffc", b"\xe2\x80\xaeevil", b"$(id)`x`'\"", b"\x1b[2J\x9b"]
    names += [hostile(rng, maxlen=15) for _ in range(4)]
    kids = [named_child(n) for n in names]
    try:
        for k, n in zip(kids, names):
            eq(proc_comm(k.pid), n[:15], "the child's comm is its hostile name")
        pids = sum([[b"-p", str(k.pid).encode()] for k in kids], [])
        for report, extra in sorted(PROCESS_ARGS.items()):
            for fmt in FORMATS:
                what = "-r %s -o %s" % (report, fmt)
                p = ksm([b"-o", fmt.encode(), b"-r", report.encode()] + extra + pids)
                out = check_run(p, fmt, what)
                check(p.returncode == 0, "%s: exit 0" % what,
                      p.stderr[:300].decode(errors="replace"))
                if out is None or fmt == "table" or report not in ("summary", "processes"):
                    continue
                got = names_of(out, fmt, "command")
                exp = {EXPECT[fmt](n[:15]) for n in names}
                check(exp <= got, "%s: each command as the manual says" % what,
                      "missing %r of %r" % (sorted(exp - got), sorted(got, key=str)))
    finally:
        for k in kids:
            k.kill()
            k.wait()


@test("helpers")
def helpers_read_proc_as_bytes():
    """With processes named by bytes that are not UTF-8 running, the test
    helpers that read /proc work, and --all-processes gives valid UTF-8 in
    every format."""
    kids = [named_child(b"\xff\xfe-ksm"), named_child(b"x\xc3(\xa0")]
    try:
        for k in kids:
            check(proc_stat_fields(k.pid)[0] in "RS", "proc_stat_fields reads a non-UTF-8 name's stat")
        import live
        live.ksm_processes()        # reads every process's ksm_stat
        seen = 0
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    proc_stat_fields(d)
                    proc_comm(d)
                    seen += 1
                except OSError:
                    pass
        check(seen > len(kids), "every process's stat and comm read", str(seen))
        for fmt in FORMATS:
            p = ksm(["--all-processes", "-r", "processes", "-o", fmt, "-q"])
            check_run(p, fmt, "--all-processes -o %s" % fmt)
    finally:
        for k in kids:
            k.kill()
            k.wait()


# --- shell lines -------------------------------------------------------------
CGROUP2 = "/sys/fs/cgroup/unified" if os.path.isdir("/sys/fs/cgroup/unified") else "/sys/fs/cgroup"

UNIT_NAMES = [b"machine-qemu\\x2d1\\x2dvm.scope", b"$(touch${IFS}PWNED)x.service",
              b"`touch PWNED2`.service", b"it's \"quoted\".service", b"a  b\tc.scope",
              b"\xff\xfe;rm -rf x.service", b"\xe2\x80\xaeecivres.service", b"\x1b[31mred.scope",
              b"semi;colon|pipe&amp.service", b"back\\slash\\n.service"]


def cgroup_with(name):
    """A child process in a new cgroup named @name under the cgroup2 root,
    or Skip."""
    if os.geteuid() != 0:
        raise Skip("needs root to make cgroups with hostile names")
    path = os.path.join(CGROUP2.encode(), name)
    try:
        os.mkdir(path)
    except OSError as e:
        raise Skip("cannot make a cgroup under %s: %s" % (CGROUP2, e))
    kid = subprocess.Popen(["sleep", "300"])
    try:
        with open(os.path.join(path, b"cgroup.procs"), "w") as f:
            f.write(str(kid.pid))
    except OSError as e:
        kid.kill()
        kid.wait()
        os.rmdir(path)
        raise Skip("cannot move a process into a cgroup: %s" % e)
    return kid, path


def shadowed_sh(lines, bindir, record):
    """Run @lines through sh with systemctl shadowed; the argument lists it
    received (each a list of bytes)."""
    env = dict(os.environ, PATH=bindir + ":" + os.environ.get("PATH", ""), REC=record)
    if os.path.exists(record):
        os.unlink(record)
    p = subprocess.run(["sh", "-e"], input=lines, capture_output=True, env=env, cwd=bindir,
                       timeout=30)
    check(p.returncode == 0, "the printed lines run in sh", p.stderr.decode(errors="replace"))
    if not os.path.exists(record):
        return []
    with open(record, "rb") as f:
        calls = f.read().split(b"\x01\n")
    return [c.split(b"\0")[:-1] for c in calls if c]


@test("shell")
def enable_lines_pass_the_exact_name():
    bindir = tmp("shadow")
    os.makedirs(bindir, exist_ok=True)
    with open(os.path.join(bindir, "systemctl"), "w") as f:
        f.write("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done >> \"$REC\"\n"
                "printf '\\001\\n' >> \"$REC\"\n")
    os.chmod(os.path.join(bindir, "systemctl"), 0o755)
    record = os.path.join(bindir, "calls")
    for name in UNIT_NAMES:
        kid, path = cgroup_with(name)
        try:
            p = ksm([b"-p", str(kid.pid).encode(), b"--enable=unit:" + name])
            what = "--enable=unit:%r" % name
            out = check_run(p, "table", what)
            if not check(p.returncode == 0 and out, "%s: exit 0" % what, p.stderr[-300:]):
                continue
            lines = [l for l in out.split("\n") if l.lstrip().startswith("systemctl ")]
            eq(len(lines), 1, "%s: one systemctl line" % what)
            calls = shadowed_sh(("\n".join(lines) + "\n").encode(), bindir, record)
            eq(calls, [[b"set-property", b"--", name, b"MemoryKSM=yes"]],
               "%s: systemctl receives the exact name" % what)
            check(not os.path.exists(os.path.join(bindir, "PWNED")) and
                  not os.path.exists(os.path.join(bindir, "PWNED2")),
                  "%s: nothing else ran" % what)
        finally:
            kid.kill()
            kid.wait()
            os.rmdir(path)


if __name__ == "__main__":
    sys.exit(run_suite("names"))
