#!/usr/bin/python3
"""The command line's promises that are not about figures: the progress line,
`make install`, and that --help, the man page and the documentation (README.md, docs/) name the same
options (the oracle for documentation is the option table of ksmscan.c's
getopt_long, read from the source).
"""
import glob, os, re, shutil, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import KSMSCAN, check, eq, run_suite, skip, test, tmp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRICKLE = r'''
import os, sys, time
page = bytes(range(256)) * 16
for i in range(int(sys.argv[1])):
    os.write(1, page[:-1] + bytes([i % 256]))
    time.sleep(0.02)
'''


def trickle(args, pages=40):
    """ksmscan reading pages that arrive slowly through a pipe."""
    feed = subprocess.Popen([sys.executable, "-c", TRICKLE, str(pages)],
                            stdout=subprocess.PIPE)
    r = subprocess.run(KSMSCAN + args + ["--csv", "-"], stdin=feed.stdout,
                       capture_output=True, timeout=120)
    feed.wait()
    # Bytes, not text mode: a "\r" must stay what it is.
    r.stdout = r.stdout.decode()
    r.stderr = r.stderr.decode()
    return r


@test("progress")
def progress_line():
    r = trickle(["--progress"])
    eq(r.returncode, 0, "--progress: exit status")
    check("pages/s" in r.stderr and "\rksmscan: " in r.stderr,
          "--progress draws a progress line on stderr", repr(r.stderr[:200]))
    check(r.stderr.endswith("\r\033[K") or "\033[K" in r.stderr,
          "--progress erases its line at the end", repr(r.stderr[-40:]))
    check(r.stdout.splitlines()[1].split(",")[3] == "40",
          "--progress: stdout still holds the figures (40 pages)", repr(r.stdout))
    r = trickle(["--no-progress"])
    eq(r.stderr, "", "--no-progress: nothing on stderr")
    r = trickle([])
    eq(r.stderr, "", "stderr not a terminal: no progress line by default")


def peak_rss(args):
    """Run ksmscan under /usr/bin/time: its exit status and peak resident set
    in bytes. (A child forked by Python inherits Python's high-water mark
    through exec, so wait4's ru_maxrss would measure Python.)"""
    out = tmp("rss.txt")
    r = subprocess.run(["/usr/bin/time", "-f", "%x %M", "-o", out] + KSMSCAN + args,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        rc, kib = f.read().split()[-2:]
    return int(rc), int(kib) * 1024


def unique_image(name, pages):
    path = tmp(name)
    with open(path, "wb") as f:
        for _ in range(0, pages, 4096):
            f.write(os.urandom(4096 * min(4096, pages)))
    return path


@test("memory")
def memory_per_page():
    """The issue's bound: peak memory at most 32 bytes per scanned page + 64
    MiB with one checksum. Unique pages are the worst case (nothing is shared);
    the slope between two sizes is the cost per page, whatever the constant."""
    if any(x in os.path.basename(KSMSCAN[0]) or x in KSMSCAN[0]
           for x in ("build-check", "build-tsan")):
        skip("peak RSS is measured on the release build (sanitizers add shadow memory)")
        return
    small, large = 16384, 131072
    a = unique_image("uniq-small.img", small)
    b = unique_image("uniq-large.img", large)
    # Both once into the page cache, as a scan would leave them.
    for p in (a, b):
        with open(p, "rb") as f:
            while f.read(1 << 20):
                pass
    rc, rss = peak_rss(["--csv", "--no-progress", b])
    eq(rc, 0, "unique image: exit status")
    check(rss <= 32 * large + (64 << 20),
          "peak RSS within 32 B per page + 64 MiB",
          "%d pages: %.1f MiB" % (large, rss / 2**20))
    # The slope with one thread: the pages mapped ahead of the count by
    # workers vary from run to run by a few MiB, which would hide it.
    rc_a, rss_a = peak_rss(["-j", "1", "--csv", "--no-progress", a])
    rc_b, rss_b = peak_rss(["-j", "1", "--csv", "--no-progress", b])
    eq((rc_a, rc_b), (0, 0), "unique images -j 1: exit status")
    slope = (rss_b - rss_a) / (large - small)
    print("memory: %.1f B/page (%.1f -> %.1f MiB)" % (slope, rss_a / 2**20, rss_b / 2**20))
    check(slope <= 32, "memory per further distinct page at most 32 bytes",
          "%.1f B/page (%.1f -> %.1f MiB)" % (slope, rss_a / 2**20, rss_b / 2**20))
    os.unlink(a)
    os.unlink(b)


def long_options():
    """The long options of the table of options (cli/options.c): its rows
    are FLAG("name", ...), STRING(...), VALUE(...), CALL(...) or written
    out as { "name", ... }."""
    src = open(os.path.join(ROOT, "cli", "options.c")).read()
    table = src[src.index("static const struct opt_row table[]"):]
    table = table[:table.index("\n};")]
    return sorted(set(option_letters(table)))


def option_letters(table=None):
    """{long name: short letter or ''} of the table of options."""
    if table is None:
        src = open(os.path.join(ROOT, "cli", "options.c")).read()
        table = src[src.index("static const struct opt_row table[]"):]
        table = table[:table.index("\n};")]
    out = {}
    for m in re.finditer(r'(?:(?:FLAG|STRING|VALUE|CALL)\(\s*|\{ )"([a-z-]+)",\s*'
                         r"(0|'(.)')", table):
        out[m.group(1)] = m.group(3) or ""
    return out


def bash_completes(word):
    """What completions/ksmscan.bash offers for @word, run in bash."""
    script = ('source "%s"; COMP_WORDS=(ksmscan %s); COMP_CWORD=1; _ksmscan; '
              'printf "%%s\\n" "${COMPREPLY[@]}"' %
              (os.path.join(ROOT, "completions", "ksmscan.bash"), word))
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(KSMSCAN[-1])) +
               ":" + os.environ.get("PATH", ""))
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                       env=env)
    return set(r.stdout.split())


