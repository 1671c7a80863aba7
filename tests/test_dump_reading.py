#!/usr/bin/python3
"""Defects of the dump layer (issue 12), each kept as a regression. Every
figure is computed here from the bytes the test wrote (or by `zstd -dc`),
never taken from an earlier run of ksmscan.

- ELF cores whose PT_LOAD segments share file bytes: the bytes are counted
  once, with one warning, and a file, a pipe and a zstd pipe of the same
  bytes give the same figures and exit status; so does a core whose last
  segment runs past the end (exit 1, one error line);
- a zstd-compressed kdump whose bitmap is mostly zero: its temporary copy
  stays sparse (it fits a small tmpfs as $TMPDIR);
- a truncated .zst: every page the decoder gives before the error counts;
- `ksmscan -` starts where standard input stands, and a second `-` finds it
  at its end;
- `-p` of a kernel thread, a zombie (also as nobody, through setpriv), and a permission problem as root: the
  message says which.
"""
import os, shutil, struct, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import (KSMSCAN, PAGE, SUMMARY_COLS, ZERO, check, eq, parse_csv,  # noqa: E402
                     proc_stat_fields, run_suite, skip, test, tmp)
import xxhash  # noqa: E402  (after ksmtest, which says what to install when it is missing)

TIMEOUT = 120


class Run:
    def __init__(self, cmd, p):
        self.cmd = " ".join(cmd)
        self.rc = p.returncode
        self.out = p.stdout.decode("utf-8", "replace")
        self.err = p.stderr.decode("utf-8", "replace")

    def lines(self):
        return self.err.splitlines()


def ksm(args, stdin=None, input=None, env=None, timeout=TIMEOUT, **kw):
    cmd = KSMSCAN + args
    try:
        p = subprocess.run(cmd, stdin=stdin, input=input, capture_output=True,
                           timeout=timeout, env=env, **kw)
    except subprocess.TimeoutExpired:
        check(False, "ksmscan %s finished within %d s" % (" ".join(args), timeout))
        return None
    return Run(cmd, p)


def summary(r, what):
    rows = parse_csv(r, what, SUMMARY_COLS) if r else None
    return rows[0] if rows else None


FIGURES = ["pages", "zero_pages", "distinct_pages", "pages_shared", "pages_sharing"]


def figures(row):
    return tuple(row[k] for k in FIGURES) if row else None


def oracle(pages):
    """pages, zero_pages, distinct_pages, pages_shared, pages_sharing of a
    list of page contents, KSM's default max_page_sharing 256."""
    counts = {}
    for p in pages:
        counts[p] = counts.get(p, 0) + 1
    shared = sharing = 0
    for c in counts.values():
        if c >= 2:
            k, r = divmod(c, 256)
            shared += k + (1 if r >= 2 else 0)
            sharing += c - -(-c // 256)
    return tuple(str(x) for x in (len(pages), sum(p == ZERO for p in pages),
                                  len(counts), shared, sharing))


def pages_report(r, what):
    """(address, xxh64) rows of a -r pages --csv -a xxh64 run."""
    lines = r.out.splitlines() if r else []
    if not check(lines and lines[0].startswith("input,address,zero,xxh64"),
                 what + ": pages report header", repr(r.out[:200] if r else None)):
        return None
    return [(int(l.split(",")[1], 16), l.split(",")[3]) for l in lines[1:]]


def xxh64(p):
    """As the pages report prints it in CSV: 0x-prefixed."""
    return "0x%016x" % xxhash.xxh64_intdigest(p, 0)


def zstd_bytes(data):
    return subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True,
                          check=True).stdout


def write(name, data):
    path = tmp(name)
    with open(path, "wb") as f:
        f.write(data)
    return path


# ---------------------------------------------------------------------------
# ELF cores whose segments share file bytes
# ---------------------------------------------------------------------------
def elf_core(segs, data, data_at):
    """An ELF64 core: segs = [(paddr, offset, filesz)] (offsets relative to
    data_at, where data is placed); program headers right after the header."""
    n = len(segs)
    phoff = 64
    assert data_at >= phoff + 56 * n
    out = bytearray(data_at)
    out[0:64] = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8) + struct.pack(
        "<HHIQQQIHHHHHH", 4, 62, 1, 0, phoff, 0, 0, 64, 56, n, 64, 0, 0)
    ph = bytearray()
    for paddr, off, filesz in segs:
        ph += struct.pack("<IIQQQQQQ", 1, 4, data_at + off, 0, paddr, filesz, filesz, PAGE)
    out[phoff:phoff + len(ph)] = ph
    return bytes(out) + data


