"""QEMU guests for the live suites: N guests booted from one Linux kernel and
one initramfs, their RAM marked mergeable (`-machine mem-merge=on`), the
case KSM exists for.

    with guests.Guests(3, thp=False) as g:     # or guests.Missing (why)
        pids = g.pids                           # QEMU's pids, for ksmscan -p

What it needs, and where it comes from:
  - qemu-system-x86_64 (Debian's qemu-system-x86) and busybox-static: the
    APPS list of scripts/install-deps, which `make test-apps` (and so CI)
    installs;
  - a Debian kernel: not installed on the host.  The first run does
    `apt-get download` of the package linux-image-amd64 depends on and
    unpacks its image (dpkg-deb, like `dpkg -x` of boot/ alone: the
    modules are 400 MB the guests never load) into build/guests/ (no root
    needed); later runs reuse it;
    $KSMSCAN_GUEST_KERNEL names another bzImage instead.
The initramfs is written here (a cpio "newc" archive: busybox and an init
that prints READY on the serial console and then sleeps), so every guest
holds the same kernel, the same files and an idle system.

Each guest: 384 MiB, one CPU, KVM where /dev/kvm opens and TCG otherwise,
`-nographic` with no default devices (no network, no disk), the serial
console written to a file that is read to know when the guest has booted
(bounded wait).  thp=True is QEMU's default, which madvises guest RAM
MADV_HUGEPAGE (on a host whose THP is `madvise` or `always`, guest RAM then
sits in transparent huge pages); thp=False runs QEMU under
prctl(PR_SET_THP_DISABLE), set in the child before exec (it is kept across
execve), so guest RAM is in 4 KiB pages whatever the host's setting.
Guests die with the Guests object: on leaving the `with`, at interpreter
exit, on SIGTERM/SIGINT/SIGHUP (turned into SystemExit), and, should the
test die by SIGKILL, by PR_SET_PDEATHSIG.
"""
import atexit
import ctypes
import glob
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(ROOT, "build", "guests")
QEMU = "qemu-system-x86_64"
BUSYBOX = ("/bin/busybox", "/usr/bin/busybox")
READY = "KSMSCAN-GUEST-READY"
MEMORY_MIB = 384
BOOT_TIMEOUT = 300          # seconds for every guest to print READY (TCG, busy host)
SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
PR_SET_PDEATHSIG = 1
PR_SET_THP_DISABLE = 41
# nokaslr: the kernel at the same place in every guest, as one image would be.
# no_timer_check: under TCG on a busy host the guest's check of the IO-APIC
# timer can miss its ticks and panic ("IO-APIC + timer doesn't work!").
APPEND = "console=ttyS0 quiet nokaslr no_timer_check panic=-1 rdinit=/init"
INIT = """#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox echo %s
exec /bin/busybox sleep 2147483647
""" % READY


class Missing(Exception):
    """A part the guests need is not here; str() says which and how to get it."""


def _run(cmd, timeout=300, cwd=None):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)


def kernel(cache=CACHE, env=None):
    """The path of a bzImage: $KSMSCAN_GUEST_KERNEL, or Debian's, downloaded
    and unpacked into @cache once."""
    env = os.environ if env is None else env
    if env.get("KSMSCAN_GUEST_KERNEL"):
        path = env["KSMSCAN_GUEST_KERNEL"]
        if not os.path.isfile(path):
            raise Missing("KSMSCAN_GUEST_KERNEL=%s: no such file" % path)
        return path
    found = sorted(glob.glob(os.path.join(cache, "kernel", "boot", "vmlinuz-*")))
    if found:
        return found[-1]
    if not shutil.which("apt-get") or not shutil.which("dpkg"):
        raise Missing("no guest kernel in %s and no apt-get to download one "
                      "(or set KSMSCAN_GUEST_KERNEL)" % cache)
    r = _run(["apt-cache", "depends", "linux-image-amd64"])
    deps = [l.split(":", 1)[1].strip() for l in r.stdout.splitlines()
            if l.strip().startswith("Depends:") and "linux-image-" in l]
    if not deps:
        raise Missing("apt-cache knows no linux-image-amd64 (apt-get update?): "
                      "no guest kernel (or set KSMSCAN_GUEST_KERNEL)")
    os.makedirs(cache, exist_ok=True)
    work = tempfile.mkdtemp(dir=cache)
    try:
        os.chmod(work, 0o755)               # apt's _apt user writes here when root
        r = _run(["apt-get", "download", deps[0]], cwd=work)
        debs = glob.glob(os.path.join(work, "*.deb"))
        if r.returncode or not debs:
            raise Missing("apt-get download %s failed: %s" % (
                deps[0], (r.stderr.strip().splitlines() or ["?"])[-1]))
        # Only the image: the package's modules are 400 MB the guests never load.
        os.makedirs(os.path.join(work, "kernel"))
        r = _run(["sh", "-c", 'dpkg-deb --fsys-tarfile "$1" | '
                  'tar -x -C "$2" --wildcards "./boot/vmlinuz-*"', "sh", debs[0],
                  os.path.join(work, "kernel")])
        if r.returncode or not glob.glob(os.path.join(work, "kernel", "boot", "vmlinuz-*")):
            raise Missing("unpacking %s failed: %s" % (debs[0], r.stderr.strip()))
        os.rename(os.path.join(work, "kernel"), os.path.join(cache, "kernel"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return kernel(cache, env)


def _cpio_entry(name, mode, data=b"", rdev=(0, 0), ino=1):
    """One "newc" member: the header's 13 fields in hex, the name and the
    data each padded to 4 bytes."""
    fields = (ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(name) + 1, 0)
    head = b"070701" + b"".join(b"%08X" % f for f in fields) + name.encode() + b"\0"
    head += b"\0" * (-len(head) % 4)
    return head + data + b"\0" * (-len(data) % 4)


def initramfs(path, busybox):
    """Write the guests' initramfs to @path: /init, busybox, /proc, /dev/console."""
    with open(busybox, "rb") as f:
        bb = f.read()
    members = [("bin", stat.S_IFDIR | 0o755, b"", (0, 0)),
               ("dev", stat.S_IFDIR | 0o755, b"", (0, 0)),
               ("dev/console", stat.S_IFCHR | 0o600, b"", (5, 1)),
               ("proc", stat.S_IFDIR | 0o755, b"", (0, 0)),
               ("bin/busybox", stat.S_IFREG | 0o755, bb, (0, 0)),
               ("init", stat.S_IFREG | 0o755, INIT.encode(), (0, 0))]
    out = b"".join(_cpio_entry(n, m, d, r, i + 1) for i, (n, m, d, r) in enumerate(members))
    out += _cpio_entry("TRAILER!!!", 0, b"", (0, 0), 0)
    with open(path, "wb") as f:
        f.write(out + b"\0" * (-len(out) % 512))


def accelerator():
    """"kvm" when /dev/kvm opens for read and write, otherwise "tcg"."""
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR))
        return "kvm"
    except OSError:
        return "tcg"