@test("docs")
def options_documented():
    help_text = subprocess.run(KSMSCAN + ["--help"], capture_output=True,
                               text=True).stdout
    man = open(os.path.join(ROOT, "man", "ksmscan.1")).read().replace("\\-", "-")
    # README.md and docs/*.md: the README is short and links the pages that
    # explain the options.
    readme = "".join(open(f).read() for f in [os.path.join(ROOT, "README.md")] + sorted(
        glob.glob(os.path.join(ROOT, "docs", "*.md"))))
    opts = long_options()
    check(len(opts) >= 50, "the table of options has every long option", repr(opts))
    synopsis = man[man.index(".Sh SYNOPSIS"):man.index(".Sh DESCRIPTION")]
    letters = option_letters()
    zsh = open(os.path.join(ROOT, "completions", "_ksmscan")).read()
    bash = bash_completes("--")
    for o in opts:
        check("--" + o in help_text or (o in ("csv", "json") and "--csv" in help_text),
              "--help names --%s" % o)
        check(re.search(r"Fl (\\-)?-?%s\b" % re.escape(o), man) or "-" + o in man,
              "the man page names --%s" % o)
        check("--" + o in readme, "README.md or docs/ names --%s" % o)
        check(re.search(r"Fl (\\-)?-?%s\b" % re.escape(o), synopsis) or
              (letters[o] and re.search(r"Fl [a-zA-Z]*%s" % letters[o], synopsis)),
              "the man page's SYNOPSIS names --%s or its letter" % o)
        check("--" + o in zsh, "completions/_ksmscan completes --%s" % o)
        check("--" + o in bash, "completions/ksmscan.bash, run in bash, "
              "completes --%s" % o, repr(sorted(bash))[:300])
    # The usage line of --help is the man page's SYNOPSIS, option for option.
    usage = help_text.split("\n\n")[0]
    for short in re.findall(r"-([a-zA-Z]) ", usage):
        check("Fl %s" % short in man, "SYNOPSIS has -%s of the usage line" % short)
    r = subprocess.run(["groff", "-mandoc", "-ww", "-z", os.path.join(ROOT, "man", "ksmscan.1")],
                       capture_output=True, text=True)
    eq((r.returncode, r.stderr), (0, ""), "man page renders without warnings")
    # Quotes pair up as rendered: no quote opens inside another (mdoc's
    # '.Pq Sq a , Sq b' nests the second in the first).
    r = subprocess.run(["groff", "-mandoc", "-Tutf8", os.path.join(ROOT, "man", "ksmscan.1")],
                       capture_output=True, text=True)
    text = re.sub(r".\x08", "", r.stdout)
    nested = [m.group(0) for m in re.finditer(r"\u2018[^\u2019]{0,60}\u2018", text)]
    eq(nested, [], "the rendered man page nests no quotes")