def three_ways(path, data, args, what):
    """Run a file, a pipe and a zstd pipe of the same bytes."""
    res = {}
    for how, a, kw in (("file", [path], {}),
                       ("pipe", ["-"], {"input": data}),
                       ("zstd pipe", ["-"], {"input": zstd_bytes(data)})):
        res[how] = ksm(args + a, **kw)
    return res


@test("elf")
def elf_segments_share_file_bytes():
    """20000 segments over the same 64 pages: 64 pages, one warning, the
    same figures and exit status from a file, a pipe and zstd."""
    npages, nseg = 64, 20000
    blobs = [bytes([i % 7]) * PAGE if i % 3 else os.urandom(PAGE) for i in range(npages)]
    data = b"".join(blobs)
    data_at = (64 + 56 * nseg + PAGE - 1) // PAGE * PAGE
    segs = [(0x1000000 * (i + 1), 0, len(data)) for i in range(nseg)]
    img = elf_core(segs, data, data_at)
    path = write("shared.elf", img)
    exp = oracle(blobs)
    t0 = time.time()
    res = three_ways(path, img, ["--csv", "-a", "xxh64"], "shared bytes")
    check(time.time() - t0 < 30, "shared file bytes: three scans within 30 s",
          "%.1f s" % (time.time() - t0))
    for how, r in res.items():
        if not r:
            continue
        eq(r.rc, 0, "shared file bytes (%s): exit status" % how)
        eq(figures(summary(r, how)), exp, "shared file bytes (%s): counted once" % how)
        lines = r.lines()
        eq(len(lines), 1, "shared file bytes (%s): one line on standard error" % how)
        check(lines and "segment" in lines[0] and "at offset" in lines[0]
              and lines[0].startswith("ksmscan: "),
              "shared file bytes (%s): the warning names the overlap and offset" % how,
              repr(lines[:2]))
    r = ksm(["-r", "pages", "--csv", "-a", "xxh64", path])
    rows = pages_report(r, "shared file bytes -r pages")
    if rows is not None:
        eq(rows, [(0x1000000 + k * PAGE, xxh64(b)) for k, b in enumerate(blobs)],
           "shared file bytes: the pages are the first segment's, each once")


@test("elf")
def elf_segments_overlap_in_part():
    """Segment B starts two pages into segment A (4 pages each): B adds
    only its last two pages; file and streams agree."""
    blobs = [os.urandom(PAGE) for _ in range(6)]
    data = b"".join(blobs)
    segs = [(0x200000, PAGE * 2, 4 * PAGE), (0x100000, 0, 4 * PAGE)]
    img = elf_core(segs, data, PAGE)
    path = write("part.elf", img)
    exp_pages = [(0x100000 + k * PAGE, xxh64(blobs[k])) for k in range(4)] + \
                [(0x200000 + k * PAGE, xxh64(blobs[2 + k])) for k in (2, 3)]
    res = three_ways(path, img, ["-r", "pages", "--csv", "-a", "xxh64"], "part")
    for how, r in res.items():
        if not r:
            continue
        eq(r.rc, 0, "partial overlap (%s): exit status" % how)
        eq(pages_report(r, "partial overlap " + how), exp_pages,
           "partial overlap (%s): overlapping pages once" % how)
        eq(len(r.lines()), 1, "partial overlap (%s): one warning" % how)


@test("elf")
def elf_segment_past_end():
    """A segment claims more than the file holds: its whole pages past the
    end (8 pages claimed, 3 and a bit there), or only the partial page after
    its whole pages. A file and a stream count the same pages, exit 1, one
    error line."""
    blobs = [os.urandom(PAGE) for _ in range(5)]
    cases = (("whole pages missing", 8 * PAGE, PAGE + 5 * PAGE + 100),
             ("partial page missing", 3 * PAGE + 100, PAGE + 5 * PAGE + 50))
    for label, filesz, cut in cases:
        segs = [(0x100000, 0, 2 * PAGE), (0x400000, 2 * PAGE, filesz)]
        img = elf_core(segs, b"".join(blobs), PAGE)[:cut]
        path = write("cut.elf", img)
        exp = oracle(blobs)
        res = three_ways(path, img, ["--csv", "-a", "xxh64"], label)
        for how, r in res.items():
            if not r:
                continue
            what = "segment past the end, %s (%s)" % (label, how)
            eq(r.rc, 1, what + ": exit status")
            eq(figures(summary(r, how)), exp, what + ": the pages that are there")
            lines = r.lines()
            eq(len(lines), 1, what + ": one line on standard error")
            check(lines and lines[0].startswith("ksmscan: ") and "past the end" in lines[0]
                  and lines[0].endswith("at offset %d" % len(img)),
                  what + ": the line says so, at the end of the file", repr(lines[:2]))


