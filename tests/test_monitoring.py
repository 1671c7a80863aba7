#!/usr/bin/python3
"""ksmscan-metrics.service and .timer, read by Debian's node_exporter.

`make install` into a folder of the test's (PREFIX), with the binary under
test ($KSMSCAN) put where the installed ksmscan is.  The service's command
is taken from the installed unit file as systemd would run it (its
Environment= lines, ExecStart with $VAR split into words), with only the
textfile directory pointed at a folder of the test's.  Then:

- node_exporter itself (prometheus-node-exporter, from `scripts/install-deps
  apps`: without it, `make test` skips these checks, naming `make test-apps`)
  runs on 127.0.0.1 at a free port with that folder as its
  --collector.textfile.directory and no other collector; its /metrics,
  fetched over loopback, parse with prometheus_client and hold every sample
  of the file ksmscan-metrics wrote, label for label and value for value,
  with node_textfile_scrape_error 0; the file itself parses with
  prometheus_client's strict OpenMetrics parser;
- the values are ksmscan's own: two stopped child processes (their memory
  cannot change between runs) have, in the metrics, exactly the figures of
  a CSV run of ksmscan on them; the whole host's row is the sum of the
  process rows of the same file;
- bounded: by default a metrics run has the host's series and the --by
  rows', none per process, and ksmscan_processes_left_out{input="*"} says
  how many processes have none (a warning too); --by=process gives each its
  own, at most 500 (502 processes: 500 series, 2 left out); processes named
  with -p always have theirs;
- atomicity: a run that fails (an option ksmscan refuses; a ksmscan that
  writes half its output and fails) leaves the last file byte for byte and no
  temporary file; while a run is half-written, node_exporter still serves
  the last values without a scrape error; killed, the run leaves nothing;
- errors: a missing textfile directory and a file name that is not a plain
  *.prom are one line each on stderr, nothing written;
- the unit's default textfile directory is node_exporter's own default
  (its --help), and `systemd-analyze verify` accepts both units (and
  rejects a service whose command is missing: the check can fail).
"""
import csv
import io
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import KSMSCAN, ROOT, Skip, app, check, eq, free_port, run, run_suite, skip, test, tmp  # noqa: E402

EXPORTER = "/usr/bin/prometheus-node-exporter"
# Figures of a throughput, not of the memory: they differ between two runs.
TIMING = {"hash_mib_s", "ns_per_page"}
STATE = {}


def parser():
    try:
        from prometheus_client.parser import text_string_to_metric_families
        from prometheus_client.openmetrics import parser as om
    except ImportError:
        raise Skip("python3-prometheus-client missing: run scripts/install-deps")
    return text_string_to_metric_families, om.text_string_to_metric_families


def installed():
    """`make install` into tmp, once: {prefix, unit, timer, script, bin}."""
    if STATE:
        return STATE
    prefix = tmp("prefix")
    r = subprocess.run(["make", "-s", "-C", ROOT, "install", "PREFIX=" + prefix],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("make install: " + r.stderr[-400:])
    units = os.path.join(prefix, "lib", "systemd", "system")
    STATE.update(prefix=prefix, unit=os.path.join(units, "ksmscan-metrics.service"),
                 timer=os.path.join(units, "ksmscan-metrics.timer"),
                 bin=os.path.join(prefix, "bin", "ksmscan"))
    use_ksmscan(UNDER_TEST)
    return STATE


# The binary under test, run in place of the installed one.
UNDER_TEST = 'exec %s "$@"' % " ".join(shlex.quote(a) for a in KSMSCAN)


def use_ksmscan(body):
    """The installed ksmscan becomes a shell script of @body."""
    os.unlink(STATE["bin"])
    with open(STATE["bin"], "w") as f:
        f.write("#!/bin/sh\n%s\n" % body)
    os.chmod(STATE["bin"], 0o755)


def unit_sections(path):
    """A unit file as {section: [(key, value), ...]} (continuation lines and
    comments as systemd reads them)."""
    out, section, pending = {}, None, ""
    for line in open(path).read().splitlines():
        if pending:
            line, pending = pending + line, ""
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        s = line.strip()
        if not s or s[0] in "#;":
            continue
        if s.startswith("["):
            section = s.strip("[]")
            out.setdefault(section, [])
            continue
        k, _, v = s.partition("=")
        out[section].append((k.strip(), v.strip()))
    return out


def service_command(textfile_dir, extra_env=None):
    """(argv, env) of the installed service's ExecStart, as systemd runs it:
    the Environment= settings, then ours (what /etc/default/ksmscan-metrics
    would set); "$VAR" alone is split into words, "${VAR}" is one word."""
    svc = unit_sections(installed()["unit"])["Service"]
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"):
        if k in os.environ:
            env[k] = os.environ[k]
    for k, v in svc:
        if k == "Environment":
            for word in shlex.split(v):
                name, _, val = word.partition("=")
                env[name] = val
    env.update({"KSMSCAN_TEXTFILE_DIR": textfile_dir}, **(extra_env or {}))
    execs = [v for k, v in svc if k == "ExecStart"]
    if len(execs) != 1:
        raise RuntimeError("the service has %d ExecStart lines" % len(execs))
    argv = []
    for word in shlex.split(execs[0].lstrip("-@:+!")):
        m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if m:
            argv += env.get(m.group(1), "").split()
        else:
            argv.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                               lambda m: env.get(m.group(1), ""), word))
    return argv, env