@test("usage")
def sizes_take_units_and_decimals():
    """Wherever a size is taken, K/M/G/T and decimals with them: the same
    bytes written either way give the same output; a size without a unit
    must be whole, and a usage error is one line and the pointer to --help."""
    from ksmtest import fixture, run
    img = fixture("vectors.img")
    same = [(["-o", "json", "--range=4K-8.5K"], ["-o", "json", "--range=4096-8704"]),
            (["-o", "json", "--range=0x1000-0.0078125M"],
             ["-o", "json", "--range=4096-8192"])]
    snap = tmp("sizes.raw")
    with open(snap, "wb") as f:
        f.write(bytes(8192) + b"\1" * 8192)
    series = ["--series", snap, snap, "--policy=ksmtuned", "-o", "json",
              "--scans=3"]
    same += [(series + ["--host-memory=1.8G", "--host-used=0.25G"],
              series + ["--host-memory=%d" % int(1.8 * 2**30),
                        "--host-used=%d" % (2**28)])]
    for a, b in same:
        ra, rb = run(a + ([img] if "--series" not in a else [])), \
            run(b + ([img] if "--series" not in b else []))
        strip = lambda t: re.sub(r'"(hash_mib_s|ns_per_page|seconds|'
                                 r'[a-z_]*cpu[a-z_]*)": [0-9.e+-]+', "", t)
        check(ra.rc == 0 and strip(ra.out) == strip(rb.out),
              "%s equals %s" % (" ".join(a[-2:]), " ".join(b[-2:])),
              ra.brief() + rb.brief())
    r = run(series + ["--host-memory=64G", "--host-used=0"])
    eq(r.rc, 0, "--host-used=0 is a size, not a missing one (%s)" % r.err.strip())
    for bad in ("--host-memory=1.5", "--host-memory=1.8X", "--range=1.5-3",
                "--host-memory=-1G", "--range=2G-1.5G"):
        r = run(series[:3] + [bad] if "host" in bad else [bad, img])
        lines = r.err.splitlines()
        check(r.rc == 2 and len(lines) == 2 and lines[0].startswith("ksmscan: ") and
              lines[1] == "Try 'ksmscan --help'.", "%s: one line, then "
              "Try 'ksmscan --help'." % bad, r.brief())


