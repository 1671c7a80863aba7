#!/usr/bin/python3
"""Hosts named by their exports: ksmscan -r contents and -r sketch with
--host, and ksmfleet grouping rows by the host column.

Three hosts each run two processes whose exports are named pid:101 and
pid:102 on every host (files of those names, one folder per host): the
inputs overlap, the hosts do not. Oracles: ksmscan's own `*` row over the
six files (the fleet as one KSM), and over each host's two files (the host
alone), and, for pairs, ksmscan -r matrix's arithmetic redone in Python
over the pages the test wrote (ksmtest.ksm_group).
"""
import csv, io, os, random, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import KSMSCAN, PAGE, ZERO, check, eq, ksm_group, run_suite, test, tmp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLEET = [os.path.join(ROOT, "fleet", "bin", "ksmfleet")]
# run from a host's folder too: the program by its absolute path
KSM = [os.path.abspath(x) if os.path.exists(x) else x for x in KSMSCAN]
HOSTS = ("rack1-node07", "rack1-node08", "rack2-node01")
PIDS = ("pid:101", "pid:102")
FIGS = ("pages", "distinct_pages", "pages_shared", "pages_sharing", "saved_bytes")


def page(tag):
    return tag.encode().ljust(64, b"~") * (PAGE // 64)


def fleet_files(tag):
    """{host: {pid name: path}} and {host: [pages]}: a library all hosts
    hold, one pair of hosts' image, zero pages, each process's own."""
    rng = random.Random(11)
    lib = [page("lib%d" % i) for i in range(12)]
    image = [page("img%d" % i) for i in range(20)]
    files, pages = {}, {}
    for n, host in enumerate(HOSTS):
        folder = tmp(tag + "-" + host)
        os.makedirs(folder)
        files[host], pages[host] = {}, []
        for k, pid in enumerate(PIDS):
            mine = lib * (1 + k) + [ZERO] * (3 + n) + [page("%s-%s-%d" % (host, pid, i))
                                                      for i in range(5 + 2 * n)]
            if n < 2:
                mine += image[:10 + 5 * k]
            rng.shuffle(mine)
            files[host][pid] = os.path.join(folder, pid)
            with open(files[host][pid], "wb") as f:
                f.write(b"".join(mine))
            pages[host] += mine
    return files, pages


def run(cmd, cwd=None):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=cwd)


def export(files, host, kind="contents", extra=(), name=True):
    """ksmscan's export of @host's processes, run in its folder so that
    its inputs are named pid:101 and pid:102 as on every other host."""
    folder = os.path.dirname(files[host][PIDS[0]])
    r = run(KSM + ["-q", "-r", kind, "--csv"] + (["--host=" + host] if name else [])
            + list(extra) + list(PIDS), cwd=folder)
    path = os.path.join(os.path.dirname(folder), "%s-%s.%s%s.csv" % (
        os.path.basename(folder), kind, "".join(extra), "" if name else "-unnamed"))
    with open(path, "w", newline="") as f:
        f.write(r.stdout)
    return path


def star(paths):
    r = run(KSM + ["--csv"] + list(paths))
    row = [x for x in csv.DictReader(io.StringIO(r.stdout, newline="")) if x["input"] == "*"]
    return {k: int(row[0][k]) for k in FIGS} if row else None


def fleet(*args):
    r = run(FLEET + ["--workers=2", "--csv"] + list(args))
    return r, list(csv.DictReader(io.StringIO(r.stdout, newline=""))) if r.returncode == 0 else []


@test("fleet-hosts")
def overlapping_pids_three_hosts():
    files, _ = fleet_files("overlap")
    exports = [export(files, h) for h in HOSTS]
    with open(exports[0]) as f:
        rows = list(csv.DictReader(f))
    eq(sorted({(x["input"], x["host"]) for x in rows}), [(p, HOSTS[0]) for p in PIDS],
       "an export names its inputs pid:N and its host --host")
    r, got = fleet(*exports)
    if not check(r.returncode == 0 and len(got) == 1, "totals run", r.stderr[-300:]):
        return
    everything = [files[h][p] for h in HOSTS for p in PIDS]
    eq(int(got[0]["hosts"]), 3, "three exports of overlapping pids: three hosts")
    eq({k: int(got[0][k]) for k in FIGS}, star(everything), "totals: ksmscan's * row of the six")
    eq(int(got[0]["saved_bytes_hosts_alone"]),
       sum(star(files[h].values())["saved_bytes"] for h in HOSTS),
       "saved_bytes_hosts_alone: the sum of ksmscan's * rows of each host")
    r, got = fleet("--report=hosts", *exports)
    eq([(x["host"], int(x["pages"]), int(x["distinct_pages"]), int(x["saved_bytes"])) for x in got],
       [(h, s["pages"], s["distinct_pages"], s["saved_bytes"])
        for h, s in ((h, star(files[h].values())) for h in HOSTS)],
       "hosts: each host's two processes as ksmscan's * row of them")


