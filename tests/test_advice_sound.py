#!/usr/bin/python3
"""Nothing is written unless the advice is sound (docs/policies.md, "When
nothing is written").

-r advise -o sh and -o tmpfiles write a setting only when every input was
read, some memory is marked mergeable, and the first row reaches the target
within --max-cpu. Every other case gives one reason, a script whose only
action is to print it on standard error and exit 1, tmpfiles lines with no
`w` line, the same reason under the table, and exit status 1. Each case is
run as an operator runs it: `ksmscan ... -o sh | sh` under `set -o
pipefail` with KSM_SYSFS a temporary folder (never /sys/kernel/mm/ksm),
checking the pipeline's status and that the folder stays empty. A sound
advice still writes the first advised row's pages_to_scan, sleep_millisecs
and run into the folder, that row being the first of the table the script
starts with (as comments). The cost of a row is over the horizon: the
target window and one full scan after it, checked against the setting's
own timeline. Live processes are this suite's own children (python3
holding known pages, with and without madvise(MADV_MERGEABLE)).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import (KSMSCAN, PAGE, check, eq, fixture, parse_csv,  # noqa: E402
                     run, run_suite, skip, test, tmp)

ADVISE = ["input", "policy", "pages_to_scan", "sleep_ms", "seconds_to_target",
          "ksmd_cpu_percent_mean", "reaches_target", "apply"]
TIMELINE = ["input", "scan", "seconds"]
REFUSED = "ksmscan: no setting written: "

HOLDER = r"""
import ctypes, mmap, sys
n = int(sys.argv[2])
m = mmap.mmap(-1, n * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(n):      # n / 4 contents, each in 4 pages
    m[i * 4096:(i + 1) * 4096] = bytes([i % (n // 4) % 251 + 1]) * 4096
if sys.argv[1] == "mergeable":
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    buf = ctypes.c_char.from_buffer(m)
    if libc.madvise(ctypes.addressof(buf), n * 4096, 12):   # MADV_MERGEABLE
        sys.exit("madvise: errno %d" % ctypes.get_errno())
    del buf
print("ready", flush=True)
sys.stdin.read()
"""


def holder(kind, pages=256):
    """A child holding @pages anonymous pages of pages / 4 contents, marked
    mergeable or not (@kind: "mergeable" or "plain"); close its stdin to
    end it."""
    p = subprocess.Popen([sys.executable, "-c", HOLDER, kind, str(pages)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    p.stdout.readline()
    return p


def end(p):
    p.stdin.close()
    p.wait(timeout=30)


def piped(args, what):
    """`ksmscan ARGS -o sh | sh` with set -o pipefail and KSM_SYSFS a fresh
    folder: (the pipeline's status, sh's standard error, the folder's files
    and their contents)."""
    folder = tempfile.mkdtemp(prefix="ksmscan-sysfs-")
    cmd = " ".join(_quote(a) for a in KSMSCAN + list(args) + ["-o", "sh"])
    r = subprocess.run(["bash", "-c", "set -o pipefail; %s 2>/dev/null | sh" % cmd],
                       env=dict(os.environ, KSM_SYSFS=folder),
                       capture_output=True, text=True, timeout=600)
    files = {f: open(os.path.join(folder, f)).read() for f in sorted(os.listdir(folder))}
    shutil.rmtree(folder)
    return r.returncode, r.stderr, files


def _quote(a):
    return "'" + a.replace("'", "'\\''") + "'"


def refused(args, says, what):
    """Every form of the advice of @args refuses with one reason containing
    @says: the script's only action prints it and exits 1 (the pipeline into
    sh fails and writes nothing), tmpfiles has no `w` line, the table says
    it, and ksmscan exits 1 each time."""
    rc, err, files = piped(args, what)
    check(rc != 0, "%s: `-o sh | sh` fails under pipefail" % what, "rc %r" % rc)
    eq(files, {}, "%s: the pipeline writes no setting" % what)
    reasons = [x for x in err.splitlines() if x.startswith(REFUSED)]
    check(len(reasons) == 1 and says in reasons[0],
          "%s: sh prints one reason on stderr, saying %r" % (what, says), err)
    sh = run(list(args) + ["-o", "sh"])
    actions = [x for x in sh.out.splitlines() if x and not x.startswith("#")
               and x not in ("set -eu", "ksm=${KSM_SYSFS:-/sys/kernel/mm/ksm}")]
    check(sh.rc == 1 and len(actions) == 2 and actions[0].startswith("printf ")
          and actions[0].endswith(" >&2") and actions[1] == "exit 1"
          and "$ksm" not in sh.out,
          "%s: -o sh exits 1, its only action the reason on stderr and "
          "exit 1" % what, sh.brief() + sh.out[-400:])
    # the same script run by sh on its own (not a pipe): status 1
    folder = tempfile.mkdtemp(prefix="ksmscan-sysfs-")
    r = subprocess.run(["sh", "-c", sh.out], env=dict(os.environ, KSM_SYSFS=folder),
                       capture_output=True, text=True)
    check(r.returncode == 1 and not os.listdir(folder),
          "%s: the saved script exits 1, writing nothing" % what,
          "rc %r, %r" % (r.returncode, os.listdir(folder)))
    shutil.rmtree(folder)
    tf = run(list(args) + ["-o", "tmpfiles"])
    lines = tf.out.splitlines()
    check(tf.rc == 1 and lines and all(x.startswith("#") for x in lines)
          and any(x.startswith("# No setting written: ") and says in x for x in lines),
          "%s: -o tmpfiles exits 1, no `w` line, the reason as a comment" % what,
          tf.brief() + tf.out[-300:])
    table = run(list(args))
    flat = " ".join(table.out.split())
    check(table.rc == 1 and "Nothing to apply: " in flat and
          " ".join(says.split()) in flat,
          "%s: the table says the same reason, exit 1" % what,
          table.brief() + table.out[-500:])
    # CSV and JSON hold no sentences: the reason is one line on stderr
    for fmt in ("csv", "json"):
        m = run(list(args) + ["-o", fmt])
        said = [x for x in m.err.splitlines() if "no setting written: " in x]
        check(m.rc == 1 and len(said) == 1 and says in said[0],
              "%s: -o %s exits 1 and says why in one line" % (what, fmt), m.brief())


def comment_rows(script):
    """The advice table at the head of a script (comments): its rows after
    the header, as lists of words."""
    rows, inside = [], False
    for line in script.splitlines():
        if line.startswith("# policy "):
            inside = True
        elif inside and (line.startswith("# fixed ") or line.startswith("# advisor ")):
            rows.append(line[2:].split())
        elif inside:
            break
    return rows


@test("refused")
def no_such_process():
    """A pid that does not exist: the run ends at once, before any sample
    (the interval is 5 s; the old run sampled it twice), one line on
    standard error naming it, and nothing written."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    args = ["-p", str(gone.pid), "--count=2", "--interval=5s", "-r", "advise",
            "--target=90%@1m"]
    t0 = time.monotonic()
    r = run(args + ["-o", "sh"])
    took = time.monotonic() - t0
    check(took < 3, "a pid that does not exist: ends before the first "
          "interval (%.1f s)" % took, r.brief())
    named = [x for x in r.err.splitlines() if "pid:%d" % gone.pid in x and
             "cannot open" in x]
    eq(len(named), 1, "a pid that does not exist: one line says it")
    refused(args, "nothing was read", "no such process")


@test("refused")
def unreadable_files():
    """Missing, empty and junk files: no setting written, with the reason."""
    empty = tmp("advice-empty.raw")
    open(empty, "wb").close()
    junk = tmp("advice-junk.raw")
    with open(junk, "wb") as f:
        f.write(b"junk\n")
    noise = tmp("advice-noise.raw")     # pages with nothing to merge
    with open(noise, "wb") as f:
        f.write(os.urandom(16 * PAGE))
    for path, says, what in (
            (tmp("advice-missing.raw"), "not every input was read", "a missing file"),
            # a file with no whole page is not read (no memory in it)
            (empty, "not every input was read", "an empty file"),
            (junk, "not every input was read", "a junk file"),
            (noise, "there is no saving to reach", "pages with nothing alike")):
        refused(["--series", path, "-r", "advise", "--target=90%@1m"], says, what)


@test("refused")
def nothing_mergeable():
    """A process of which nothing is marked mergeable: ksmd would scan none
    of it; its pages are alike (they would merge were they marked)."""
    p = holder("plain")
    try:
        refused(["-p", str(p.pid), "--count=2", "--interval=1s", "-r", "advise",
                 "--target=90%@1m"], "none of the memory is marked mergeable",
                "a process with nothing mergeable")
    finally:
        end(p)


@test("refused")
def unreachable_and_over_cpu():
    """A target no setting reaches (99% in 1 ms: merging takes two full
    scans) and a --max-cpu the advised row exceeds: no setting written."""
    guest = fixture("guest-b.elf.zst")
    refused(["--series", guest, "-r", "advise", "--target=99%@1ms"],
            "no setting reaches 99% of the saving by 0.001 s", "99% in 1 ms")
    refused(["--series", guest, "-r", "advise", "--target=90%@1m",
             "--max-cpu=0.01"], "no setting reaches the target within "
            "--max-cpu=0.01%", "--max-cpu=0.01")


def horizon_mean(tl, by):
    """ksmd_cpu_percent_mean of the horizon, read from a setting's own
    timeline: at the end of the first full scan that begins at or after
    `by` (where the scan before it ended), or at its last scan (the replay's
    counters settled: every later scan repeats it)."""
    for before, row in zip(tl, tl[1:]):
        if float(before["seconds"]) >= by:
            return float(row["ksmd_cpu_percent_mean"])
    return float(tl[-1]["ksmd_cpu_percent_mean"])


def timeline(path, pages, sleep, cost):
    r = run(["--csv", "--series", path, "-r", "timeline", "--pages-to-scan=%d" % pages,
             "--sleep-ms=%d" % sleep] + cost)
    return parse_csv(r, "%d pages every %d ms" % (pages, sleep), TIMELINE) or []


@test("cost")
def cost_over_the_horizon():
    """99% in 1 ms: the whole guest (36896 pages, 36897 a wake-up) every 10
    ms at 2 us a page is 74 ms of work a wake-up: ksmd busy all the time,
    not the "0.00%" of a 1 ms window; the row's cost is its setting's own
    timeline's at the end of the first full scan after 1 ms. And on a small
    memory of pairs whose KSM pages cost more to revisit than a page to
    checksum, the advised row's cost is its timeline's over the target and
    one full scan after it, more than the mean to the target alone."""
    guest = fixture("guest-b.elf.zst")
    cost = ["--page-cost=2us", "--revisit-cost=2us", "--merge-cost=0"]
    r = run(["--csv", "--series", guest, "-r", "advise", "--target=99%@1ms"] + cost)
    rows = parse_csv(r, "99% in 1 ms", ADVISE) or []
    row = next((x for x in rows if x["policy"] == "fixed" and x["sleep_ms"] == "10"), None)
    if check(row is not None, "99% in 1 ms: a fixed row at 10 ms", r.out[:300]):
        cpu = float(row["ksmd_cpu_percent_mean"])
        # hand: 36897 pages x 2 us = 73.8 ms of work, then 10 ms asleep
        check(cpu >= 100 * 73.8 / (73.8 + 10) - 1, "99% in 1 ms: the whole "
              "memory every 10 ms costs ksmd a CPU (>= 87%), not 0", repr(cpu))
        tl = timeline(guest, int(row["pages_to_scan"]), 10, cost)
        if tl:
            check(abs(horizon_mean(tl, 0.001) - cpu) < 1e-4,
                  "99% in 1 ms: the row's cost is its timeline's over the horizon",
                  "%r against %r" % (horizon_mean(tl, 0.001), cpu))
    # 512 pages in 256 pairs; 90% of the saving in 20 s
    pairs = tmp("advice-pairs.raw")
    with open(pairs, "wb") as f:
        for i in range(256):
            page = i.to_bytes(4, "little") * (PAGE // 4)
            f.write(page + page)
    # a KSM page revisited costs 10 times a page checksummed: once merged,
    # ksmd costs more a scan than before the target
    cost = ["--page-cost=2us", "--revisit-cost=20us", "--merge-cost=0"]
    r = run(["--csv", "--series", pairs, "-r", "advise", "--target=90%@20s"] + cost)
    rows = parse_csv(r, "pairs", ADVISE) or []
    if not check(rows and rows[0]["reaches_target"] == "1" and r.rc == 0,
                 "pairs: the first row reaches the target, exit 0", r.brief()):
        return
    a = rows[0]
    tl = timeline(pairs, int(a["pages_to_scan"]), int(a["sleep_ms"]), cost)
    if not tl:
        return
    at_target = [x for x in tl if float(x["seconds"]) <= 20][-1]
    want = horizon_mean(tl, 20)
    check(abs(want - float(a["ksmd_cpu_percent_mean"])) < 1e-4,
          "pairs: the row's cost is its timeline's over the horizon",
          "%r against %r" % (want, a["ksmd_cpu_percent_mean"]))
    check(float(at_target["ksmd_cpu_percent_mean"]) < want - 1e-4,
          "pairs: which is more than the mean to the target time alone",
          "%r / %r" % (at_target["ksmd_cpu_percent_mean"], want))


@test("wake")
def wake_cost_over_max_cpu():
    """Each wake-up of ksmd costs --wake-cost (default 60 us) besides its
    pages: with the pages free (--page-cost=0 and the others), a setting
    costs one wake-up every sleep_ms (--hz=0: exactly), 100 * 60 us / 200 ms
    = 0.03% at the longest sleep the advice tries. So --max-cpu=0.025
    refuses every setting, through `-o sh | sh` too, where pages alone
    would cost nothing; and --wake-cost=1ms makes it 0.5%: --max-cpu=0.6
    writes the 200 ms row, --max-cpu=0.4 nothing."""
    pairs = tmp("advice-wake-pairs.raw")
    with open(pairs, "wb") as f:      # 512 pages in 256 pairs
        for i in range(256):
            page = (i + 7).to_bytes(4, "little") * (PAGE // 4)
            f.write(page + page)
    base = ["--series", pairs, "-r", "advise", "--target=90%@20s", "--hz=0",
            "--page-cost=0", "--revisit-cost=0", "--merge-cost=0"]
    r = run(["--csv"] + base)
    rows = parse_csv(r, "pages free", ADVISE) or []
    fixed = [x for x in rows if x["policy"] == "fixed"]
    # hand: a scan of P pages a wake-up is floor(512 / P) + 1 wake-ups, the
    # last k scans end (k (floor(512 / P) + 1) - 1) sleeps in: a mean a
    # little over one wake-up's cost a sleep
    low = [(x["sleep_ms"], x["ksmd_cpu_percent_mean"]) for x in fixed
           if not 100 * 60e-6 / (int(x["sleep_ms"]) / 1000) <=
           float(x["ksmd_cpu_percent_mean"]) <=
           1.05 * 100 * 60e-6 / (int(x["sleep_ms"]) / 1000)]
    check(len(fixed) == 5 and not low, "pages free: each fixed row costs a "
          "60 us wake-up every sleep_ms (0.03% at 200 ms), within 5%",
          repr(low or r.out[:400]))
    refused(base + ["--max-cpu=0.025"], "no setting reaches the target within "
            "--max-cpu=0.025%", "pages free, 60 us wake-ups, --max-cpu=0.025")
    rc, err, files = piped(base + ["--wake-cost=1ms", "--max-cpu=0.4"], "1 ms")
    check(rc != 0 and files == {}, "1 ms wake-ups, --max-cpu=0.4: `-o sh | sh` "
          "fails, writing nothing", "rc %r, %r" % (rc, files))
    rc, err, files = piped(base + ["--wake-cost=1ms", "--max-cpu=0.6"], "1 ms")
    eq((rc, files.get("sleep_millisecs"), files.get("run")), (0, "200\n", "1\n"),
       "1 ms wake-ups, --max-cpu=0.6: `-o sh | sh` writes the 200 ms row")


@test("sound")
def sound_writes_first_row():
    """A sound advice: `-o sh | sh` writes pages_to_scan, sleep_millisecs
    and run=1, the values of the table's first advised row, which the
    script gives first as comments; tmpfiles the same as `w` lines; exit 0.
    On a file, and on a child process whose pages are marked mergeable."""
    guest = fixture("guest-b.elf.zst")
    sound(["--series", guest, "-r", "advise", "--target=90%@1m", "--max-cpu=5"],
          "the fixture guest")
    if ksm_running():
        skip("a child marked mergeable: KSM runs here, and may merge its "
             "pages before they are read (the file case stands)")
        return
    p = holder("mergeable")
    try:
        sound(["-p", str(p.pid), "--count=2", "--interval=1s", "-r", "advise",
               "--target=90%@1m"], "a process marked mergeable")
    finally:
        end(p)


def ksm_running():
    """Whether this host's ksmd runs (read only: /sys/kernel/mm/ksm/run)."""
    try:
        with open("/sys/kernel/mm/ksm/run") as f:
            return f.read().strip() == "1"
    except OSError:
        return False


def sound(args, what):
    sh = run(list(args) + ["-o", "sh"])
    table = comment_rows(sh.out)
    if not check(sh.rc == 0 and table and table[0][0] == "fixed",
                 "%s: -o sh exits 0 and starts with the table as comments, a "
                 "fixed row first" % what, sh.brief() + sh.out[:600]):
        return
    first = table[0]
    want = {"pages_to_scan": first[1] + "\n", "sleep_millisecs": first[2] + "\n",
            "run": "1\n"}
    check(first[5:7] == ["yes", "yes"], "%s: the first row reaches the target "
          "within --max-cpu" % what, repr(first))
    folder = tempfile.mkdtemp(prefix="ksmscan-sysfs-")
    r = subprocess.run(["sh", "-c", sh.out], env=dict(os.environ, KSM_SYSFS=folder),
                       capture_output=True, text=True)
    files = {f: open(os.path.join(folder, f)).read() for f in sorted(os.listdir(folder))}
    shutil.rmtree(folder)
    check(r.returncode == 0, "%s: the script runs" % what, r.stderr)
    eq(files, want, "%s: the script writes the table's first row" % what)
    if "-p" in args:
        return      # a live run samples again: its figures may differ
    rc, err, files = piped(args, what)
    eq((rc, files), (0, want), "%s: `-o sh | sh` writes the first row" % what)
    tf = run(list(args) + ["-o", "tmpfiles"])
    w = {x.split()[1].rsplit("/", 1)[1]: x.split()[-1] + "\n"
         for x in tf.out.splitlines() if x.startswith("w ")}
    eq((tf.rc, w), (0, want), "%s: tmpfiles writes the same" % what)


if __name__ == "__main__":
    sys.exit(run_suite("test_advice_sound"))