# ---------------------------------------------------------------------------
# zstd: the temporary copy of a kdump, and truncated streams
# ---------------------------------------------------------------------------
def kdump_image(half_blocks, present):
    """A kdump-compressed dump (header version 6) whose 2nd bitmap is
    half_blocks blocks; present = {pfn: page}, stored uncompressed."""
    nblocks = 2 * half_blocks
    max_mapnr = half_blocks * PAGE * 8
    hdr = bytearray(PAGE)
    hdr[0:8] = b"KDUMP   "
    struct.pack_into("<I", hdr, 8, 6)
    struct.pack_into("<IIII", hdr, 428, PAGE, 1, nblocks, max_mapnr & 0xffffffff)
    sub = bytearray(PAGE)
    struct.pack_into("<Q", sub, 96, max_mapnr)
    bitmap2 = bytearray(half_blocks * PAGE)
    for pfn in present:
        bitmap2[pfn // 8] |= 1 << (pfn % 8)
    pfns = sorted(present)
    desc_off = (2 + nblocks) * PAGE
    data_off = desc_off + (len(pfns) * 24 + PAGE - 1) // PAGE * PAGE
    descs = bytearray(data_off - desc_off)
    for i, pfn in enumerate(pfns):
        struct.pack_into("<QIIQ", descs, i * 24, data_off + i * PAGE, PAGE, 0, 0)
    # The 1st bitmap (all zero) is written as one zero block at a time.
    return [bytes(hdr), bytes(sub), bytes(half_blocks * PAGE), bytes(bitmap2),
            bytes(descs)] + [present[p] for p in pfns]


def mount_tmpfs(size_mib):
    d = tempfile.mkdtemp(prefix="ksmscan-tmpfs-")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % size_mib, "tmpfs", d],
                       capture_output=True)
    if r.returncode:
        os.rmdir(d)
        return None, r.stderr.decode(errors="replace").strip()
    return d, None


@test("zstd")
def zstd_kdump_copy_stays_sparse():
    """A .zst kdump of 2 Ti pfns whose 128 MiB of bitmap is zero but for 8
    pages: its temporary copy must keep holes, so it fits a 16 MiB tmpfs as
    $TMPDIR (a full copy needs 128 MiB)."""
    half = 16384  # 64 MiB of 2nd bitmap: 512 Mi pfns
    last = half * PAGE * 8 - 4
    present = {pfn: os.urandom(PAGE) for pfn in (0, 1, 2, 3)}
    present.update({last + i: bytes([i + 1]) * PAGE for i in range(4)})
    parts = kdump_image(half, present)
    z = subprocess.run(["zstd", "-q", "-c", "-1"], input=b"".join(parts),
                       capture_output=True, check=True).stdout
    path = write("sparse.kdump.zst", z)
    check(len(z) < 1 << 20, "the compressed dump is small", "%d bytes" % len(z))
    d, why = mount_tmpfs(16)
    if not d:
        skip("cannot mount a 16 MiB tmpfs for $TMPDIR (%s): not checked" % why)
        return
    try:
        env = dict(os.environ, TMPDIR=d)
        r = ksm(["-r", "pages", "--csv", "-a", "xxh64", path], env=env)
        if r:
            eq((r.rc, r.err), (0, ""), "sparse kdump copy: exit status and no message")
            rows = pages_report(r, "sparse kdump copy")
            if rows is not None:
                eq(rows, [(pfn * PAGE, xxh64(present[pfn])) for pfn in sorted(present)],
                   "sparse kdump copy: the present pages")
        r = ksm(["--csv", "-"], input=z, env=env)
        if r:
            eq((r.rc, figures(summary(r, "sparse kdump pipe"))),
               (0, oracle([present[p] for p in sorted(present)])),
               "sparse kdump copy through a pipe: exit status and figures")
    finally:
        subprocess.run(["umount", d])
        os.rmdir(d)


def zstd_cut(data, keep):
    z = zstd_bytes(data)[:keep]
    out = subprocess.run(["zstd", "-q", "-dc"], input=z, capture_output=True).stdout
    return z, out


