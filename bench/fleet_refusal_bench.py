#!/usr/bin/python3
"""make bench: how soon ksmfleet refuses what it cannot use.

- zstd "bombs" (after an ordinary one-row export, for scale): a zstd export of some 64 KB that decompresses to 2 GiB of
  zeros after its header (a line that never ends), and one of some 135 KB
  that decompresses to 1.5 GiB of one valid row repeated. ksmfleet reads
  compressed exports as a stream with the line bound of plain ones and a
  bound on the decompressed size per row, so it refuses both early: the
  line gives the seconds to the refusal and the run's peak RSS (the
  process and its children, from wait4()). Before that bound: 38 s and
  6.4 GB of RSS for the zeros.
- --scheduler addresses that cannot work: port 0 and -5 (usage errors),
  and a closed loopback port (nothing listens): the seconds to the error
  line, against the 30 s that distributed's connect timeout once made each
  of them wait.

Each case is run once (benchmarks are not tests); each line says whether
the run ended the way tests/test_fleet_hostile.py expects (exit status and
one line on stderr). make bench runs this with PYTHONPATH=fleet.
"""
import os, shutil, subprocess, sys, tempfile, time


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from ksmtest import free_port, zstd_stream  # noqa: E402
FLEET = [os.path.join(ROOT, "fleet", "bin", "ksmfleet")]
HEADER = b"input,digest,pages,zero\n"
ROW = b"h,0x%032x,1,0\n" % 0x9e3779b97f4a7c15
# Waited at most, then killed: far above what a refusal takes.
LIMIT = 300


def zstd_file(path, chunk, times):
    """HEADER then @chunk @times times, one zstd frame; its size in bytes."""
    return os.path.getsize(zstd_stream(path, HEADER, chunk, times))


def timed(args):
    """ksmfleet @args: (exit status or "killed", stderr lines, seconds,
    peak RSS in MiB of it and the children it waited for, from wait4())."""
    began = time.monotonic()
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(FLEET + args, stdout=subprocess.DEVNULL, stderr=err,
                             start_new_session=True)
        while True:
            pid, wstatus, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - began > LIMIT:
                os.killpg(p.pid, 9)
                pid, wstatus, usage = os.wait4(p.pid, 0)
                break
            time.sleep(0.01)
        took = time.monotonic() - began
        p.returncode = 0                  # reaped here, not by Popen
        err.seek(0)
        lines = err.read().decode(errors="replace").strip().splitlines()
    status = os.waitstatus_to_exitcode(wstatus)
    return (status if status >= 0 else "killed"), lines, took, usage.ru_maxrss / 1024


def ended(status, err, want):
    """'as expected', or what happened instead."""
    if status == want and len(err) == 1:
        return "one line, exit %d, as expected" % want
    return "NOT as expected: exit %s, %d stderr lines: %s" % (
        status, len(err), (err[-1] if err else "")[:120])


def bombs(tmp, one):
    """Each bomb's refusal, after an ordinary run of a one-row export for
    scale (most of either is starting Python, Dask and the local cluster)."""
    status, err, took, peak = timed(["--workers=1", one])
    print("fleet one-row export, for scale:                  read in %5.2f s, peak RSS "
          "%6.1f MiB (exit %s)" % (took, peak, status), flush=True)
    cases = [("2 GiB of zeros", "zeros.csv.zst", b"\0" * (1 << 24), 128),
             ("1.5 GiB of one row", "rows.csv.zst", ROW * ((16 << 20) // len(ROW)), 96)]
    for what, name, chunk, times in cases:
        path = os.path.join(tmp, name)
        size = zstd_file(path, chunk, times)
        status, err, took, peak = timed(["--workers=1", path])
        print("fleet zstd bomb, %3d KiB of zstd -> %-18s refused in %5.2f s, peak RSS "
              "%6.1f MiB (%s)" % (size >> 10, what + ":", took, peak,
                                  ended(status, err, 1)), flush=True)


def schedulers(path):
    for what, arg, want in (("port 0", "tcp://127.0.0.1:0", 2),
                            ("port -5", "tcp://127.0.0.1:-5", 2),
                            ("a closed port", "tcp://127.0.0.1:%d" % free_port(), 1)):
        status, err, took, _ = timed(["--scheduler=" + arg, path])
        print("fleet --scheduler at %-14s error line after %5.2f s (once: 30 s) (%s)"
              % (what + ":", took, ended(status, err, want)), flush=True)


def main():
    tmp = tempfile.mkdtemp(prefix="ksmscan-fleet-refusal-bench-")
    try:
        one = os.path.join(tmp, "one.csv")
        with open(one, "wb") as f:
            f.write(HEADER + ROW)
        bombs(tmp, one)
        schedulers(one)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