def pair_truth(pages, a, b):
    """shared contents and saved_together pages of hosts @a and @b."""
    ca, cb = {}, {}
    for p in pages[a]:
        ca[p] = ca.get(p, 0) + 1
    for p in pages[b]:
        cb[p] = cb.get(p, 0) + 1
    both = [p for p in ca if p in cb]
    extra = sum(ksm_group(ca[p] + cb[p], 256)[1] - ksm_group(ca[p], 256)[1]
                - ksm_group(cb[p], 256)[1] for p in both)
    return len(both), extra * PAGE


@test("fleet-hosts")
def sketches_of_whole_hosts():
    files, pages = fleet_files("sketch")
    truth = {tuple(sorted((a, b))): pair_truth(pages, a, b)
             for i, a in enumerate(HOSTS) for b in HOSTS[i + 1:]}
    # Complete sketches (all contents): the * sketch is the host's, exact.
    exports = [export(files, h, "sketch", ["--sketch-size=100000"]) for h in HOSTS]
    r, got = fleet("--report=pairs", *exports)
    check(r.returncode == 0, "pairs of three whole-host sketches", r.stderr[-300:])
    eq({tuple(sorted((x["host_a"], x["host_b"]))): (int(x["shared_contents"]),
                                                    int(x["saved_together_bytes"]))
        for x in got}, {k: v for k, v in truth.items() if v[0]},
       "complete whole-host sketches: the pairs' exact figures, from the * sketches")
    check(all(x["shared_contents_error"] == "0" for x in got), "complete sketches: error 0")
    # A sketch of a host's inputs without the * one cannot be the host's.
    path = exports[1]
    with open(path, newline="") as f:
        lines = f.read().split("\n")
    cut = [n for n, line in enumerate(lines) if line.startswith("*,")]
    with open(path, "w", newline="") as f:
        f.write("\n".join(lines[:cut[0]] + [""]))
    r, _ = fleet("--report=pairs", *exports)
    err = r.stderr.strip().splitlines()
    second = next(n for n, line in enumerate(lines) if line.startswith(PIDS[1])) + 1
    check(r.returncode == 1 and len(err) == 1 and err[0].startswith("ksmfleet: %s: " % path)
          and err[0].endswith("at line %d" % second),
          "a host's inputs' sketches without the *: refused at the second input's first line",
          r.stderr[-300:])


@test("fleet-hosts")
def exports_without_host_column():
    files, _ = fleet_files("old")
    exports = []
    for h in HOSTS:       # an older ksmscan's export: no host column, inputs by path
        r = run(KSM + ["-q", "-r", "contents", "--csv"] + list(files[h].values()))
        path = tmp(h + ".old.csv")
        with open(path, "w", newline="") as f:
            f.write("\n".join(",".join(line.split(",")[:4]) for line in r.stdout.split("\n")))
        exports.append(path)
    with open(exports[0]) as f:
        check(f.readline().strip() == "input,digest,pages,zero", "the export has no host column")
    r, got = fleet("--report=hosts", *exports)
    eq([x["host"] for x in got], [files[h][p] for h in HOSTS for p in PIDS],
       "no host column: one host per input, as before")
    # The default host name is the machine's: three exports of it are one
    # host in three exports, an error naming the second one's first row.
    same = [export(files, h, name=False) for h in HOSTS]
    r, _ = fleet(*same)
    err = r.stderr.strip().splitlines()
    check(r.returncode == 1 and len(err) == 1 and "in two exports" in err[0]
          and err[0].startswith("ksmfleet: %s: " % same[1]) and err[0].endswith("at line 2"),
          "three exports of the same default host: refused, naming the second, line 2",
          r.stderr[-300:])


@test("fleet-hosts")
def host_names_ksmfleet_reads():
    """ksmscan --host takes what ksmfleet reads: 1 to 4096 bytes. 4096
    bytes (also of two-byte characters) are written and read back whole;
    4097 bytes and the 20,000 characters ksmscan took before (ksmfleet
    then refused the export) are a usage error, one line, no output."""
    files, _ = fleet_files("longname")
    host = HOSTS[0]
    folder = os.path.dirname(files[host][PIDS[0]])
    for name in ("n" * 4096, "\u00e9" * 2048):
        r = run(KSM + ["-q", "-r", "contents", "--csv", "--host=" + name] + list(PIDS), cwd=folder)
        path = tmp("longname-%d.csv" % len(name))
        with open(path, "w", newline="") as f:
            f.write(r.stdout)
        check(r.returncode == 0, "--host of %d bytes: written" % len(name.encode()), r.stderr[-200:])
        got, rows = fleet("--report=hosts", path)
        eq([x["host"] for x in rows], [name], "--host of %d bytes: read back whole by ksmfleet"
           % len(name.encode()))
    for name in ("n" * 4097, "\u00e9" * 2049, "x" * 20000):
        r = run(KSM + ["-q", "-r", "contents", "--csv", "--host=" + name] + list(PIDS), cwd=folder)
        err = r.stderr.strip().splitlines()
        check(r.returncode == 2 and not r.stdout and err and "--host" in err[0]
              and "4096 bytes" in err[0], "--host of %d bytes: a usage error"
              % len(name.encode()), "exit %d, %r" % (r.returncode, r.stderr[-200:]))


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-fleet-hosts-"))
