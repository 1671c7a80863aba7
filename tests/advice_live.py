"""`-r advise ... -o sh` applied to the running kernel's KSM, and the promise
checked against the kernel: shared by the live suites that hold a workload
(tests/test_guests_live.py: QEMU guests; tests/test_apps_live.py: Redis).

The caller holds a KsmSession (tests/live.py, KSM idle at entry) and the
workload's pids, KSM stopped.  applied() then:

  - asks `ksmscan -p PIDS --interval=1s --count=8 -r advise
    --target=90%@60s --max-cpu=5 -o sh` for the script;
  - forecasts at the setting the script writes (`-o json`): 90% of that
    forecast's settled pages_sharing is the saving the target promises;
  - runs the script with sh, KSM_SYSFS on the session's folder (each knob
    it writes saved by the session first, so that leaving puts it back);
  - polls pages_sharing until the target time +20%, and reads ksmd's
    utime+stime (/proc/PID/stat of the kernel thread) over that wall time;
  - runs `ksmscan --check=FORECAST --tolerance=20` at that time.

held() turns the result into the suite's checks: the script writes a
setting and starts KSM, the target is reached by the target time (+20%),
ksmd's measured CPU stays within --max-cpu (+20%), --check passes.
"""
import json
import os
import re
import subprocess
import time

TARGET_SECONDS = 60
MAX_CPU = 5.0            # percent of one CPU, --max-cpu
TOLERANCE = 20.0         # percent: the time, the CPU, --check
SAMPLE = ["--interval=1s", "--count=8"]
POLL = 0.05
SCRIPT_WRITE = re.compile(r"""^(?:printf '%s\\n'|echo) (\S+) > "?\$ksm"?/(\w+)$""")
SAID = re.compile(r"^# ksmscan -r advise.* at ([0-9.]+)% CPU")


def ksmd_pid(proc="/proc"):
    """The ksmd kernel thread's pid, or None."""
    for pid in (p for p in os.listdir(proc) if p.isdigit()):
        try:
            with open(os.path.join(proc, pid, "comm")) as f:
                if f.read().strip() == "ksmd":
                    return int(pid)
        except OSError:
            continue
    return None