def run_service(textfile_dir, extra_env=None, **kw):
    argv, env = service_command(textfile_dir, extra_env)
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600, **kw)


CHILD = r"""
import mmap, os, random, signal, sys
seed = int(sys.argv[1])
rng = random.Random(seed)
m = mmap.mmap(-1, 96 * 4096)
same = rng.randbytes(4096)
for i in range(96):
    m[i * 4096:(i + 1) * 4096] = (same if i % 3 == 0 else bytes(4096) if i % 3 == 1
                                  else rng.randbytes(4096))
sys.stdout.write("ready\n")
sys.stdout.flush()
os.kill(os.getpid(), signal.SIGSTOP)
"""


def stopped_children(n):
    """n child processes that filled memory and stopped themselves."""
    kids = []
    for i in range(n):
        p = subprocess.Popen([sys.executable, "-c", CHILD, str(i)], stdout=subprocess.PIPE)
        kids.append(p)
        p.stdout.readline()
    for p in kids:
        for _ in range(500):
            with open("/proc/%d/stat" % p.pid) as f:
                if f.read().rpartition(")")[2].split()[0] == "T":
                    break
            time.sleep(0.01)
        else:
            raise RuntimeError("child %d did not stop" % p.pid)
    return kids


def end_children(kids):
    for p in kids:
        p.kill()
        p.wait()


def samples(fams):
    """{(name, labels as a sorted tuple): value} of parsed families; an
    empty label is no label (node_exporter gives every sample of a family
    the same label names, empty where a sample had none)."""
    out = {}
    for f in fams:
        for s in f.samples:
            labels = tuple(sorted((k, v) for k, v in s.labels.items() if v != ""))
            out[(s.name, labels)] = float(s.value)
    return out


def same_samples(got, want, what):
    """One check that two sample sets are equal; a few differences shown."""
    diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
    return check(not diff, what, "%d differ, e.g. %r" % (len(diff), [
        (k, got.get(k), want.get(k)) for k in diff[:3]]))


