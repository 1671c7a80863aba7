#!/usr/bin/python3
"""The guards of the tests that change the kernel (tests/live.py), each
against a case built here:

- live.py: ksm_session() and zram_session() on a fake sysfs folder and a fake
  /proc (nothing here touches the kernel): off unless KSMSCAN_LIVE_TESTS=1;
  not idle (run != 0, merged pages, a process with KSM state, a zram device
  with a size) -> NotAllowed naming the cause, and not one file written;
  every setting changed is written back, KSM's run=2 first only when the
  session started KSM and run last, zram's reset=1 first; also when the
  session ends by an exception, by SIGTERM or SIGINT sent to a child process
  inside the session, and at exit.

The suites' harness itself (the fixture finder, the missing-module line, the
interpreter of children) is checked in test_harness.py.
"""
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import live  # noqa: E402
from ksmtest import check, eq, run_suite, test, tmp  # noqa: E402

ON = {"KSMSCAN_LIVE_TESTS": "1"}

# A KSM folder as Linux 6.18 has it: (name, value, writable).
KSM_FILES = [
    ("advisor_max_cpu", "70", True), ("advisor_max_pages_to_scan", "30000", True),
    ("advisor_min_pages_to_scan", "500", True), ("advisor_mode", "[none] scan-time", True),
    ("advisor_target_scan_time", "200", True), ("full_scans", "0", False),
    ("general_profit", "0", False), ("ksm_zero_pages", "0", False),
    ("max_page_sharing", "256", True), ("merge_across_nodes", "1", True),
    ("pages_scanned", "17498", False), ("pages_shared", "0", False),
    ("pages_sharing", "0", False), ("pages_to_scan", "100", True), ("run", "0", True),
    ("sleep_millisecs", "20", True), ("smart_scan", "1", True),
    ("stable_node_chains_prune_millisecs", "2000", True), ("use_zero_pages", "0", True),
]
# /proc/PID/ksm_stat of a process without KSM state, and of a kernel thread.
IDLE_STAT = ("ksm_rmap_items 0\nksm_zero_pages 0\nksm_merging_pages 0\n"
             "ksm_process_profit 0\nksm_merge_any: no\nksm_mergeable: no\n")
ZRAM_FILES = [("disksize", "0", True), ("comp_algorithm", "[lzo-rle] lzo lz4 zstd", True),
              ("max_comp_streams", "2", True), ("initstate", "0", False),
              ("mem_limit", "0", True)]


def make_dir(name, files):
    d = tmp(name)
    os.makedirs(d)
    for fname, value, writable in files:
        path = os.path.join(d, fname)
        with open(path, "w") as f:
            f.write(value + "\n")
        os.chmod(path, 0o644 if writable else 0o444)
    return d


def fake_ksm(name, changes=(), stats=()):
    """A fake KSM folder (KSM_FILES with changes {name: value}) and a fake
    /proc holding a kernel thread, an idle process and the stats given."""
    ch = dict(changes)
    ksm = make_dir(name + "-ksm", [(n, ch.get(n, v), w) for n, v, w in KSM_FILES])
    proc = tmp(name + "-proc")
    for pid, text in [("2", ""), ("1", IDLE_STAT)] + list(stats):
        os.makedirs(os.path.join(proc, pid))
        with open(os.path.join(proc, pid, "ksm_stat"), "w") as f:
            f.write(text)
    os.makedirs(os.path.join(proc, "self"), exist_ok=True)   # not a pid: ignored
    return ksm, proc


def snapshot(d):
    """Every file's bytes and mtime: what 'nothing written' compares."""
    out = {}
    for name in sorted(os.listdir(d)):
        path = os.path.join(d, name)
        st = os.stat(path)
        # reset is write-only, as in sysfs: a normal user cannot read it,
        # so its size and mtime stand for its bytes.
        if not os.access(path, os.R_OK):
            out[name] = (st.st_size, st.st_mtime_ns)
            continue
        with open(path, "rb") as f:
            out[name] = (f.read(), st.st_mtime_ns)
    return out


def values(d):
    """{name: value} as the kernel would show it (the [selected] choice)."""
    return {n: live.read_value(os.path.join(d, n)) for n in os.listdir(d)
            if n != "reset"}


class WriteLog:
    """Record live.write_value calls (path basename, value), optionally with
    a fake kernel's side effect, while still writing the file."""

    def __init__(self, effect=None):
        self.log, self.effect = [], effect

    def __enter__(self):
        self.orig = live.write_value

        def write(path, value):
            self.log.append((os.path.basename(path), str(value)))
            self.orig(path, value)
            if self.effect:
                self.effect(path, value)
        live.write_value = write
        return self

    def __exit__(self, *exc):
        live.write_value = self.orig


