#!/usr/bin/python3
"""Bounds and messages of the third hardening, each against an oracle that
is not ksmscan:

- `-f FORMAT` names the memory format only: a compressed file is still
  decompressed (figures computed here from Python's own decoders, and equal
  to `zstd -dc | ksmscan -f raw -`); `--no-decompress` reads the bytes as
  they are (the figures of the compressed bytes, computed here);
- `--known FILE`: the holes of a sparse file are skipped as an input's are
  (the file's data, found here with SEEK_DATA, is all that is read: the
  page cache it leaves, and the time, stay small);
- `-P REGEX`: a pattern whose compilation or matching needs more than
  64 MiB or 5 s is refused, exit 2, one line naming it; ordinary patterns
  still select exactly the processes whose comm matches (Python's re);
- messages: `--host-used=0` is a value, not a missing one; `--known` of a
  character device does not suggest standard input; a QEMU stream that
  names one RAM block twice is refused naming it; `-r doctor` of a process
  it could not read says so.
"""
import bz2
import csv
import gzip
import io
import lzma
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import (PAGE, ZERO, check, eq, named_child, ram_stream, run,  # noqa: E402
                     run_suite, test, tmp)
import zstandard  # noqa: E402

CODECS = {
    ".zst": lambda b: zstandard.ZstdCompressor(level=3).compress(b),
    ".gz": lambda b: gzip.compress(b, 6),
    ".xz": lambda b: lzma.compress(b, preset=1),
    ".bz2": lambda b: bz2.compress(b, 9),
}


def figures(data):
    """(pages, zero_pages, distinct_pages) of whole pages of @data (the zero
    content is one of the distinct ones)."""
    pages = [data[i:i + PAGE] for i in range(0, len(data) - PAGE + 1, PAGE)]
    return len(pages), sum(p == ZERO for p in pages), len(set(pages))


def row_figures(r):
    rows = list(csv.DictReader(io.StringIO(r.out)))
    if len(rows) != 1:
        return None
    return tuple(int(rows[0][k]) for k in ("pages", "zero_pages", "distinct_pages"))