@test("zstd")
def zstd_truncated_keeps_decoded_pages():
    """A .zst of 1 MiB of random bytes cut at 60000 bytes: `zstd -dc` gives
    the oracle (its output's whole pages); exit 1, one error line; the
    same through a pipe."""
    for label, data, keep in (("random", os.urandom(1 << 20), 60000),
                              ("compressible", b"".join(bytes([i % 251]) * PAGE + os.urandom(64)
                                                        for i in range(600)), 30000)):
        z, out = zstd_cut(data, keep)
        blobs = [out[i:i + PAGE] for i in range(0, len(out) // PAGE * PAGE, PAGE)]
        check(len(blobs) > 1, "truncated zstd (%s): the oracle decodes pages" % label,
              "%d bytes" % len(out))
        path = write("cut-%s.zst" % label, z)
        exp = [(k * PAGE, xxh64(b)) for k, b in enumerate(blobs)]
        for how, args, kw in (("file", [path], {}), ("pipe", ["-"], {"input": z})):
            r = ksm(["-r", "pages", "--csv", "-a", "xxh64"] + args, **kw)
            if not r:
                continue
            what = "truncated zstd, %s (%s)" % (label, how)
            eq(r.rc, 1, what + ": exit status")
            eq(pages_report(r, what), exp, what + ": every page decoded before the cut")
            lines = r.lines()
            eq(len(lines), 1, what + ": one line on standard error")
            check(lines and "zstd" in lines[0] and "truncated" in lines[0],
                  what + ": the line says the stream is truncated", repr(lines[:2]))


# ---------------------------------------------------------------------------
# Standard input that was read in part, or named twice
# ---------------------------------------------------------------------------
def stdin_at(path, offset):
    fd = os.open(path, os.O_RDONLY)
    os.lseek(fd, offset, os.SEEK_SET)
    return fd


@test("stdin")
def stdin_starts_where_it_stands():
    """`(read 2 pages; ksmscan -) < file` scans the rest of the file, as
    `tail -c +8193 file | ksmscan -` would (addresses from 0); a zstd file
    likewise from where standard input stands."""
    blobs = [os.urandom(PAGE) for _ in range(3)] + [ZERO, ZERO] + [os.urandom(PAGE)]
    data = b"".join(blobs)
    for label, content in (("raw", data), ("zstd", zstd_bytes(data))):
        path = write("stdin." + label, os.urandom(2 * PAGE) + content)
        fd = stdin_at(path, 2 * PAGE)
        try:
            r = ksm(["-r", "pages", "--csv", "-a", "xxh64", "-"], stdin=fd)
        finally:
            os.close(fd)
        if r:
            eq(r.rc, 0, "stdin at offset 8192 (%s): exit status" % label)
            eq(pages_report(r, "stdin at offset " + label),
               [(k * PAGE, xxh64(b)) for k, b in enumerate(blobs)],
               "stdin at offset 8192 (%s): the pages after the offset" % label)


@test("stdin")
def stdin_named_twice():
    """`ksmscan - - < file`: the first `-` reads the file, the second finds
    standard input at its end (0 pages), as with a pipe: an empty input, so
    exit 1 and one line naming it; a sparse file on standard input still has
    its holes skipped."""
    blobs = [os.urandom(PAGE) for _ in range(4)]
    path = tmp("twice.img")
    with open(path, "wb") as f:
        f.write(b"".join(blobs[:2]))
        f.seek(64 * PAGE)
        f.write(b"".join(blobs[2:]))
    for label, off in (("mapped", 0), ("at an offset", PAGE)):
        fd = stdin_at(path, off)
        try:
            r = ksm(["--csv", "-", "-"], stdin=fd)
        finally:
            os.close(fd)
        rows = parse_csv(r, "stdin twice", SUMMARY_COLS) if r else None
        if not rows:
            continue
        if off == 0:
            exp = oracle(blobs)
        else:
            exp = oracle(blobs[1:2] + [ZERO] * 62 + blobs[2:])
        eq(r.rc, 1, "stdin named twice (%s): exit status" % label)
        eq([l for l in r.err.splitlines() if l.startswith("ksmscan: ")],
           ["ksmscan: -: empty: no whole page of memory, at offset 0"],
           "stdin named twice (%s): the second is empty" % label)
        eq([(x["input"], figures(x)) for x in rows[:2]],
           [("-", exp), ("-", ("0", "0", "0", "0", "0"))],
           "stdin named twice (%s): the file once, then nothing" % label)


# ---------------------------------------------------------------------------
# -p: processes that have no memory, and permission problems as root
# ---------------------------------------------------------------------------
def stat_fields(pid):
    """(state, flags) of /proc/PID/stat, or None."""
    try:
        rest = proc_stat_fields(pid)
    except OSError:
        return None
    return rest[0], int(rest[6])


def one_error_line(r, words, what):
    if not r:
        return
    eq(r.rc, 1, what + ": exit status")
    lines = r.lines()
    eq(len(lines), 1, what + ": one line on standard error")
    check(lines and all(w in lines[0] for w in words),
          what + ": the line says %r" % (words,), repr(lines[:2]))


@test("pid")
def pid_kernel_thread():
    kthreads = [int(p) for p in os.listdir("/proc") if p.isdigit()
                and (stat_fields(int(p)) or ("", 0))[1] & 0x00200000]
    if not kthreads:
        skip("no kernel thread is visible in this PID namespace")
        return
    pid = min(kthreads)
    one_error_line(ksm(["-p", str(pid)]), ["pid:%d" % pid, "kernel thread, has no user memory"],
                   "-p %d (a kernel thread)" % pid)


@test("pid")
def pid_zombie():
    child = subprocess.Popen(["true"])
    try:
        for _ in range(200):
            st = stat_fields(child.pid)
            if st and st[0] == "Z":
                break
            time.sleep(0.01)
        if not check(st and st[0] == "Z", "the child became a zombie", repr(st)):
            return
        one_error_line(ksm(["-p", str(child.pid)]), ["zombie process, has no memory"],
                       "-p of a zombie")
    finally:
        child.wait()


@test("pid")
def pid_kernel_thread_and_zombie_as_normal_user():
    """A normal user gets the same causes as root: the state is named before
    permission is considered (run as root, this drops to nobody; as a normal
    user, the two tests above are this test)."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or not setpriv:
        skip("needs root and setpriv (util-linux) to become nobody")
        return
    nobody = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    exe = [os.path.abspath(KSMSCAN[0])] + KSMSCAN[1:]
    r = subprocess.run(nobody + exe + ["-V"], capture_output=True)
    if r.returncode != 0:
        skip("nobody cannot run %s (a folder above it is closed)" % exe[0])
        return
    kthreads = [int(p) for p in os.listdir("/proc") if p.isdigit()
                and (stat_fields(int(p)) or ("", 0))[1] & 0x00200000]
    if kthreads:
        cmd = nobody + exe + ["-p", str(min(kthreads))]
        one_error_line(Run(cmd, subprocess.run(cmd, capture_output=True, timeout=TIMEOUT)),
                       ["kernel thread, has no user memory"], "as nobody, -p of a kernel thread")
    # nobody's own zombie: a parent run as nobody that never waits for its child.
    parent = subprocess.Popen(nobody + [sys.executable, "-c",
                              "import subprocess, sys, time\n"
                              "c = subprocess.Popen(['true'])\n"
                              "print(c.pid, flush=True)\ntime.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        pid = int(parent.stdout.readline())
        for _ in range(200):
            st = stat_fields(pid)
            if st and st[0] == "Z":
                break
            time.sleep(0.01)
        if not check(st and st[0] == "Z", "nobody's child became a zombie", repr(st)):
            return
        cmd = nobody + exe + ["-p", str(pid)]
        r = Run(cmd, subprocess.run(cmd, capture_output=True, timeout=TIMEOUT))
        one_error_line(r, ["zombie process, has no memory"], "as nobody, -p of its own zombie")
        check("permission" not in r.err, "as nobody, a zombie is not 'permission denied'",
              repr(r.err))
    finally:
        parent.kill()
        parent.wait()


@test("pid")
def pid_denied_as_root_says_why():
    """As root without CAP_SYS_PTRACE (as in a container started without
    it), another user's process cannot be read: the message names the
    missing capability instead of telling root to run as root."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or not setpriv:
        skip("needs root and setpriv (util-linux) to drop CAP_SYS_PTRACE")
        return
    target = subprocess.Popen([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
                               "sleep", "60"])
    try:
        time.sleep(0.3)
        cmd = [setpriv, "--inh-caps=-sys_ptrace", "--bounding-set=-sys_ptrace"] + KSMSCAN + [
            "-p", str(target.pid)]
        p = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT)
        r = Run(cmd, p)
        one_error_line(r, ["CAP_SYS_PTRACE"], "root without CAP_SYS_PTRACE")
        check("run as" not in r.err, "root without CAP_SYS_PTRACE: not told to run as root",
              repr(r.err))
    finally:
        target.kill()
        target.wait()


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-dump-defects-"))