def cpu_ticks(pid):
    """utime + stime of @pid (clock ticks), from /proc/PID/stat."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])   # fields 14 and 15 of stat(5)


def script_settings(script):
    """{name: value} the script's commands write (`printf '%s\\n' V >
    "$ksm"/NAME`, or `echo V > $ksm/NAME`); commented lines are not commands."""
    out = {}
    for line in script.splitlines():
        m = SCRIPT_WRITE.match(line.strip())
        if m:
            out[m.group(2)] = m.group(1).strip("'")
    return out


def combined(rows):
    """The last row of the combined input ("*") of a report, or its last row."""
    star = [r for r in rows if r.get("input") == "*"]
    return (star or rows)[-1]


def pid_args(pids):
    return sum((["-p", str(p)] for p in pids), [])


def run(args, what):
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if r.returncode:
        raise RuntimeError("%s: exit %d: %s" % (what, r.returncode, r.stderr.strip()[-300:]))
    return r.stdout


def advise(ksmscan, pids, seconds, max_cpu):
    return run(ksmscan + pid_args(pids) + SAMPLE + [
        "-r", "advise", "--target=90%%@%ds" % seconds,
        "--max-cpu=%g" % max_cpu, "-o", "sh"], "advise")


def forecast_at(ksmscan, pids, settings):
    """The forecast (JSON text) at the setting the script writes."""
    return run(ksmscan + pid_args(pids) + SAMPLE + [
        "--pages-to-scan=%s" % settings["pages_to_scan"],
        "--sleep-ms=%s" % settings.get("sleep_millisecs", 20),
        "--smart-scan=1", "-o", "json"], "forecast")


def apply_script(ks, script):
    """Run the script into the real folder, each knob it writes saved first
    by the session (which puts it back, and unmerges, on leaving)."""
    for name in script_settings(script):
        ks.set(name, ks.read(name))        # remembered, unchanged
    r = subprocess.run(["sh"], input=script, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, KSM_SYSFS=ks.root))
    if r.returncode:
        raise RuntimeError("the script: exit %d: %s" % (r.returncode, r.stderr.strip()))
    ks.set("run", 1)                       # the script started KSM: the session knows


def applied(ks, ksmscan, pids, kpid, workdir, seconds=TARGET_SECONDS, max_cpu=MAX_CPU):
    """Advise (--target=90%@SECONDS --max-cpu=MAX_CPU), apply, watch (see
    the module's text).  Returns a dict of what held() checks and prints."""
    script = advise(ksmscan, pids, seconds, max_cpu)
    want = script_settings(script)
    res = dict(script=script, want=want, reached=None, cpu=None, check=None,
               seconds=seconds, max_cpu=max_cpu, window=seconds * (1 + TOLERANCE / 100))
    said = [m.group(1) for m in map(SAID.match, script.splitlines()) if m]
    res["said"] = said[-1] if said else "?"
    if "pages_to_scan" not in want or want.get("run") != "1":
        return res
    text = forecast_at(ksmscan, pids, want)
    res["final"] = combined(json.loads(text)["timeline"])["pages_sharing"]
    hz = os.sysconf("SC_CLK_TCK")
    res["load"] = os.getloadavg()[0]
    c0, t0 = cpu_ticks(kpid), time.time()
    apply_script(ks, script)
    while time.time() - t0 < res["window"]:
        if res["reached"] is None and ks.read("pages_sharing") >= 0.9 * res["final"]:
            res["reached"] = time.time() - t0
        time.sleep(POLL)
    res["cpu"] = 100.0 * (cpu_ticks(kpid) - c0) / hz / (time.time() - t0)
    res["load"] = max(res["load"], os.getloadavg()[0])
    res["sharing"] = ks.read("pages_sharing")
    path = os.path.join(workdir, "advice-forecast.json")
    with open(path, "w") as f:
        f.write(text)
    res["check"] = subprocess.run(ksmscan + ["--check=" + path, "--tolerance=%g" % TOLERANCE,
                                             "-o", "csv"],
                                  capture_output=True, text=True, timeout=120)
    os.unlink(path)
    return res


def held(res, check, label):
    """The suite's checks on applied()'s result (@check: the suite's
    check(cond, what, detail)), the figures printed first."""
    want = res["want"]
    if not check("pages_to_scan" in want and want.get("run") == "1",
                 "%s: the advice script writes a setting and starts KSM" % label,
                 res["script"][-400:]):
        return
    print("# advice (%s): pages_to_scan %s, sleep_millisecs %s, said %s%% CPU" % (
        label, want.get("pages_to_scan"), want.get("sleep_millisecs"), res["said"]))
    print("#   target 90%% of %d pages_sharing (%d) by %d s: reached %s (%d at %.0f s); "
          "--max-cpu %g%%: ksmd measured %.2f%%; load %.1f on %d CPUs" % (
              res["final"], 0.9 * res["final"], res["seconds"],
              "never" if res["reached"] is None else "at %.1f s" % res["reached"],
              res["sharing"], res["window"], res["max_cpu"], res["cpu"],
              res["load"], os.cpu_count()), flush=True)
    check(res["reached"] is not None and res["reached"] <= res["window"],
          "%s: 90%% of the saving by the target time (+%g%%)" % (label, TOLERANCE),
          "reached %r" % res["reached"])
    check(res["cpu"] <= res["max_cpu"] * (1 + TOLERANCE / 100),
          "%s: ksmd's CPU within --max-cpu (+%g%%)" % (label, TOLERANCE),
          "%.2f%%" % res["cpu"])
    r = res["check"]
    check(r.returncode == 0, "%s: --check --tolerance=%g at the target time passes"
          % (label, TOLERANCE), r.stdout[-1500:] + r.stderr)