def parts(env=None):
    """(qemu, busybox, kernel) or Missing with the first part that is not here."""
    qemu = shutil.which(QEMU)
    if not qemu:
        raise Missing("%s missing: scripts/install-deps (Debian's qemu-system-x86)" % QEMU)
    bb = next((b for b in BUSYBOX if os.access(b, os.X_OK)), None)
    if not bb:
        raise Missing("busybox missing: scripts/install-deps (Debian's busybox-static)")
    return qemu, bb, kernel(env=env)


def _child_setup(thp):
    """In the child before exec: die with the parent; THP off when asked."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if not thp and libc.prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0:
        os._exit(126)


class Guests:
    """N guests booted and idle; .pids, .boot_seconds, .accel, .thp."""

    def __init__(self, n=3, thp=False, memory_mib=MEMORY_MIB, timeout=BOOT_TIMEOUT,
                 env=None):
        self.n, self.thp, self.memory_mib, self.timeout = n, thp, memory_mib, timeout
        self.qemu, self.busybox, self.kernel = parts(env)
        self.accel = accelerator()
        self.procs = []
        self.dir = None
        self.boot_seconds = None

    @property
    def pids(self):
        return [p.pid for p in self.procs]

    def command(self, i):
        accel = self.accel if self.accel == "kvm" else "tcg,tb-size=64"
        return [self.qemu, "-machine", "pc,mem-merge=on", "-accel", accel,
                "-m", str(self.memory_mib), "-smp", "1", "-nodefaults", "-nographic",
                "-monitor", "none", "-serial", "file:" + self.console(i),
                "-no-reboot", "-kernel", self.kernel,
                "-initrd", os.path.join(self.dir, "initrd.cpio"), "-append", APPEND]

    def console(self, i):
        return os.path.join(self.dir, "console-%d.log" % i)

    def read_console(self, i):
        try:
            with open(self.console(i), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def __enter__(self):
        self._old = {s: signal.signal(s, self._on_signal) for s in SIGNALS}
        atexit.register(self.stop)
        try:
            self.start()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        for s, h in getattr(self, "_old", {}).items():
            signal.signal(s, h)
        self._old = {}
        return False

    @staticmethod
    def _on_signal(signum, frame):
        raise SystemExit(128 + signum)

    def start(self):
        """Boot every guest at once and wait (bounded) for each READY line."""
        self.dir = tempfile.mkdtemp(prefix="ksmscan-guests-")
        initramfs(os.path.join(self.dir, "initrd.cpio"), self.busybox)
        t0 = time.time()
        for i in range(self.n):
            self.procs.append(subprocess.Popen(
                self.command(i), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=open(os.path.join(self.dir, "qemu-%d.err" % i), "w"),
                preexec_fn=lambda: _child_setup(self.thp)))
        waiting = set(range(self.n))
        while waiting and time.time() - t0 < self.timeout:
            for i in sorted(waiting):
                if READY in self.read_console(i):
                    waiting.discard(i)
                elif self.procs[i].poll() is not None:
                    raise RuntimeError("guest %d: QEMU exited (%s): %s" % (
                        i, self.procs[i].returncode, self.error(i)))
            time.sleep(0.2)
        if waiting:
            raise RuntimeError("guests %s did not boot in %d s; console: %r" % (
                sorted(waiting), self.timeout, self.read_console(min(waiting))[-300:]))
        self.boot_seconds = time.time() - t0

    def error(self, i):
        """QEMU's stderr, or the console's panic line and its end."""
        try:
            with open(os.path.join(self.dir, "qemu-%d.err" % i)) as f:
                err = f.read().strip()[-300:]
        except OSError:
            err = ""
        console = self.read_console(i)
        panic = [l for l in console.splitlines() if "panic" in l.lower()][:1]
        return err or " | ".join(panic + [console[-300:]])

    def stop(self):
        """Kill every guest (SIGKILL: nothing of theirs is kept) and wait."""
        atexit.unregister(self.stop)
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        self.procs = []
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


def ksm_stat(pid):
    """{name: int} of /proc/PID/ksm_stat (the kernel's per-process KSM figures)."""
    out = {}
    with open("/proc/%d/ksm_stat" % pid) as f:
        for line in f:
            k, _, v = line.partition(" ")
            if v.strip().lstrip("-").isdigit():
                out[k.rstrip(":")] = int(v)
    return out
