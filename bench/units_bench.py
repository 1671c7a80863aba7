#!/usr/bin/python3
"""make bench, part 5: every process of this host, by cgroup, and the page
records of the thp and numa reports.

Times, best of three and interleaved, on the same processes (whatever runs
here, so the figures are this host's, not comparable between hosts):
  ksmscan -q --all-processes                         the plain scan
  ksmscan -q --all-processes --by=cgroup             plus a row per cgroup
  ksmscan -q --all-processes --by=cgroup -r doctor,thp,numa
                                                    plus smaps, pagemap and
                                                    move_pages per process
and prints the pages read. Benchmarks are not tests.
"""
import csv, io, os, subprocess, time

KSMSCAN = os.path.abspath(os.environ.get("KSMSCAN", "./ksmscan"))


def best(cmds, rounds=3):
    times = [float("inf")] * len(cmds)
    for _ in range(rounds):
        for i, c in enumerate(cmds):
            t = time.perf_counter()
            subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[i] = min(times[i], time.perf_counter() - t)
    return times


def main():
    base = [KSMSCAN, "-q", "--all-processes"]
    out = subprocess.run(base + ["--csv", "--by=cgroup"], capture_output=True,
                         text=True).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    star = [r for r in rows if r["input"] == "*"]
    groups = [r for r in rows if r["input"].startswith("cgroup:")]
    pages = int(star[0]["pages"]) if star else 0
    cmds = [base, base + ["--by=cgroup"],
            base + ["--by=cgroup", "-r", "doctor,thp,numa"]]
    t = best(cmds)
    print("units: --all-processes here: %d processes, %d cgroups, %d pages"
          % (len(rows) - len(groups) - len(star), len(groups), pages))
    for name, s in zip(("plain", "--by=cgroup", "--by=cgroup -r doctor,thp,numa"), t):
        print("  %-32s %7.3f s  %8.0f pages/s" % (name, s, pages / s if s else 0))


if __name__ == "__main__":
    main()