def not_allowed(fn):
    """The NotAllowed message fn raises, or None if it does not."""
    try:
        fn()
    except live.NotAllowed as e:
        return str(e)
    return None


# ---------------------------------------------------------------------------
# live.ksm_session
# ---------------------------------------------------------------------------
@test("ksm guard")
def ksm_off_unless_asked():
    ksm, proc = fake_ksm("off")
    before = snapshot(ksm)
    for env in ({}, {"KSMSCAN_LIVE_TESTS": "0"}, {"KSMSCAN_LIVE_TESTS": "yes"}):
        why = not_allowed(lambda: live.ksm_session(root=ksm, proc=proc, env=env))
        check(why is not None and "KSMSCAN_LIVE_TESTS=1" in why,
              "env %r: NotAllowed saying KSMSCAN_LIVE_TESTS=1" % env, repr(why))
    eq(snapshot(ksm), before, "KSM off: nothing written")
    why = not_allowed(lambda: live.ksm_session(root=ksm, proc=proc, env=ON))
    eq(why, None, "KSMSCAN_LIVE_TESTS=1 and an idle fake KSM: the session is allowed")


@test("ksm guard")
def ksm_not_idle_skips_without_writing():
    busy = [
        ("run=1", {"run": "1"}, (), "run=1"),
        ("run=2", {"run": "2"}, (), "run=2"),
        ("pages_sharing", {"pages_sharing": "5"}, (), "pages_sharing=5"),
        ("pages_shared", {"pages_shared": "1"}, (), "pages_shared=1"),
        ("ksm_zero_pages", {"ksm_zero_pages": "3"}, (), "ksm_zero_pages=3"),
        ("rmap_items", {}, [("4242", IDLE_STAT.replace("rmap_items 0", "rmap_items 12"))],
         "process 4242 has KSM state (ksm_rmap_items 12)"),
        ("merging", {}, [("77", IDLE_STAT.replace("merging_pages 0", "merging_pages 9"))],
         "process 77 has KSM state (ksm_merging_pages 9)"),
        ("mergeable", {}, [("31337", IDLE_STAT.replace("mergeable: no", "mergeable: yes"))],
         "process 31337 has KSM state (ksm_mergeable yes)"),
        ("merge_any", {}, [("5", IDLE_STAT.replace("merge_any: no", "merge_any: yes"))],
         "process 5 has KSM state (ksm_merge_any yes)"),
    ]
    for label, changes, stats, cause in busy:
        ksm, proc = fake_ksm("busy-" + label, changes, stats)
        before = snapshot(ksm)
        with WriteLog() as w:
            why = not_allowed(lambda: live.ksm_session(root=ksm, proc=proc, env=ON))
        check(why is not None and "not idle" in why and cause in why,
              "%s: NotAllowed naming %r" % (label, cause), repr(why))
        eq(w.log, [], "%s: no write attempted" % label)
        eq(snapshot(ksm), before, "%s: every file as before (bytes, mtime)" % label)


@test("ksm guard")
def ksm_restore_order_and_values():
    ksm, proc = fake_ksm("restore")
    entry = values(ksm)
    # run first: restore must still write it last, whatever the order of set()
    wanted = [("run", 1), ("max_page_sharing", 4), ("use_zero_pages", 1),
              ("merge_across_nodes", 1), ("smart_scan", 0), ("advisor_mode", "scan-time"),
              ("pages_to_scan", 10000), ("sleep_millisecs", 10)]
    with WriteLog() as w:
        with live.ksm_session(root=ksm, proc=proc, env=ON) as ks:
            for name, value in wanted:
                ks.set(name, value)
            inside = values(ksm)
            started = ks.started()
            unmerged = ks.unmerge()        # run=2 (it started KSM), counters 0
            eq(values(ksm)["run"], 2, "unmerge() of a session that started KSM writes run=2")
            ks.set("run", 1)
            w.log.clear()
    for name, value in wanted:
        eq(inside[name], value, "inside the session: %s=%s written" % (name, value))
    check(started and unmerged, "the session knows it started KSM; unmerge() with counters 0")
    eq(values(ksm), entry, "after the session: every file has its value at entry")
    changed = [n for n, _ in wanted if entry[n] != dict(wanted)[n]]
    restores = [n for n, _ in w.log]
    eq(restores[0] if restores else None, "run", "restore writes run first (run=2)")
    eq(w.log[0][1] if w.log else None, "2", "... with run=2")
    eq(restores[-1] if restores else None, "run", "restore writes run last")
    eq(w.log[-1][1] if w.log else None, "0", "... back to run=0")
    eq(sorted(set(restores) - {"run"}), sorted(set(changed) - {"run"}),
       "restore writes exactly the settings that changed")
    eq(ks.problems, [], "no restore problems")
    eq(ks.changed(), [], "changed() is empty after the session")


