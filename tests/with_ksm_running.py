#!/usr/bin/python3
"""Run a command while the kernel's KSM runs with pages merged.

    KSMSCAN_LIVE_TESTS=1 tests/with_ksm_running.py make test

Every suite that is not a live one must pass whatever the host's KSM is
doing (a hypervisor runs it); .ci/run checks that with this script.  Only
with KSMSCAN_LIVE_TESTS=1 and an idle KSM (tests/live.py's rules, through
its KsmSession): a child process of this script's own holds PAGES identical
pages marked mergeable (mmap, madvise MADV_MERGEABLE); KSM is started
(run=1) until at least MIN_SHARING of them are merged (pages_sharing), then
the command runs, without KSMSCAN_LIVE_TESTS (the live suites see a busy
KSM and skip themselves; nothing in the command changes KSM). Afterwards
the child ends, and the session unmerges (run=2, since it started KSM
itself) and writes every setting back: also on SIGTERM, SIGINT or SIGHUP.

When KSM may not be used here, one line says why and the command is not
run (exit 0: the plain run of the command is .ci/run's other step).
The exit status is the command's; 1 when KSM merged nothing in time.
--ksm-root and --proc point the session at a fake folder (the tests do).
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live  # noqa: E402

PAGES = 512
MIN_SHARING = 32
MERGE_TIMEOUT = 120
# The child: PAGES pages of one content, private (KSM merges no shared
# memory: mmap's default MAP_SHARED never merges), mergeable; "ready", then
# it waits for its standard input to close.
CHILD = r"""
import mmap, sys
m = mmap.mmap(-1, %d * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(%d):
    m[i * 4096:(i + 1) * 4096] = b"ksmscan with_ksm_running".ljust(4096, b".")
m.madvise(mmap.MADV_MERGEABLE)
print("ready", flush=True)
sys.stdin.read()
""" % (PAGES, PAGES)


def say(text):
    print("with_ksm_running: %s" % text, flush=True)


def parse(argv):
    """(ksm root, proc root, command)."""
    root, proc = live.KSM_ROOT, live.PROC
    while argv and argv[0].startswith("--"):
        opt = argv.pop(0)
        if opt == "--":
            break
        name, _, value = opt.partition("=")
        if name == "--ksm-root":
            root = value
        elif name == "--proc":
            proc = value
        else:
            raise SystemExit("with_ksm_running: unknown option %s" % opt)
    if not argv:
        raise SystemExit("usage: with_ksm_running.py [--ksm-root=DIR] [--proc=DIR] COMMAND...")
    return root, proc, argv


def wait_merged(ks, child):
    """Poll the counters until MIN_SHARING pages are merged: True, or False
    at MERGE_TIMEOUT (or when the child died)."""
    deadline = time.time() + MERGE_TIMEOUT
    while time.time() < deadline and child.poll() is None:
        if ks.read("pages_sharing") >= MIN_SHARING:
            return True
        time.sleep(0.1)
    return False


def with_ksm(ks, cmd):
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        if child.stdout.readline().strip() != "ready":
            say("the mergeable child did not start")
            return 1
        ks.set("sleep_millisecs", 20)
        ks.set("pages_to_scan", max(ks.read("pages_to_scan"), PAGES))
        ks.set("run", 1)
        if not wait_merged(ks, child):
            say("KSM merged no %d pages in %d s: %r" % (MIN_SHARING, MERGE_TIMEOUT,
                                                         ks.counters()))
            return 1
        say("KSM running, %s; running: %s" % (
            ", ".join("%s=%s" % kv for kv in ks.counters().items()), " ".join(cmd)))
        env = {k: v for k, v in os.environ.items() if k != live.ENV_VAR}
        rc = subprocess.run(cmd, env=env).returncode
        say("KSM was running throughout, %s at the end; %s exited %d" % (
            ", ".join("%s=%s" % kv for kv in ks.counters().items()), cmd[0], rc))
        return rc
    finally:
        child.stdin.close()
        child.wait()


def main(argv):
    root, proc, cmd = parse(list(argv))
    try:
        session = live.ksm_session(root, proc)
    except live.NotAllowed as e:
        say("SKIP, not run with KSM running: %s" % e)
        return 0
    with session as ks:
        rc = with_ksm(ks, cmd)
    problems = ks.restore()
    if problems or ks.changed():
        say("KSM settings not restored: %r %r" % (problems, ks.changed()))
        return rc or 1
    say("KSM unmerged and every setting restored")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
