"""Guards for tests that change the running kernel's state.

A test that writes to /sys (KSM's knobs, a zram device) runs only when

  - the environment says so: KSMSCAN_LIVE_TESTS=1 (.ci/run sets it), and
  - the subsystem is idle, so that nothing else on the machine depends on it:
    KSM: run=0, pages_shared = pages_sharing = ksm_zero_pages = 0, and no
    process has KSM state (/proc/PID/ksm_stat: ksm_rmap_items,
    ksm_merging_pages or ksm_zero_pages non-zero, or ksm_mergeable /
    ksm_merge_any "yes": starting KSM would merge its pages);
    zram: the device exists and its disksize is 0 (not initialised, so not a
    swap device or a file system).

Otherwise the session raises NotAllowed with the reason, which the test
prints as a SKIP line.  Inside the session, set() changes a setting and
remembers its first value; on leaving (normally, by an exception, by SIGTERM,
SIGINT or SIGHUP, or at interpreter exit) every changed setting is written
back.  KSM: run=2 (unmerge) first, only if the session started KSM itself,
then the settings, run last.  zram: reset=1 first if the session gave the
device a size, then the settings.

The sysfs and /proc roots are parameters so that tests can point the guards
at a fake directory (tests/test_guards.py does).
"""
import atexit
import os
import signal
import time

KSM_ROOT = "/sys/kernel/mm/ksm"
ZRAM_ROOT = "/sys/block"
PROC = "/proc"
ENV_VAR = "KSMSCAN_LIVE_TESTS"
SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

# Counters that say KSM holds merged pages (any non-zero: not idle).
KSM_COUNTERS = ("pages_shared", "pages_sharing", "ksm_zero_pages")
# /proc/PID/ksm_stat lines that say a process has KSM state.
KSM_STAT_NUMBERS = ("ksm_rmap_items", "ksm_merging_pages", "ksm_zero_pages")
KSM_STAT_FLAGS = ("ksm_mergeable", "ksm_merge_any")


# The settings the forecasts' defaults stand for (KsmSession.plain()).
PLAIN = {"advisor_mode": "none", "max_page_sharing": 256, "use_zero_pages": 0,
         "merge_across_nodes": 1, "smart_scan": 1}


class NotAllowed(Exception):
    """The session may not change the kernel here; str() says why."""


def live_enabled(env=None):
    env = os.environ if env is None else env
    return env.get(ENV_VAR) == "1"


def read_value(path):
    """A sysfs value: an int, the [selected] word of a choice list such as
    advisor_mode's "[none] scan-time", or the text."""
    with open(path) as f:
        v = f.read().strip()
    if "[" in v and "]" in v:
        return v[v.index("[") + 1:v.index("]")]
    try:
        return int(v)
    except ValueError:
        return v


def write_value(path, value):
    with open(path, "w") as f:
        f.write("%s\n" % value)