@test("ksm guard")
def ksm_unmerges_after_stopping_itself():
    """A session that started KSM and stopped it again (run=1, then 0) still
    unmerges at the end: what ksmd merged while it ran stays merged."""
    ksm, proc = fake_ksm("stopped")
    with WriteLog() as w:
        with live.ksm_session(root=ksm, proc=proc, env=ON) as ks:
            ks.set("run", 1)
            ks.set("run", 0)
            w.log.clear()
    eq([v for n, v in w.log if n == "run"][:1], ["2"],
       "run=1 then run=0 inside: restore writes run=2 first")
    eq(values(ksm)["run"], 0, "... and run=0 last")


@test("ksm guard")
def ksm_never_writes_run_unless_started():
    ksm, proc = fake_ksm("norun")
    with WriteLog() as w:
        with live.ksm_session(root=ksm, proc=proc, env=ON) as ks:
            ks.set("pages_to_scan", 5000)
            ok = ks.unmerge()
    check(ok, "unmerge() with nothing merged reports success")
    eq([x for x in w.log if x[0] == "run"], [], "a session that did not start KSM never writes run")
    eq(w.log, [("pages_to_scan", "5000"), ("pages_to_scan", "100")],
       "only the setting it changed, then its restore")


@test("ksm guard")
def ksm_restore_on_exception():
    ksm, proc = fake_ksm("exc")
    entry = values(ksm)
    raised = None
    try:
        with live.ksm_session(root=ksm, proc=proc, env=ON) as ks:
            ks.set("sleep_millisecs", 10)
            ks.set("run", 1)
            raise ValueError("boom")
    except ValueError as e:
        raised = str(e)
    eq(raised, "boom", "the exception goes through the session")
    eq(values(ksm), entry, "settings restored after an exception")


@test("ksm guard")
def ksm_restore_reports_what_fails():
    """A setting that cannot go back (here: the fake file replaced by a
    folder) is a problem the session reports, not a silent loss."""
    ksm, proc = fake_ksm("fails")
    with live.ksm_session(root=ksm, proc=proc, env=ON) as ks:
        ks.set("pages_to_scan", 77)
        os.remove(os.path.join(ksm, "pages_to_scan"))
        os.mkdir(os.path.join(ksm, "pages_to_scan"))
    check([p[0] for p in ks.problems] == ["pages_to_scan"],
          "restore reports the setting it could not write back", repr(ks.problems))


CHILD = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
import live
root, proc, mode = sys.argv[2], sys.argv[3], sys.argv[4]
env = {"KSMSCAN_LIVE_TESTS": "1"}
if mode == "with":
    try:
        with live.ksm_session(root=root, proc=proc, env=env) as ks:
            for kv in sys.argv[5:]:
                k, v = kv.split("=")
                ks.set(k, int(v))
            print("ready", flush=True)
            time.sleep(60)
    finally:
        print("finally ran", flush=True)
else:   # atexit: entered by hand, never left by a with statement
    ks = live.ksm_session(root=root, proc=proc, env=env).__enter__()
    for kv in sys.argv[5:]:
        k, v = kv.split("=")
        ks.set(k, int(v))
    print("ready", flush=True)
    time.sleep(60)