class Exporter:
    """node_exporter on 127.0.0.1 reading @textfile_dir, nothing else."""

    def __init__(self, textfile_dir):
        app([EXPORTER], "prometheus-node-exporter")
        for _ in range(5):
            self.url = "http://127.0.0.1:%d/metrics" % free_port()
            self.p = subprocess.Popen(
                [EXPORTER, "--web.listen-address=" + self.url.split("/")[2],
                 "--collector.disable-defaults", "--collector.textfile",
                 "--collector.textfile.directory=" + textfile_dir],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            for _ in range(100):
                if self.p.poll() is not None:
                    break              # the port was taken meanwhile: another
                try:
                    self.get()
                    return
                except OSError:
                    time.sleep(0.1)
            self.close()
        raise RuntimeError("node_exporter did not start")

    def get(self):
        with urllib.request.urlopen(self.url, timeout=10) as r:
            return r.read().decode()

    def close(self):
        if self.p.poll() is None:
            self.p.terminate()
        self.p.wait()


def csv_of(pids):
    r = run(["-q", "-o", "csv"] + ["-p%d" % p for p in pids])
    if r.rc != 0:
        raise RuntimeError(r.brief())
    return {row["input"]: row for row in csv.DictReader(io.StringIO(r.out))}


@test("monitoring", app=True)
def node_exporter_serves_the_metrics():
    text_parse, om_parse = parser()
    d = tmp("textfile")
    os.makedirs(d)
    kids = stopped_children(2)
    try:
        # --by=process: the processes' own series too, to compare with CSV.
        r = run_service(d, {"KSMSCAN_ARGS": "-j 1 --by=process"})
        if not eq(r.returncode, 0, "the service's command: exit 0 (%s)" % r.stderr[-300:]):
            return
        eq(os.listdir(d), ["ksmscan.prom"], "it leaves ksmscan.prom and nothing else")
        prom = open(os.path.join(d, "ksmscan.prom")).read()
        try:
            mine = samples(om_parse(prom))
        except Exception as e:      # the parser's own error types vary
            check(False, "the file is OpenMetrics (strict parser)", repr(e))
            return
        ex = Exporter(d)
        try:
            served = ex.get()
        finally:
            ex.close()
        theirs = samples(text_parse(served))
        scrape = [v for (n, _), v in theirs.items() if n == "node_textfile_scrape_error"]
        eq(scrape, [0.0], "node_exporter: node_textfile_scrape_error 0")
        path = os.path.join(d, "ksmscan.prom")
        mtime = [v for (n, lab), v in theirs.items() if n == "node_textfile_mtime_seconds"
                 and dict(lab).get("file") == path]
        eq(mtime, [float(int(os.stat(path).st_mtime))],
           "node_textfile_mtime_seconds of the file is its mtime (the age an alert reads)")
        ours = {k: v for k, v in theirs.items() if k[0].startswith("ksmscan_")}
        check(len(mine) > 10, "the file holds ksmscan's samples", prom[:300])
        same_samples(ours, mine, "node_exporter serves every ksmscan sample of the file, as it is")
        # The stopped children's figures: those of a CSV run of ksmscan.
        rows = csv_of([p.pid for p in kids])
        cols = [c for c in next(iter(rows.values())) if c not in TIMING]
        got = want = 0
        for p in kids:
            inp = "pid:%d" % p.pid
            row = rows[inp]
            for c in cols:
                try:
                    v = float(row[c])
                except ValueError:
                    continue            # a text column: a label
                want += 1
                hits = [val for (n, lab), val in mine.items()
                        if n == "ksmscan_" + c and ("input", inp) in lab]
                got += hits == [v]
                if hits != [v]:
                    check(False, "%s %s: %r in the metrics, %r in CSV" % (inp, c, hits, v))
        check(want >= 2 * 10, "the CSV has the summary's figures", repr(cols))
        eq(got, want, "every figure of the stopped children equals ksmscan's CSV")
        # The whole host's row adds up the process rows of the same file.
        for name in ("ksmscan_pages", "ksmscan_zero_pages"):
            procs = sum(v for (n, lab), v in mine.items()
                        if n == name and dict(lab).get("input", "").startswith("pid:"))
            host = [v for (n, lab), v in mine.items()
                    if n == name and dict(lab).get("input") == "*"]
            eq(host, [procs], "%s of * is the sum of the processes'" % name)
    finally:
        end_children(kids)


def om_run(args, what):
    """ksmscan -o openmetrics ARGS: (the strict parser's samples, stderr)."""
    _, om_parse = parser()
    r = run(["-j1", "-o", "openmetrics"] + args)
    eq(r.rc, 0, "%s: exit 0 (%s)" % (what, r.err[-300:]))
    try:
        return samples(om_parse(r.out)), r.err
    except Exception as e:      # the parser's own error types vary
        check(False, "%s: OpenMetrics (strict parser)" % what, repr(e))
        return {}, r.err


def pid_series(mine):
    return {dict(lab)["input"] for (n, lab) in mine
            if n == "ksmscan_pages" and dict(lab).get("input", "").startswith("pid:")}


def left_out(mine):
    return [v for (n, lab), v in mine.items() if n == "ksmscan_processes_left_out"]


@test("monitoring")
def series_per_process_bounded():
    """Processes found by -P (as by --all-processes): no series of their own
    by default, one each with --by=process, at most 500; -p keeps its own."""
    kids = stopped_children(2)
    try:
        pids = sorted(p.pid for p in kids)
        # -P matches the command, and the children's is python's: the test's
        # own pids pick them out of the list.
        regex = os.path.basename(os.path.realpath(sys.executable))[:6]
        mine, err = om_run(["-P", regex], "-P, by default")
        listed = pid_series(om_run(["-P", regex, "--by=process"], "-P --by=process")[0])
        check({"pid:%d" % p for p in pids} <= listed,
              "--by=process: the listed processes' series, the children's among them",
              repr(sorted(listed)[:5]))
        eq(pid_series(mine), set(), "by default: no series per process")
        host = [v for (n, lab), v in mine.items()
                if n == "ksmscan_pages" and dict(lab).get("input") == "*"]
        check(len(host) == 1 and host[0] >= 2 * 96, "by default: the host's series, "
              "with the children's pages at least", repr(host))
        got = left_out(mine)
        check(len(got) == 1 and got[0] >= 2, "ksmscan_processes_left_out{input=\"*\"} "
              "counts the processes with no series (the 2 children at least)", repr(got))
        check(re.search(r"openmetrics: \d+ processes' series left out", err) is not None,
              "by default: one warning naming what was left out", err[-300:])
        mine, err = om_run(["-p%d" % p for p in pids], "-p")
        eq(pid_series(mine), {"pid:%d" % p for p in pids}, "-p: the processes named have theirs")
        eq(left_out(mine), [], "-p: nothing left out, no gauge of it")
    finally:
        end_children(kids)


@test("monitoring")
def series_per_process_capped_at_500():
    """502 processes of a command of the test's own, with --by=process: 500
    series, ksmscan_processes_left_out 2, and a warning saying the cap."""
    name = "omcap%d" % os.getpid()
    exe = tmp(name)
    shutil.copy(shutil.which("sleep"), exe)
    kids = []
    try:
        for _ in range(502):
            kids.append(subprocess.Popen([exe, "600"]))
        mine, err = om_run(["-P", "^%s$" % name, "--by=process"], "502 processes")
        eq(len(pid_series(mine)), 500, "--by=process: at most 500 series of processes")
        eq(left_out(mine), [2.0], "ksmscan_processes_left_out: the 2 past the cap")
        check("2 processes' series left out" in err and "500" in err,
              "one warning naming the 2 left out and the cap", err[-300:])
        mine, _ = om_run(["-P", "^%s$" % name], "502 processes, by default")
        eq((len(pid_series(mine)), left_out(mine)), (0, [502.0]),
           "by default: none of the 502, all counted as left out")
    finally:
        for p in kids:
            p.kill()
            p.wait()


@test("monitoring", app=True)
def failed_runs_keep_the_last_file():
    text_parse, _ = parser()
    d = tmp("atomic")
    os.makedirs(d)
    r = run_service(d)
    if not eq(r.returncode, 0, "a first run: exit 0 (%s)" % r.stderr[-300:]):
        return
    path = os.path.join(d, "ksmscan.prom")
    before = open(path, "rb").read()
    # ksmscan refuses an option given through KSMSCAN_ARGS (passed on).
    r = run_service(d, {"KSMSCAN_ARGS": "--no-such-option"})
    check(r.returncode != 0 and "no-such-option" in r.stderr,
          "an option ksmscan refuses: the run fails, ksmscan says why", r.stderr[-300:])
    eq(open(path, "rb").read(), before, "the refused run leaves the last file as it was")
    eq(os.listdir(d), ["ksmscan.prom"], "and no temporary file")
    # A ksmscan that writes half its output and fails.
    try:
        use_ksmscan("printf '# HELP ksmscan_pages x\\nksmscan_pages{input=\"half'; exit 1")
        r = run_service(d)
        check(r.returncode != 0, "a ksmscan that fails half-way: the run fails")
        eq(open(path, "rb").read(), before, "the half-written run leaves the last file")
        eq(os.listdir(d), ["ksmscan.prom"], "and no temporary file")
        # Half-written and still running: node_exporter serves the last file.
        marker = tmp("half-written")
        use_ksmscan("printf 'ksmscan_pages{input=\"half'; : > %s; exec sleep 60"
                    % shlex.quote(marker))
        argv, env = service_command(d)
        p = subprocess.Popen(argv, env=env, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        ex = None
        try:
            for _ in range(300):
                if os.path.exists(marker):
                    break
                time.sleep(0.02)
            temps = [f for f in os.listdir(d) if f != "ksmscan.prom"]
            check(len(temps) == 1 and not temps[0].endswith(".prom"),
                  "meanwhile the output is a temporary file not named *.prom", repr(temps))
            try:
                ex = Exporter(d)
            except Skip as e:
                skip(str(e))
            if ex:
                theirs = samples(text_parse(ex.get()))
                eq([v for (n, _), v in theirs.items() if n == "node_textfile_scrape_error"],
                   [0.0], "node_exporter reads no half file: scrape error 0")
                mine = samples(text_parse(before.decode()))
                same_samples({k: v for k, v in theirs.items() if k[0].startswith("ksmscan_")},
                             mine, "node_exporter serves the last run's values meanwhile")
        finally:
            if ex:
                ex.close()
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(timeout=30)
        eq(open(path, "rb").read(), before, "killed half-way, the run leaves the last file")
        eq(os.listdir(d), ["ksmscan.prom"], "and removes its temporary file")
    finally:
        use_ksmscan(UNDER_TEST)


@test("monitoring")
def bad_settings_are_one_line():
    installed()
    d = tmp("settings")
    os.makedirs(d)
    r = run_service(tmp("no-such-folder"))
    check(r.returncode == 1 and len(r.stderr.splitlines()) == 1 and
          "no-such-folder" in r.stderr and "KSMSCAN_TEXTFILE_DIR" in r.stderr,
          "a missing textfile directory: exit 1, one line naming it", r.stderr)
    for name in ("../up.prom", "sub/x.prom", ".hidden.prom", "ksmscan.txt", ".prom"):
        r = run_service(d, {"KSMSCAN_TEXTFILE": name})
        check(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and
              "KSMSCAN_TEXTFILE" in r.stderr,
              "KSMSCAN_TEXTFILE=%s: exit 2, one line" % name, r.stderr)
    eq(os.listdir(d), [], "nothing written by the refused settings")
    r = run_service(d, {"KSMSCAN_TEXTFILE": "host-ksm.prom"})
    eq((r.returncode, os.listdir(d)), (0, ["host-ksm.prom"]),
       "KSMSCAN_TEXTFILE names the file")


@test("monitoring", app=True)
def units_are_sound():
    st = installed()
    unit = unit_sections(st["unit"])
    env = dict(w.partition("=")[::2] for k, v in unit["Service"] if k == "Environment"
               for w in shlex.split(v))
    try:
        h = subprocess.run([app([EXPORTER], "prometheus-node-exporter"), "--help"],
                           capture_output=True, text=True)
        m = re.search(r'--collector\.textfile\.directory="([^"]*)"', h.stdout + h.stderr)
        eq(env.get("KSMSCAN_TEXTFILE_DIR"), m and m.group(1),
           "the default textfile directory is node_exporter's own default")
    except Skip as e:
        skip(str(e))
    eq(env.get("KSMSCAN_TEXTFILE"), "ksmscan.prom", "the default file: ksmscan.prom")
    files = [v for k, v in unit["Service"] if k == "EnvironmentFile"]
    check(files and all(f.startswith("-") for f in files),
          "the EnvironmentFile is optional (-): the unit runs without one", repr(files))
    eq(dict(unit_sections(st["timer"]).get("Install", [])).get("WantedBy"), "timers.target",
       "the timer is enabled into timers.target")
    if not shutil.which("systemd-analyze"):
        raise Skip("systemd-analyze missing")
    r = subprocess.run(["systemd-analyze", "verify", "--man=no", st["unit"], st["timer"]],
                       capture_output=True, text=True)
    eq((r.returncode, r.stdout + r.stderr), (0, ""), "systemd-analyze verify: both units")
    # The verifier can fail: the same service with a command that is missing.
    bad = tmp("bad") + "/ksmscan-metrics.service"
    os.makedirs(os.path.dirname(bad))
    with open(bad, "w") as f:
        f.write(open(st["unit"]).read().replace("/ksmscan-metrics ", "/ksmscan-metricz "))
    r = subprocess.run(["systemd-analyze", "verify", "--man=no", bad],
                       capture_output=True, text=True)
    check(r.returncode != 0 and "ksmscan-metricz" in r.stderr,
          "systemd-analyze verify rejects a service whose command is missing", r.stderr)


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-monitoring-"))