@test("usage")
def one_grammar_for_numbers():
    """Every option's number is read one way (ksmscan(1), NUMBERS AND SIZES):
    digits with at most one point, K/M/G/T in upper case for sizes, '%' for
    percents, s/ms/us/m/h for durations; no exponent, hex (but --range's
    addresses), lower-case unit, sign or space; each range checked, every
    duration at most 1000h. Refused: exit 2, one line naming the option,
    then the pointer to --help. Accepted forms give the bytes written out."""
    from ksmtest import fixture, run
    img = fixture("vectors.img")
    snap = tmp("grammar.raw")
    with open(snap, "wb") as f:
        f.write(bytes(8192) + b"\1" * 8192)
    series = ["--series", snap, snap, "--policy=ksmtuned", "-o", "json", "--scans=3",
              "--host-used=0"]
    strip = lambda t: re.sub(r'"(hash_mib_s|ns_per_page|seconds|'
                             r'[a-z_]*cpu[a-z_]*)": [0-9.e+-]+', "", t)
    # .5M is half an M, 1.M is 1M: --range's pages are the oracle (a page is
    # in when its address is), on an image of 512 distinct pages
    big = tmp("grammar-big.raw")
    with open(big, "wb") as f:
        f.write(b"".join(bytes([i % 251 + 1]) * 8 + i.to_bytes(4, "little") * 1022
                         for i in range(512)))
    for rng, pages in (("--range=.5M-1.5M", 256), ("--range=1.M-1.5M", 128),
                       ("--range=0x80000-1572864", 256), ("--range=.25M-.5M", 64),
                       ("--range=0-1.999999999999999999999M", 512)):
        r = run(["--csv", rng, big])
        rows = [l.split(",") for l in r.out.splitlines()[1:2]]
        eq((r.rc, rows[0][3] if rows else None), (0, str(pages)),
           "%s: pages (%s)" % (rng, r.err.strip()))
    # sizes with a point are accepted the same as written out
    for a, b in (("--host-memory=.5G", "--host-memory=%d" % 2**29),
                 ("--host-memory=5.G", "--host-memory=%d" % (5 * 2**30)),
                 ("--host-memory=1.5K", "--host-memory=1536"),
                 ("--host-memory=4096T", "--host-memory=%d" % 2**52)):
        ra, rb = run(series + [a]), run(series + [b])
        check(ra.rc == 0 and strip(ra.out) == strip(rb.out),
              "%s equals %s" % (a, b), ra.brief() + rb.brief())
    accepted = [series + ["--interval=1000h", "--host-memory=1G"],
                series + ["--interval=1ms", "--host-memory=1G"],
                ["--series", snap, snap, "--policy=advisor", "--scans=2",
                 "--advisor-target-scan-time=1000h"],
                ["--series", snap, snap, "--scans=2", "--write-rate=.5%"],
                ["--range=0x1000-0x3000", img], ["--top=007", img],
                ["--series", snap, snap, "--policy=advisor", "--scans=2",
                 "--advisor-max-cpu=70%"]]
    for args in accepted:
        r = run(args)
        eq(r.rc, 0, "%s is accepted (%s)" % (" ".join(a for a in args if a.startswith("--")
                                                      and a not in series), r.err.strip()))
    refused = [
        ("host-memory", b) for b in ("1e3G", "1g", "1k", "18446744073709551615",
                                     "16777216T", "4097T", "4503599627370497",
                                     "0x10G", "+5G", " 5G", "5 G", "5G ", "1.5",
                                     ".G", ".", "5..5G", "5Gi", "-0", "inf", "nan")]
    refused += [("max-cpu", b) for b in ("0x5", "5e0", "+5", " 5", "5 %", "5%%",
                                         "-5", "0X5", "inf")]
    refused += [("advisor-max-cpu", b) for b in ("70.5", "0x46", "70%%", "%", "101%")]
    refused += [("tolerance", b) for b in ("0x5", "1e1", "+5", "5.5.5")]
    refused += [("write-rate", b) for b in ("1e-2", "0x1", "2.%%", "+0.1")]
    refused += [("top", b) for b in ("0x5", "1K", "5.0", "+5", "5 ", "1e1")]
    refused += [("scans", b) for b in ("1K", "0x10", "2.")]
    refused += [("interval", b) for b in ("1001h", "3600001s", "1e3s", "0x10s",
                                          "1S", "1H", "+1s", "1 s", "0.5us")]
    refused += [("advisor-target-scan-time", b) for b in ("1001h", "3600001",
                                                         "1.5s", "1e3", "0.5s")]
    refused += [("target", b) for b in ("90%@1001h", "90%@1e3s", "0x1@1h",
                                        "1e-1@1h", "90%@0.5ms")]
    refused += [("page-cost", b) for b in ("1e-6", "2s", "3ns")]
    refused += [("range", b) for b in ("1e3-2e3", "0x10K-0x20K", "4k-8k", "+1-2")]
    for name, bad in refused:
        r = run(["--series", "--%s=%s" % (name, bad), snap, snap] if name not in
                ("range", "top") else ["--%s=%s" % (name, bad), img])
        lines = r.err.splitlines()
        check(r.rc == 2 and len(lines) == 2 and
              lines[0].startswith("ksmscan: --%s wants " % name) and
              lines[1] == "Try 'ksmscan --help'.",
              "--%s=%s: refused in one line naming the option" % (name, bad), r.brief())


@test("docs")
def readme_short_and_links_every_page():
    """The README reads in five minutes and is the way in: under 300 lines,
    linking every page of docs/; the docs' pages link back to it."""
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    check(readme.count("\n") < 300, "README.md is under 300 lines", "%d" % readme.count("\n"))
    pages = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
    check(len(pages) >= 8, "docs/ has a page per topic", repr(pages))
    eq([p for p in pages if "](docs/%s)" % p not in readme], [], "README.md links every docs/ page")
    for p in pages:
        with open(os.path.join(ROOT, "docs", p)) as f:
            text = f.read()
        check(text.startswith("# "), "docs/%s starts with its title" % p)
        for target in re.findall(r"\]\(([^)#:]+\.md)\)", text):
            if target != "fleet.md":        # fleet/ksmfleet's page, written apart
                check(os.path.exists(os.path.join(ROOT, "docs", target)),
                      "docs/%s links %s, which exists" % (p, target))