"""


def signalled_child(name, mode, sig):
    ksm, proc = fake_ksm(name)
    entry = values(ksm)
    sets = ["pages_to_scan=9999", "sleep_millisecs=1", "use_zero_pages=1",
            "max_page_sharing=4", "run=1"]
    p = subprocess.Popen([sys.executable, "-c", CHILD, HERE, ksm, proc, mode] + sets,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline().strip()
        inside = values(ksm)
        p.send_signal(sig)
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    what = "%s, %s" % (mode, signal.Signals(sig).name)
    eq(line, "ready", "%s: the child entered the session" % what)
    eq({k: inside[k] for k in ("pages_to_scan", "sleep_millisecs", "use_zero_pages",
                               "max_page_sharing", "run")},
       {"pages_to_scan": 9999, "sleep_millisecs": 1, "use_zero_pages": 1,
        "max_page_sharing": 4, "run": 1}, "%s: the settings were changed inside" % what)
    eq(p.returncode, 128 + sig, "%s: the child exits with 128 + signal" % what)
    check("Traceback" not in err, "%s: no traceback" % what, err[-300:])
    if mode == "with":
        check("finally ran" in out, "%s: the child's finally: ran" % what, repr(out))
    eq(values(ksm), entry, "%s: every setting back to its value at entry" % what)


@test("ksm guard")
def ksm_sigterm_restores():
    signalled_child("sigterm", "with", signal.SIGTERM)


@test("ksm guard")
def ksm_sigint_restores():
    signalled_child("sigint", "with", signal.SIGINT)


@test("ksm guard")
def ksm_atexit_restores():
    signalled_child("atexit", "atexit", signal.SIGTERM)


# ---------------------------------------------------------------------------
# live.zram_session
# ---------------------------------------------------------------------------
def fake_zram(name, changes=()):
    ch = dict(changes)
    root = tmp(name + "-block")
    os.makedirs(root)
    make_dir(name + "-block/zram0", [(n, ch.get(n, v), w) for n, v, w in ZRAM_FILES])
    reset = os.path.join(root, "zram0", "reset")
    with open(reset, "w"):
        pass
    os.chmod(reset, 0o200)
    return root


def kernel_reset(path, value):
    """The fake kernel: writing 1 to reset gives the device disksize 0."""
    if os.path.basename(path) == "reset" and str(value) == "1":
        with open(os.path.join(os.path.dirname(path), "disksize"), "w") as f:
            f.write("0\n")


@test("zram guard")
def zram_off_or_busy_skips_without_writing():
    root = fake_zram("zoff")
    dev = os.path.join(root, "zram0")
    before = snapshot(dev)
    why = not_allowed(lambda: live.zram_session(root=root, env={}))
    check(why and "KSMSCAN_LIVE_TESTS=1" in why, "zram off unless KSMSCAN_LIVE_TESTS=1", repr(why))
    why = not_allowed(lambda: live.zram_session(device="zram7", root=root, env=ON))
    check(why and "zram7 missing" in why, "a missing device: NotAllowed naming it", repr(why))
    busy = fake_zram("zbusy", {"disksize": "1073741824"})
    bdev = os.path.join(busy, "zram0")
    bbefore = snapshot(bdev)
    with WriteLog() as w:
        why = not_allowed(lambda: live.zram_session(root=busy, env=ON))
    check(why and "disksize=1073741824" in why, "a device with a size: NotAllowed naming it",
          repr(why))
    eq(w.log, [], "busy zram: no write attempted")
    eq(snapshot(bdev), bbefore, "busy zram: every file as before")
    eq(snapshot(dev), before, "zram off: every file as before")
    eq(not_allowed(lambda: live.zram_session(root=root, env=ON)), None,
       "an idle device (disksize 0) with KSMSCAN_LIVE_TESTS=1: allowed")


@test("zram guard")
def zram_restore_resets_first():
    root = fake_zram("zrestore")
    dev = os.path.join(root, "zram0")
    entry = values(dev)
    with WriteLog(kernel_reset) as w:
        with live.zram_session(root=root, env=ON) as z:
            z.set("comp_algorithm", "zstd")
            z.set("max_comp_streams", 1)
            z.set("disksize", 1 << 20)
            inside = values(dev)
            w.log.clear()
    eq((inside["comp_algorithm"], inside["max_comp_streams"], inside["disksize"]),
       ("zstd", 1, 1 << 20), "inside the session: the settings were written")
    eq(w.log[0] if w.log else None, ("reset", "1"), "restore writes reset=1 first")
    eq(sorted(n for n, _ in w.log[1:]), ["comp_algorithm", "max_comp_streams"],
       "then the other changed settings (disksize goes back by reset)")
    eq(values(dev), entry, "after the session: every file has its value at entry")
    eq(z.problems, [], "no problems")
    # A reset that does not empty the device is reported.
    root = fake_zram("zstuck")
    with WriteLog() as w:          # no fake kernel: disksize stays
        with live.zram_session(root=root, env=ON) as z:
            z.set("disksize", 4096)
    eq(z.problems, [("disksize", 0, 4096)], "a reset that leaves a size is a problem")


# --- tests/with_ksm_running.py --------------------------------------------------

WITH_KSM = os.path.join(HERE, "with_ksm_running.py")


class FakeKernel:
    """A thread that plays ksmd on a fake KSM folder: run=1 merges 40 pages
    (pages_sharing 40), run=2 unmerges them; it notes every run value seen."""

    def __init__(self, ksm):
        import threading
        self.ksm, self.seen, self.stop = ksm, [], False
        self.t = threading.Thread(target=self.loop, daemon=True)
        self.t.start()

    def put(self, name, value):
        path = os.path.join(self.ksm, name)
        os.chmod(path, 0o644)
        with open(path, "w") as f:
            f.write("%d\n" % value)
        os.chmod(path, 0o444)

    def loop(self):
        import time
        while not self.stop:
            run = live.read_value(os.path.join(self.ksm, "run"))
            if run == "":
                continue                  # read while being written
            if not self.seen or self.seen[-1] != run:
                self.seen.append(run)
                self.put("pages_sharing", 40 if run == 1 else 0)
                self.put("pages_shared", 1 if run == 1 else 0)
            time.sleep(0.005)

    def end(self):
        """Stop, and note the last value written (the thread sleeps between
        looks: on a loaded machine the script may end between two)."""
        self.stop = True
        self.t.join()
        run = live.read_value(os.path.join(self.ksm, "run"))
        if run != "" and (not self.seen or self.seen[-1] != run):
            self.seen.append(run)


def with_ksm(name, cmd, env_on=True, **kw):
    ksm, proc = fake_ksm(name)
    env = dict(os.environ, **(ON if env_on else {}))
    if not env_on:
        env.pop("KSMSCAN_LIVE_TESTS", None)
    args = [sys.executable, WITH_KSM, "--ksm-root=" + ksm, "--proc=" + proc] + cmd
    return ksm, subprocess.Popen(args, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, **kw)


@test("with-ksm")
def with_ksm_running_off_by_default():
    marker = tmp("wk-off-ran")
    ksm, p = with_ksm("wk-off", ["touch", marker], env_on=False)
    before = snapshot(ksm)
    out = p.communicate(timeout=60)[0]
    eq(p.returncode, 0, "without KSMSCAN_LIVE_TESTS=1: exit 0")
    check(len(out.splitlines()) == 1 and "SKIP" in out and "KSMSCAN_LIVE_TESTS" in out,
          "one SKIP line naming the variable", out)
    check(not os.path.exists(marker), "the command is not run")
    eq(snapshot(ksm), before, "nothing written")


@test("with-ksm")
def with_ksm_running_runs_and_restores():
    seen = tmp("wk-seen")
    ksm, proc = fake_ksm("wk")
    kernel = FakeKernel(ksm)
    before = values(ksm)
    cmd = ["sh", "-c", 'cat "%s/run" "%s/pages_sharing" > "%s"; env > "%s.env"; exit 3'
           % (ksm, ksm, seen, seen)]
    r = subprocess.run([sys.executable, WITH_KSM, "--ksm-root=" + ksm, "--proc=" + proc] + cmd,
                       env=dict(os.environ, **ON), capture_output=True, text=True, timeout=120)
    kernel.end()
    eq(r.returncode, 3, "the exit status is the command's (%s)" % r.stdout[-300:])
    with open(seen) as f:
        eq(f.read().split(), ["1", "40"], "during the command: run=1 and pages merged")
    with open(seen + ".env") as f:
        check("KSMSCAN_LIVE_TESTS=" not in f.read(), "the command runs without "
              "KSMSCAN_LIVE_TESTS (its live suites skip, nothing changes KSM)")
    eq(kernel.seen, [0, 1, 2, 0], "run: 0, then 1, then 2 (unmerge: it started KSM), then 0")
    eq(values(ksm), before, "every setting back as it was")


@test("with-ksm")
def with_ksm_running_restores_on_sigterm():
    import time
    marker = tmp("wk-term-ran")
    ksm, proc = fake_ksm("wk-term")
    kernel = FakeKernel(ksm)
    before = values(ksm)
    p = subprocess.Popen([sys.executable, WITH_KSM, "--ksm-root=" + ksm, "--proc=" + proc,
                          "sh", "-c", 'touch "%s"; exec sleep 60' % marker],
                         env=dict(os.environ, **ON), stdout=subprocess.PIPE, text=True)
    for _ in range(600):
        if os.path.exists(marker):
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    try:
        p.communicate(timeout=90)
    finally:
        kernel.end()
    eq(p.returncode, 128 + signal.SIGTERM, "SIGTERM: exit 143")
    eq(kernel.seen[-2:], [2, 0], "SIGTERM: unmerged (run=2), then run=0")
    eq(values(ksm), before, "SIGTERM: every setting back as it was")


def main():
    return run_suite("ksmscan-guards-")


if __name__ == "__main__":
    sys.exit(main())