def image(seed, n):
    rnd = random.Random(seed)
    uniq = [rnd.randbytes(PAGE) for _ in range(n // 3)]
    return b"".join(rnd.choice(uniq + [ZERO]) for _ in range(n))


@test("format")
def format_names_memory_only():
    for i, (ext, enc) in enumerate(CODECS.items()):
        data = image(100 + i, 37 + 11 * i)
        comp = enc(data)
        path = tmp("img%d.img%s" % (i, ext))
        with open(path, "wb") as f:
            f.write(comp)
        for args in (["-f", "raw", path], [path], ["-f", "raw", "-"]):
            r = run(["--csv"] + args, input=comp if "-" in args else None)
            eq((r.rc, row_figures(r)), (0, figures(data)),
               "%s %s: the decompressed pages" % (ext, " ".join(args[:-1])))
        r = run(["--csv", "--no-decompress", "-f", "raw", path])
        eq((r.rc, row_figures(r)), (0, figures(comp)),
           "%s --no-decompress: the compressed bytes' pages" % ext)
        r = run(["--csv", "--no-decompress", "-"], input=comp)
        eq((r.rc, row_figures(r)), (0, figures(comp)),
           "%s --no-decompress of standard input: the bytes as they are" % ext)
    # The equality the manual states, with zstd's own decoder.
    data = image(7, 300)
    path = tmp("x.img.zst")
    with open(path, "wb") as f:
        f.write(CODECS[".zst"](data))
    a = run(["--csv", "-f", "raw", path])
    dc = subprocess.run(["zstd", "-dc", path], capture_output=True, check=True).stdout
    b = run(["--csv", "-f", "raw", "-"], input=dc)
    check(a.rc == b.rc == 0 and row_figures(a) == row_figures(b) == figures(data),
          "-f raw x.img.zst equals zstd -dc x.img.zst | ksmscan -f raw -",
          "%s / %s" % (row_figures(a), row_figures(b)))



def pids_of(r):
    return sorted(int(row["input"][4:]) for row in csv.DictReader(io.StringIO(r.out))
                  if row["input"].startswith("pid:"))


def peak_child_kib():
    import resource
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def sanitized():
    from ksmtest import KSMSCAN
    return any(x in KSMSCAN[0] for x in ("build-check", "build-tsan"))


@test("regex")
def process_regex_bounded():
    """Patterns whose compilation needs gigabytes, of shapes and sizes other
    than one nest of three: each refused with exit 2 and one line naming it,
    the run's peak memory far below them. Heavier patterns that one C
    library compiles within the bound and another does not (musl's TRE
    against glibc's) are refused the same way or answered, never more."""
    explosive = ["((b{200}){150}){120}", "(((c{40}){40}){40}){40}",
                 "(" + "|".join("w%dq{99}" % i for i in range(3000)) + "){50}"]
    heavy = ["(x{1,250}){1,250}z", "([a-z]{250}|[0-9]{250}){250}"]
    for pat in explosive + heavy:
        before = peak_child_kib()
        r = run(["--csv", "-P", pat], timeout=60)
        lines = r.err.splitlines()
        if pat in explosive or r.rc == 2:
            eq(r.rc, 2, "-P %.40s: refused, exit 2" % pat)
            check(len(lines) == 1 and "-P '" + pat[:40] in lines[0] and "refused" in lines[0],
                  "-P %.40s: one line naming it" % pat, r.err[:300])
            check(r.out == "", "-P %.40s: no output" % pat, r.out[:200])
        else:
            check(r.rc in (0, 1), "-P %.40s: answered" % pat, r.brief())
        peak = peak_child_kib()
        if not sanitized():
            check(peak < 200 * 1024 or peak == before,
                  "-P %.40s: peak memory below 200 MiB" % pat, "%d KiB" % peak)


@test("regex")
def process_regex_still_selects():
    """Ordinary patterns select exactly the processes whose comm Python's re
    matches (the children started here, with names of their own)."""
    import re
    tag = "kq%d" % (os.getpid() % 100000)
    names = [(tag + "a1").encode(), (tag + "b22").encode(), (tag + "a333").encode()]
    kids = [named_child(n) for n in names]
    try:
        for pat in (tag + "a[0-9]+$", "^" + tag + "(b|a3)", tag + "[ab]2*$", tag + "zz"):
            want = sorted(k.pid for k, n in zip(kids, names) if re.search(pat, n.decode()))
            r = run(["--csv", "-P", pat])
            eq((r.rc, pids_of(r)), (0 if want else 1, want), "-P %s: its processes" % pat)
    finally:
        for k in kids:
            k.kill()
            k.wait()



def peak_child_kib_of(args):
    """(run, the peak resident memory of that run in KiB) by a fresh child."""
    code = ("import resource,subprocess,sys\n"
            "p = subprocess.run(sys.argv[1:], capture_output=True)\n"
            "sys.stdout.buffer.write(b'%d %d\\n' % (p.returncode, resource.getrusage("
            "resource.RUSAGE_CHILDREN).ru_maxrss) + p.stdout)\n"
            "sys.stderr.buffer.write(p.stderr)\n")
    from ksmtest import KSMSCAN
    p = subprocess.run([sys.executable, "-c", code] + KSMSCAN + args, capture_output=True)
    head, _, out = p.stdout.partition(b"\n")
    rc, kib = map(int, head.split())
    return rc, kib, out.decode(), p.stderr.decode()


@test("known")
def known_sparse_skips_holes():
    """A --known file of 6 GiB that holds three pages of data: the pages of
    the inputs equal to them are known (counted here), and its holes are
    skipped, not read (the run's peak memory stays far below the file)."""
    rnd = random.Random(11)
    p1, p2, p3, r1, r2 = (rnd.randbytes(PAGE) for _ in range(5))
    a, b = tmp("dom-a.raw"), tmp("dom-b.raw")
    with open(a, "wb") as f:
        f.write(p1 + p2 + p3 + r1)
    with open(b, "wb") as f:
        f.write(p2 + p1 + p3 + p3 + r2)
    known = tmp("known.sparse")
    with open(known, "wb") as f:
        for off, page in ((1 << 30, p1), ((5 << 30) + 3 * PAGE, p3), (2 * PAGE, r1)):
            f.seek(off)
            f.write(page)
        f.truncate(6 << 30)
    # The oracle: pages in both domains, and those equal to a known page.
    pa, pb = [p1, p2, p3, r1], [p2, p1, p3, p3, r2]
    crossing = [x for x in pa if x in pb] + [x for x in pb if x in pa]
    known_set = {p1, p3, r1}
    rc, kib, out, err = peak_child_kib_of(
        ["-r", "exposure", "--csv", "--group=a=" + a, "--group=b=" + b, "--known=" + known, a, b])
    rows = list(csv.DictReader(io.StringIO(out)))
    eq((rc, [(r["pages_crossing"], r["known_pages"]) for r in rows]),
       (0, [(str(len(crossing)), str(sum(x in known_set for x in crossing)))]),
       "exposure with a sparse --known file: crossing and known pages (%s)" % err[-200:])
    check(kib < 128 * 1024, "the 6 GiB sparse file's holes were not read", "peak %d KiB" % kib)



def errors(r):
    return [l for l in r.err.splitlines() if l.startswith("ksmscan: ")]


@test("messages")
def qemu_block_named_twice():
    """A qemu-save block list naming one block twice is refused, naming it;
    a later list naming a known block again with another length too; with
    the same length it is what QEMU sends, and read."""
    be = lambda n, v: v.to_bytes(n, "big")  # noqa: E731
    rnd = random.Random(5)
    a, b = rnd.randbytes(PAGE), rnd.randbytes(PAGE)
    n0, n1 = (b"ram-node0", 8 * PAGE), (b"ram-node1", 4 * PAGE)
    recs = be(8, 0x08) + b"\x09ram-node0" + a + be(8, PAGE | 0x28) + b
    cases = [("one list names ram-node0 twice", ram_stream(recs, (n0, n1, n0)),
              ['"ram-node0" is named twice']),
             ("a later list gives ram-node1 another length",
              ram_stream(recs + be(8, 3 * PAGE | 0x04) + b"\x09ram-node1" + be(8, 3 * PAGE),
                         (n0, n1)), ['"ram-node1" is declared again with 12288 bytes', "16384"]),
             ("a later list names ram-node0 again, same length",
              ram_stream(recs + be(8, 8 * PAGE | 0x04) + b"\x09ram-node0" + be(8, 8 * PAGE),
                         (n0, n1)), None)]
    for what, data, words in cases:
        path = tmp("blocks.mig")
        with open(path, "wb") as f:
            f.write(data)
        for args, inp in (([path], None), (["-"], data)):
            r = run(["--csv"] + args, input=inp)
            if words is None:
                eq((r.rc, errors(r), row_figures(r)), (0, [], (2, 0, 2)),
                   "%s (%s): read, its two pages" % (what, args[0][-4:]))
                continue
            lines = errors(r)
            check(r.rc == 1 and len(lines) == 1 and all(w in lines[0] for w in words),
                  "%s (%s): exit 1, one line naming it" % (what, args[0][-4:]), r.err[-300:])


@test("messages")
def host_used_zero_is_a_value():
    a, b = tmp("hu-a.raw"), tmp("hu-b.raw")
    for p, img in ((a, image(1, 8)), (b, image(2, 8))):
        with open(p, "wb") as f:
            f.write(img)
    base = ["--series", "--policy=ksmtuned", "--csv", a, b]
    r = run(base + ["--host-used=0", "--host-memory=16G"])
    eq((r.rc, errors(r)), (0, []), "--host-used=0 is a value: the series runs")
    for args, word in ((["--host-used=0"], "need --host-memory and --host-used"),
                       (["--host-memory=0", "--host-used=0"], "--host-memory"),
                       (["--host-memory=8G", "--host-used=9G"], "must not exceed")):
        r = run(base + args)
        lines = errors(r)
        check(r.rc == 2 and len(lines) == 1 and word in lines[0],
              "%s: exit 2, %r" % (" ".join(args), word), r.err[:300])


@test("messages")
def known_device_no_stdin_hint():
    """--known refuses standard input, so its refusal of a character device
    or a FIFO suggests none; an input's still does."""
    a, b = tmp("kd-a.raw"), tmp("kd-b.raw")
    for p, img in ((a, image(3, 4)), (b, image(3, 4))):
        with open(p, "wb") as f:
            f.write(img)
    fifo = tmp("known.fifo")
    os.mkfifo(fifo)
    for dev in ("/dev/null", "/dev/urandom", fifo):
        r = run(["-r", "exposure", "--group=x=" + a, "--group=y=" + b, "--known=" + dev, a, b])
        lines = errors(r)
        check(r.rc == 1 and len(lines) == 1 and dev in lines[0] and "standard input" not in
              lines[0] and "ksmscan -" not in lines[0],
              "--known=%s: one line, no standard input" % dev, r.err[:300])
    r = run([fifo])
    check(r.rc == 1 and "standard input" in r.err, "an input FIFO still suggests a pipe", r.err)



@test("messages")
def doctor_says_what_it_could_not_read():
    """-r doctor as nobody, of a root process (unreadable) and of nobody's
    own (whose memory is not mergeable): the unreadable one is named as
    such; of the root process alone, no "nothing keeps" at all."""
    import shutil
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or not setpriv:
        from ksmtest import Skip
        raise Skip("needs root and setpriv (util-linux) to become nobody")
    from ksmtest import KSMSCAN
    exe = tmp("ksmscan-nobody")
    shutil.copy(os.path.realpath(KSMSCAN[0]), exe)
    os.chmod(exe, 0o755)
    os.chmod(os.path.dirname(exe), 0o755)
    nobody = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    root_kid = subprocess.Popen(["sleep", "60"])
    own_kid = subprocess.Popen(nobody + ["sleep", "60"])
    # Readable by nobody once setpriv has become nobody and run sleep.
    from ksmtest import proc_comm
    for _ in range(500):
        if proc_comm(own_kid.pid) == b"sleep":
            break
        time.sleep(0.01)
    try:
        for pids, exp in (([root_kid.pid, own_kid.pid],
                           ["1 process could not be read (pid:%d)" % root_kid.pid,
                            "not_mergeable"]),
                          ([root_kid.pid], ["1 process could not be read (pid:%d)" % root_kid.pid])):
            args = sum([["-p", str(p)] for p in pids], [])
            p = subprocess.run(nobody + [exe, "-r", "doctor"] + args, capture_output=True,
                               text=True, timeout=60)
            text = " ".join(p.stdout.split())
            check(all(e in text for e in exp) and "these processes' memory" not in text,
                  "doctor of %d processes, one unreadable: %r" % (len(pids), exp), p.stdout)
            if len(pids) == 1:
                check("nothing keeps" not in text, "nothing is said of no process", p.stdout)
    finally:
        for k in (root_kid, own_kid):
            k.kill()
            k.wait()


if __name__ == "__main__":
    sys.exit(run_suite("bounds"))