def ksm_processes(proc=PROC):
    """[(pid, what)] of processes with KSM state, from /proc/PID/ksm_stat."""
    out = []
    try:
        pids = [p for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return out
    for pid in sorted(pids, key=int):
        try:
            with open(os.path.join(proc, pid, "ksm_stat")) as f:
                text = f.read()
        except OSError:
            continue                      # gone, a kernel thread, or no such file
        what = []
        for line in text.splitlines():
            key, _, val = line.partition(" ")
            key, val = key.rstrip(":"), val.strip()
            if key in KSM_STAT_NUMBERS and val.isdigit() and int(val):
                what.append("%s %s" % (key, val))
            elif key in KSM_STAT_FLAGS and val == "yes":
                what.append("%s yes" % key)
        if what:
            out.append((int(pid), ", ".join(what)))
    return out


def ksm_busy(root=KSM_ROOT, proc=PROC):
    """Why KSM is not idle, or None when it is."""
    run = read_value(os.path.join(root, "run"))
    if run != 0:
        return "KSM is running (run=%s)" % run
    for name in KSM_COUNTERS:
        path = os.path.join(root, name)
        if os.path.exists(path) and read_value(path) != 0:
            return "KSM holds merged pages (%s=%s)" % (name, read_value(path))
    procs = ksm_processes(proc)
    if procs:
        return "process %d has KSM state (%s)%s" % (
            procs[0][0], procs[0][1],
            " and %d more" % (len(procs) - 1) if len(procs) > 1 else "")
    return None


def zram_busy(dev):
    """Why the zram device (its sysfs folder) is not idle, or None."""
    if not os.path.isdir(dev):
        return "%s missing (no zram device)" % dev
    size = read_value(os.path.join(dev, "disksize"))
    if size != 0:
        return "%s is in use (disksize=%s)" % (dev, size)
    return None


def _settings(root):
    """{name: value} of every writable regular file in root (the knobs)."""
    out = {}
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        try:
            st = os.stat(path)
        except OSError:
            continue
        if os.path.isfile(path) and st.st_mode & 0o200:
            try:
                out[name] = read_value(path)
            except OSError:
                pass                      # write-only (zram's reset)
    return out


class Session:
    """Changes to one sysfs folder, remembered so that restore() undoes them."""

    # _undo_first() runs before the settings are written back (KSM: run=2
    # once the session started KSM; zram: reset=1 once it gave the device a size).
    last = ()             # names restored after all others (KSM: run)
    actions = ()          # writable files that are actions, not settings

    def __init__(self, root):
        self.root = root
        self.before = self.settings()     # every knob at entry, to compare at exit
        self.saved = {}                   # name -> first value, for those set()
        self.problems = []                # what restore() could not put back
        self.restored = False

    # The session is its own context manager.  Entering installs handlers
    # that turn SIGTERM/SIGINT/SIGHUP into SystemExit (so that every finally:
    # runs) and registers restore() at exit; leaving restores, holding any
    # such signal until the restore is done.
    def __enter__(self):
        self._old = {s: signal.signal(s, self._on_signal) for s in SIGNALS}
        atexit.register(self._leave)
        return self

    def __exit__(self, *exc):
        self._leave()
        return False

    @staticmethod
    def _on_signal(signum, frame):
        raise SystemExit(128 + signum)

    def _leave(self):
        atexit.unregister(self._leave)
        pending = []
        for s in SIGNALS:
            signal.signal(s, lambda signum, frame: pending.append(signum))
        try:
            self.restore()
        finally:
            for s, h in self._old.items():
                signal.signal(s, h)
        if pending:
            raise SystemExit(128 + pending[0])

    def path(self, name):
        return os.path.join(self.root, name)

    def has(self, name):
        return os.path.exists(self.path(name))

    def read(self, name):
        return read_value(self.path(name))

    def set(self, name, value):
        """Write a setting (remembering its first value); False if absent."""
        if not self.has(name):
            return False
        if name not in self.saved:
            self.saved[name] = self.read(name)
        if self.read(name) != value:
            write_value(self.path(name), value)
        return True

    def settings(self):
        return {k: v for k, v in _settings(self.root).items() if k not in self.actions}

    def changed(self):
        """[(name, before, now)] of every knob that differs from entry."""
        now = self.settings()
        return [(k, v, now.get(k)) for k, v in self.before.items() if now.get(k) != v]

    def _undo_first(self):
        pass

    def restore(self):
        """Put back every setting set() changed; idempotent.  Returns the
        problems: [(name, wanted, got or error)]."""
        if self.restored:
            return self.problems
        self.problems = []
        try:
            self._undo_first()
        except OSError as e:
            self.problems.append(("undo", "done", str(e)))
        names = [n for n in self.saved if n not in self.last] + \
            [n for n in self.last if n in self.saved]
        for name in names:
            want = self.saved[name]
            try:
                if self.read(name) != want:
                    write_value(self.path(name), want)
                got = self.read(name)
            except OSError as e:
                got = "error: %s" % e
            if got != want:
                self.problems.append((name, want, got))
        self.restored = True
        return self.problems


class KsmSession(Session):
    last = ("run",)
    ran = False           # the session wrote run=1 while run was 0 at entry

    def set(self, name, value):
        if name == "run" and value == 1 and self.saved.get("run", self.read("run")) == 0:
            self.ran = True
        return Session.set(self, name, value)

    def started(self):
        """Did this session start KSM (run was 0 at entry, and it wrote 1,
        even if it stopped ksmd again since: what ksmd merged stays)?"""
        return self.saved.get("run") == 0 and self.ran

    def counters(self):
        return {k: self.read(k) for k in KSM_COUNTERS if self.has(k)}

    def plain(self, **more):
        """KSM as the forecasts model it by default: no advisor, the
        default max_page_sharing, no zero pages, across NUMA nodes,
        smart_scan; then @more."""
        for n, v in dict(PLAIN, **more).items():
            self.set(n, v)

    def unmerge(self, timeout=30):
        """run=2, only once this session has started KSM; then wait until
        the counters are 0.  True when nothing is merged."""
        if self.started():
            self.set("run", 2)
            deadline = time.time() + timeout
            while any(self.counters().values()) and time.time() < deadline:
                time.sleep(0.05)
        return not any(self.counters().values())

    def _undo_first(self):
        if self.started() and not self.unmerge():
            self.problems.append(("run=2", "counters 0", repr(self.counters())))


class ZramSession(Session):
    actions = ("reset", "compact", "idle", "writeback", "recompress", "mem_used_max")

    def read(self, name):
        """comp_algorithm reads as the one selected ("[lzo-rle] lzo lz4" ->
        "lzo-rle"): that is what set() saves and restore() writes back."""
        value = Session.read(self, name)
        if name == "comp_algorithm" and isinstance(value, str) and "[" in value:
            return value.split("[", 1)[1].split("]", 1)[0]
        return value

    def _undo_first(self):
        if "disksize" in self.saved and self.read("disksize") != 0:
            write_value(self.path("reset"), 1)
        self.saved.pop("disksize", None)      # reset is how it goes back to 0
        if self.read("disksize") != 0:
            self.problems.append(("disksize", 0, self.read("disksize")))


def ksm_session(root=KSM_ROOT, proc=PROC, env=None):
    """with ksm_session() as ks: ks.set(...) ... -- or NotAllowed (why)."""
    if not live_enabled(env):
        raise NotAllowed("tests that change KSM's settings run only with %s=1" % ENV_VAR)
    if not os.path.isdir(root):
        raise NotAllowed("%s missing (kernel without CONFIG_KSM)" % root)
    if not os.access(os.path.join(root, "run"), os.W_OK):
        raise NotAllowed("%s not writable (needs root)" % root)
    why = ksm_busy(root, proc)
    if why:
        raise NotAllowed("KSM is not idle: %s" % why)
    return KsmSession(root)


def zram_session(device="zram0", root=ZRAM_ROOT, env=None):
    """with zram_session() as z: z.set("disksize", ...) ... -- or NotAllowed."""
    if not live_enabled(env):
        raise NotAllowed("tests that change zram devices run only with %s=1" % ENV_VAR)
    dev = os.path.join(root, device)
    why = zram_busy(dev)
    if why:
        raise NotAllowed("zram is not idle: %s" % why)
    if not os.access(os.path.join(dev, "disksize"), os.W_OK):
        raise NotAllowed("%s not writable (needs root)" % dev)
    return ZramSession(dev)