@test("install")
def make_install():
    dest = tmp("dest")
    r = subprocess.run(["make", "-s", "-C", ROOT, "install", "DESTDIR=" + dest,
                        "PREFIX=/usr", "MANDIR=/usr/share/man"],
                       capture_output=True, text=True)
    eq(r.returncode, 0, "make install DESTDIR=... exit status")
    exe = os.path.join(dest, "usr", "bin", "ksmscan")
    check(os.access(exe, os.X_OK), "make install puts an executable in $DESTDIR$PREFIX/bin")
    check(os.path.exists(os.path.join(dest, "usr", "share", "man", "man1", "ksmscan.1")),
          "make install puts the man page in $DESTDIR$MANDIR/man1")
    if os.access(exe, os.X_OK):
        r = subprocess.run([exe, "--version"], capture_output=True, text=True)
        check(r.returncode == 0 and r.stdout.startswith("ksmscan "),
              "the installed binary runs", repr(r.stdout))
        out = subprocess.run(["file", exe], capture_output=True, text=True).stdout
        check("statically linked" in out or "static-pie" in out,
              "the installed binary is static", out)


VANISH = r"""
import mmap, sys
maps = []
for _ in range(64):                      # 64 x 8 MiB = 512 MiB, touched
    m = mmap.mmap(-1, 8 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    for off in range(0, 8 << 20, 4096):
        m[off] = 1 + off // 4096 % 250
    maps.append(m)
sys.stdout.write("ready\n"); sys.stdout.flush()
sys.stdin.readline()                     # "go": unmap everything, then wait
for m in maps:
    m.close()
sys.stdout.write("gone\n"); sys.stdout.flush()
sys.stdin.readline()
"""


def reading(pid, nbytes=16 << 20, limit=60):
    """Wait until process @pid has read @nbytes (rchar: ksmscan reading the
    child's memory), so that the memory goes while it is read, not before
    its maps were (a slow build, as the sanitizers', started that late)."""
    end = time.time() + limit
    while time.time() < end:
        try:
            with open("/proc/%d/io" % pid) as f:
                io = dict(line.split(": ") for line in f.read().splitlines())
        except OSError:
            return                  # done already, or io unreadable
        if int(io["rchar"]) >= nbytes:
            return
        time.sleep(0.01)


@test("pid")
def process_unmaps_during_the_scan():
    """Memory that goes away while it is read: a warning naming the process,
    exit status 0, and the figures for what was read (fewer pages)."""
    child = subprocess.Popen([sys.executable, "-c", VANISH], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        child.stdout.readline()
        scan = subprocess.Popen(KSMSCAN + ["-j1", "--csv", "-p", str(child.pid)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        reading(scan.pid)
        child.stdin.write("go\n")
        child.stdin.flush()
        child.stdout.readline()
        out, err = scan.communicate(timeout=120)
        eq(scan.returncode, 0, "memory unmapped during the scan: exit status 0")
        rows = out.splitlines()
        pages = int(rows[1].split(",")[3]) if len(rows) > 1 else -1
        check(0 <= pages <= 64 * 2048, "memory unmapped during the scan: figures for "
              "what was read (%d pages)" % pages)
        if pages == 64 * 2048:
            # The scan won the race on a fast machine: nothing vanished.
            print("info: the scan finished before the memory was unmapped")
        else:
            check("memory changed during the scan" in err and
                  err.startswith("ksmscan: pid:%d: " % child.pid),
                  "memory unmapped during the scan: one warning naming the process",
                  repr(err[:300]))
    finally:
        child.kill()
        child.wait()


@test("pid")
def permission_denied():
    """Another user's process: exit 1 and one line saying what is needed."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        skip("needs root and setpriv to run ksmscan as another user")
        return
    child = subprocess.Popen(["sleep", "30"])
    try:
        exe = os.path.abspath(KSMSCAN[0])
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            exe] + KSMSCAN[1:] + ["--csv", "-p", str(child.pid)],
                           capture_output=True, text=True, timeout=60)
        eq(r.returncode, 1, "-p on another user's process: exit status 1")
        err = r.stderr.splitlines()
        check(len(err) == 1 and err[0].startswith("ksmscan: pid:%d: " % child.pid) and
              "permission" in err[0], "-p on another user's process: one line naming "
              "the pid and the permission", repr(r.stderr))
    finally:
        child.kill()
        child.wait()


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-cli-"))
