#!/usr/bin/python3
"""Nothing a file does can hurt the host or bend a figure: each case an attack
that once worked, kept as a regression. The oracles are this file's own
pages and counts, Python's XML and CSV parsers, and, where installed,
LibreOffice and headless Chromium reading what ksmscan wrote.

- FIFOs, sockets and character devices named as inputs (a symbolic link to
  /dev/zero in a dump folder) are refused before any read: no hang, no
  endless read; standard input may still be a pipe;
- --svg never replaces an input, nor a file that is not an earlier picture
  ("--svg a.img b.img"), and replaces a symbolic link rather than its target;
- names with quotes cannot inject attributes into the SVG; names a
  spreadsheet would evaluate (= + - @) are defused in CSV;
- -f raw reads the bytes as they are, even when they begin with a
  compression magic;
- a streamed kdump whose header is forged is refused before it is copied;
  a flattened one with a huge record stops at the temporary file system's
  reserve.
"""
import csv, io, os, shutil, socket, stat, subprocess, sys, tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import PAGE, Skip, app, check, eq, ram_stream, run, run_suite, test, tmp  # noqa: E402


def write_pages(path, pages):
    with open(path, "wb") as f:
        for p in pages:
            f.write(p)
    return path


def pages_of(n, seed=1):
    """n pages: two contents repeated, and distinct ones."""
    import random
    rnd = random.Random(seed)
    a, b = rnd.randbytes(PAGE), rnd.randbytes(PAGE)
    return [a, b, a, a] + [rnd.randbytes(PAGE) for _ in range(n - 4)]


def summary_rows(r):
    return list(csv.DictReader(io.StringIO(r.out)))


def one_line_naming(err, name, what):
    lines = [l for l in err.splitlines() if l.startswith("ksmscan: ")]
    check(len(lines) == 1 and name in lines[0], "%s: one error line naming %s" % (what, name),
          repr(err[-400:]))


@test("inputs")
def fifo_refused_without_blocking():
    fifo = tmp("fifo")
    os.mkfifo(fifo)
    r = run([fifo], timeout=20)
    eq(r.rc, 1, "a FIFO with no writer: exit 1 at once, not a hang")
    check("FIFO" in r.err, "the error says it is a FIFO", r.err)
    one_line_naming(r.err, fifo, "FIFO")


@test("inputs")
def character_device_refused():
    good = write_pages(tmp("good.img"), pages_of(8))
    link = tmp("zero.img")
    os.symlink("/dev/zero", link)
    r = run([good, link], timeout=20)
    eq(r.rc, 1, "a link to /dev/zero among dumps: exit 1, not an endless read")
    check("character device" in r.err, "the error says what it is", r.err)
    rows = {x["input"]: x for x in summary_rows(run(["--csv", good, link], timeout=20))}
    eq(rows.get(good, {}).get("pages"), "8", "the good dump is still counted")
    eq(rows.get(link, {}).get("status"), "failed", "the device's row is failed")
    r = run(["--series", "--scans=2", good, link], timeout=20)
    check(r.rc == 1 and r.rc != "timeout", "--series with /dev/zero: refused, no memory growth",
          r.brief())


@test("inputs")
def socket_refused():
    path = tmp("sock")
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(path)
        r = run([path], timeout=20)
    finally:
        s.close()
    eq(r.rc, 1, "a socket: exit 1")
    check(stat.S_ISSOCK(os.lstat(path).st_mode) and "not a regular file" in r.err,
          "the error says it is no file", r.err)


@test("inputs")
def stdin_pipe_still_read():
    pages = pages_of(6)
    r = run(["--csv", "-"], input=b"".join(pages))
    eq(summary_rows(r)[0]["pages"], "6", "standard input as a pipe is read")


@test("inputs")
def options_after_standard_input():
    # musl's getopt stops at a lone "-": options after it were taken as files.
    r = run(["--csv", "-", "--label=mine", "-j", "1"], input=b"".join(pages_of(4)))
    eq([(x["input"], x["pages"]) for x in summary_rows(r)], [("mine", "4")],
       "options after '-' are options, not file names")
    r = run(["--csv", "--", "-"], input=b"".join(pages_of(4)))
    eq([x["input"] for x in summary_rows(r)], ["-"], "'--' then '-': standard input")


@test("svg")
def svg_never_replaces_a_dump():
    a = write_pages(tmp("a.img"), pages_of(8, 2))
    b = write_pages(tmp("b.img"), pages_of(8, 3))
    with open(a, "rb") as f:
        before = f.read()
    r = run(["--svg", a, b])
    eq(r.rc, 2, "--svg a.img b.img (a.img a dump, not a picture): usage error")
    with open(a, "rb") as f:
        eq(f.read() == before, True, "a.img is unchanged")
    r = run(["--svg", b, b])
    eq(r.rc, 2, "--svg naming an input: usage error")
    hard = tmp("hard.img")
    os.link(b, hard)
    r = run(["--svg=" + hard, b])
    eq(r.rc, 2, "--svg naming a hard link to an input: usage error")


@test("svg")
def svg_replaces_link_not_target():
    b = write_pages(tmp("c.img"), pages_of(8, 4))
    target, link = tmp("target.txt"), tmp("pic.svg")
    with open(target, "w") as f:
        f.write("keep me\n")
    os.symlink(target, link)
    r = run(["--svg=" + link, b])
    eq(r.rc, 0, "--svg over a symbolic link: written")
    with open(target) as f:
        eq(f.read(), "keep me\n", "the link's target is untouched")
    check(not os.path.islink(link) and open(link).read().startswith("<?xml"),
          "the link itself was replaced by the picture")
    r = run(["--svg=" + link, b])
    eq(r.rc, 0, "an earlier picture is replaced")
    leftovers = [n for n in os.listdir(os.path.dirname(link)) if n.startswith(".pic.svg.")]
    eq(leftovers, [], "no temporary file is left beside the picture")


def hostile(name):
    d = tmp("names")
    os.makedirs(d, exist_ok=True)
    return write_pages(os.path.join(d, name), pages_of(6, 5))


@test("svg", app=True)
def svg_attribute_injection():
    name = 'x" onmouseover="alert(1)\' y=\'1 <b>&'
    path = hostile(name)
    out = tmp("inject.svg")
    r = run(["--svg=" + out, path])
    eq(r.rc, 0, "a hostile name: the picture is written")
    root = ET.parse(out).getroot()     # a parse error fails the test
    attrs = [(el.tag, k) for el in root.iter() for k in el.attrib]
    check(not any("onmouseover" in k for _, k in attrs),
          "no element gained an onmouseover attribute", repr(attrs[:20]))
    inputs = [el.attrib.get("data-input") for el in root.iter() if "data-input" in el.attrib]
    eq(inputs, [path], "data-input holds the whole name, as text")
    chromium = app(["chromium", "chromium-browser"], "chromium")
    home = tmp("chromium-home")
    p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--user-data-dir=" + home, "--dump-dom", "file://" + out],
                       capture_output=True, text=True, timeout=120)
    from html.parser import HTMLParser

    class Attrs(HTMLParser):
        names, inputs = [], []

        def handle_starttag(self, tag, attrs):
            for k, v in attrs:
                self.names.append(k)
                if k == "data-input":
                    self.inputs.append(v)
    a = Attrs()
    a.feed(p.stdout)
    check(a.inputs and "onmouseover" not in a.names,
          "Chromium's DOM of the picture has no onmouseover attribute", repr(a.names[:20]))
    eq(a.inputs, [path], "Chromium reads data-input as the whole name")


@test("csv", app=True)
def csv_formula_injection():
    names = ['=HYPERLINK("x","y").img', "+1+1.img", "@SUM(1).img", "-2+3.img"]
    paths = [hostile(n) for n in names]
    r = run(["--csv"] + paths)
    rows = summary_rows(r)
    got = [x["input"] for x in rows if x["input"] != "*"]
    for p, g in zip(paths, got):
        # The paths are absolute: their first character is '/', no formula.
        eq(g, p, "an absolute path is not prefixed")
    from ksmtest import KSMSCAN
    exe = [os.path.abspath(KSMSCAN[0])] + KSMSCAN[1:]
    p = subprocess.run(exe + ["--csv", "--"] + names, cwd=os.path.dirname(paths[0]),
                       capture_output=True, text=True, timeout=60)
    got = [x["input"] for x in csv.DictReader(io.StringIO(p.stdout)) if x["input"] != "*"]
    eq(got, ["'" + n for n in names], "a name a spreadsheet would evaluate gets a leading '")
    r = run(["--csv", "-"], input=b"".join(pages_of(4)))
    eq(summary_rows(r)[0]["input"], "-", "standard input's '-' stays as it is")
    import random
    two = random.Random(9).randbytes(2 * PAGE)
    eq(summary_rows(run(["--csv", "-"], input=two))[0]["general_profit"], "-128",
       "a negative number is still a number (two distinct pages: -2 * 64)")
    libreoffice_reads_text(r_csv=run(["--csv"] + paths).out)


def libreoffice_reads_text(r_csv):
    soffice = app(["soffice", "libreoffice"], "libreoffice-calc-nogui")
    d = tmp("lo-inject")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "inject.csv")
    names = ['=1+1', '+2+2', '@SUM(1)', '-3+3']
    lines = ["input,pages"] + ["'%s,1" % n for n in names]
    with open(src, "w") as f:
        f.write("\r\n".join(lines) + "\r\n")
    out = os.path.join(d, "out")
    os.makedirs(out, exist_ok=True)
    subprocess.run([soffice, "--headless", "--convert-to", "csv", "--outdir", out, src],
                   capture_output=True, timeout=180, env=dict(os.environ, HOME=tmp("lo-home")))
    back = os.path.join(out, "inject.csv")
    if not check(os.path.exists(back), "LibreOffice converted the CSV"):
        return
    with open(back, newline="") as f:
        cells = [row[0] for row in csv.reader(f)][1:]
    eq(cells, ["'" + n for n in names],
       "LibreOffice keeps each defused cell as text, not the formula's value")


@test("raw")
def raw_means_raw():
    import random
    rnd = random.Random(7)
    for magic in (b"BZh9", b"\x1f\x8b\x08", b"\x50\x2a\x4d\x18", b"\x28\xb5\x2f\xfd"):
        pages = [magic + rnd.randbytes(PAGE - len(magic)), rnd.randbytes(PAGE)]
        pages.append(pages[1])
        path = write_pages(tmp("magic.img"), pages)
        r = run(["-f", "raw", "--no-decompress", "--csv", path])
        row = summary_rows(r)[0] if r.out else {}
        eq((r.rc, row.get("pages"), row.get("distinct_pages")), (0, "3", "2"),
           "--no-decompress of an image beginning with %r: its pages as they are" % magic)
        r = run(["--no-decompress", "-f", "raw", "--csv", "-"], input=b"".join(pages))
        row = summary_rows(r)[0] if r.out else {}
        eq((r.rc, row.get("pages")), (0, "3"), "the same through a pipe (%r)" % magic)
        # -f names the memory format only: the magic still starts a layer,
        # whose stream is broken.
        r = run(["-f", "raw", "--csv", path])
        eq(r.rc, 1, "-f raw alone of an image beginning with %r: a broken layer" % magic)


def zstd(data):
    import zstandard
    return zstandard.ZstdCompressor().compress(data)


@test("tmpdir")
def forged_kdump_header_not_copied():
    # "KDUMP   " then 1 GiB of 0x01 compresses to a few KB: read as a stream
    # it would be copied whole before its header was looked at.
    import zstandard
    path = tmp("bomb.kdump.zst")
    c = zstandard.ZstdCompressor(level=3)
    with open(path, "wb") as f, c.stream_writer(f) as w:
        w.write(b"KDUMP   ")
        block = b"\x01" * (1 << 20)
        for _ in range(1024):
            w.write(block)
    check(os.path.getsize(path) < (1 << 20), "the bomb is small", str(os.path.getsize(path)))
    d = tmp("tmpdir")
    os.makedirs(d, exist_ok=True)
    env_tmp = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = d
    try:
        r = run(["-f", "kdump", path], timeout=60)
    finally:
        if env_tmp is None:
            del os.environ["TMPDIR"]
        else:
            os.environ["TMPDIR"] = env_tmp
    eq(r.rc, 1, "a forged kdump header: exit 1")
    check("block size" in r.err, "the header's fault is named before any copy", r.err)


@test("tmpdir")
def flattened_record_stops_at_reserve():
    if os.geteuid() != 0:
        raise Skip("needs root to mount a 64 MiB tmpfs")
    import struct
    d = tempfile.mkdtemp(prefix="ksmscan-tmpfs-")
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", d],
                       capture_output=True, text=True)
    if m.returncode:
        os.rmdir(d)
        raise Skip("cannot mount a tmpfs: %s" % m.stderr.strip())
    try:
        head = b"makedumpfile".ljust(16, b"\0") + struct.pack(">qq", 1, 1)
        head = head.ljust(4096, b"\0")
        size = 256 << 20        # one record of 256 MiB of non-zero bytes
        rec = struct.pack(">qq", 0, size)

        def feed():
            yield head + rec
            chunk = b"\x01" * (1 << 20)
            for _ in range(size >> 20):
                yield chunk
        env = dict(os.environ, TMPDIR=d)
        from ksmtest import KSMSCAN
        p = subprocess.Popen(KSMSCAN + ["-f", "kdump", "-"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        least = [1 << 62]
        try:
            for piece in feed():
                st = os.statvfs(d)
                least[0] = min(least[0], st.f_bavail * st.f_frsize)
                p.stdin.write(piece)
        except BrokenPipeError:
            pass
        try:
            p.stdin.close()
        except BrokenPipeError:
            pass
        err = p.stderr.read()
        p.stdout.read()
        p.wait(timeout=120)
        st = os.statvfs(d)
        keep = (st.f_blocks * st.f_frsize) // 100 * 5
        eq(p.returncode, 1, "a flattened record larger than the tmpfs: exit 1")
        check(b"less than 5%" in err, "the error names the reserve", err[-300:].decode())
        check(least[0] >= keep - (1 << 20), "the tmpfs kept its 5%% (least %d)" % least[0])
    finally:
        subprocess.run(["umount", d])
        os.rmdir(d)


def two_block_save(pages_a, pages_b):
    """pc.ram and vga.vram of 64 pages each, every page sent once."""
    be = lambda n, v: v.to_bytes(n, "big")  # noqa: E731
    recs = b""
    for name, pages in ((b"pc.ram", pages_a), (b"vga.vram", pages_b)):
        for i, p in enumerate(pages):
            flags = 0x08 | (0x20 if i else 0)
            recs += be(8, i * PAGE | flags) + (b"" if i else bytes([len(name)]) + name) + p
    return ram_stream(recs, ((b"pc.ram", 64 * PAGE), (b"vga.vram", 64 * PAGE)))


@test("qemu")
def qemu_blocks_keep_their_pages_apart():
    import random
    rnd = random.Random(11)
    a = [rnd.randbytes(PAGE) for _ in range(64)]
    b = [rnd.randbytes(PAGE) for _ in range(64)]
    b[:8] = a[:8]           # 8 pages of vga.vram equal 8 of pc.ram
    path = tmp("two-blocks.mig")
    with open(path, "wb") as f:
        f.write(two_block_save(a, b))
    copy = tmp("two-blocks-again.mig")
    shutil.copy(path, copy)
    pages = a + b
    want_sharing = len(pages) - len(set(pages))
    static = summary_rows(run(["--csv", "-l", path]))[0]
    eq((static["pages"], static["pages_sharing"]), ("128", str(want_sharing)),
       "a two-block save: every page counted, the blocks' common pages shared")
    r = run(["--csv", "-r", "timeline", "--series", "--interval=1s", path, copy])
    rows = list(csv.DictReader(io.StringIO(r.out)))
    last = rows[-1] if rows else {}
    eq((r.rc, last.get("pages_sharing")), (0, str(want_sharing)),
       "a series of two identical two-block saves ends at the static figure "
       "(pages of two blocks no longer share an address)")
    check(int(last.get("general_profit", "-1")) > 0, "general_profit is positive",
          repr(last))
    regions = list(csv.DictReader(io.StringIO(run(["--csv", "-r", "regions", path]).out)))
    spans = sorted((int(x["start"], 16), int(x["end"], 16)) for x in regions)
    check(len(spans) == 2 and spans[0][1] <= spans[1][0],
          "the regions of the two blocks do not overlap", repr(regions))


def resent_save(first, again, changed, tail=None):
    """One 256-page block: every page sent, then pages @again sent again
    unchanged and pages @changed sent again with new bytes (the last copy is
    the guest's memory). Returns (stream, the memory at the end)."""
    import random
    rnd = random.Random(13)
    be = lambda n, v: v.to_bytes(n, "big")  # noqa: E731
    mem = [rnd.randbytes(PAGE) for _ in range(256)] if first is None else list(first)
    recs = b""
    for i, p in enumerate(mem):
        recs += be(8, i * PAGE | 0x08 | (0x20 if i else 0)) + (b"" if i else b"\x06pc.ram") + p
    for i in again:
        recs += be(8, i * PAGE | 0x28) + mem[i]
    for i in changed:
        mem[i] = rnd.randbytes(PAGE)
        recs += be(8, i * PAGE | 0x28) + mem[i]
    if tail:
        recs += tail(mem)
    return ram_stream(recs, ((b"pc.ram", 256 * PAGE),)), mem


@test("qemu")
def qemu_resent_pages_count_once():
    stream, mem = resent_save(None, range(0, 256, 2), [])
    path = tmp("resent.mig")
    with open(path, "wb") as f:
        f.write(stream)
    r = run(["--csv", "-l", path])
    row = summary_rows(r)[0] if r.out else {}
    eq((row.get("pages"), row.get("pages_sharing"), row.get("saved_percent")),
       ("256", "0", "0.0000"), "128 pages sent twice, unchanged: 256 pages, nothing saved")
    lines = [l for l in r.err.splitlines() if "replaced by a later record" in l]
    check(len(lines) == 1 and "128 page records" in lines[0],
          "one warning counts the pages sent again", r.err)
    # Pages 0..7 later rewritten with the content of page 8: the last copy counts.
    be = lambda n, v: v.to_bytes(n, "big")  # noqa: E731

    def copies_of_8(mem):
        out = b"".join(be(8, i * PAGE | 0x28) + mem[8] for i in range(8))
        mem[:8] = [mem[8]] * 8
        return out
    stream, mem = resent_save(None, [], range(16, 24), tail=copies_of_8)
    path2 = tmp("rewritten.mig")
    with open(path2, "wb") as f:
        f.write(stream)
    row = summary_rows(run(["--csv", "-l", path2]))[0]
    eq((row["pages"], row["distinct_pages"], row["pages_sharing"]),
       ("256", str(len(set(mem))), str(256 - len(set(mem)))),
       "pages rewritten later: the figures are those of the memory at the end")
    # The same through a pipe and zstd.
    r = run(["--csv", "-l", "-"], input=zstd(stream))
    row = summary_rows(r)[0] if r.out else {}
    eq((row.get("pages"), row.get("distinct_pages")), ("256", str(len(set(mem)))),
       "through zstd and a pipe alike")
    # A series of the first save and the rewritten one: the last copy wins.
    r = run(["--csv", "-r", "volatility", "--series", path, path2])
    vol = list(csv.DictReader(io.StringIO(r.out)))
    eq(vol[0]["changed_pages"] if vol else None, str(16),
       "a series pairs each page's last copy (8 made equal to page 8, 8 rewritten)")


@test("qemu")
def qemu_later_block_list():
    """A second block list adding a block after pages were sent (the fuzzer
    found the first pass's table too short for it)."""
    import random
    rnd = random.Random(14)
    be = lambda n, v: v.to_bytes(n, "big")  # noqa: E731
    a, b = rnd.randbytes(PAGE), rnd.randbytes(PAGE)
    recs = (be(8, 0 | 0x08) + b"\x06pc.ram" + a
            + be(8, (4 * PAGE) | 0x04) + b"\x08vga.vram" + be(8, 4 * PAGE)
            + be(8, 2 * PAGE | 0x08) + b"\x08vga.vram" + b + be(8, 3 * PAGE | 0x28) + a)
    path = tmp("later-blocks.mig")
    with open(path, "wb") as f:
        f.write(ram_stream(recs, ((b"pc.ram", 4 * PAGE),)))
    r = run(["--csv", "-l", path])
    row = summary_rows(r)[0] if r.out else {}
    eq((r.rc, row.get("pages"), row.get("pages_sharing")), (0, "3", "1"),
       "pages of a block listed later count, and share with the earlier block")


@test("series")
def capped_replay_is_partial():
    import random
    rnd = random.Random(12)
    a = write_pages(tmp("mix.raw"), [rnd.randbytes(PAGE) for _ in range(100)] + [bytes(PAGE)] * 50)
    b = write_pages(tmp("u1.raw"), [rnd.randbytes(PAGE) for _ in range(150)])
    r = run(["--csv", "-r", "summary", "--series", "--interval=200h", a, b], timeout=600)
    eq(r.rc, 1, "a replay cut short by its bound: exit 1")
    row = summary_rows(r)[0] if r.out else {}
    eq((row.get("input"), row.get("status")), (a, "partial"),
       "the row is named by the snapshot whose figures it carries, and partial")
    eq(row.get("pages"), "150", "its pages are that snapshot's")
    zero_saved = 50 - 1      # 50 zero pages: one KSM page, 49 mappings
    eq(row.get("pages_sharing"), str(zero_saved), "and its figures that snapshot's")
    check("snapshot 1 of 2" in r.err, "the error says where the replay stopped", r.err)


@test("series")
def interval_bounds():
    a = write_pages(tmp("i.raw"), pages_of(6))
    for bad in ("1e-22", "0.0005", "0", "1001h", "nan", "inf"):
        r = run(["--series", "--interval=" + bad, a, a])
        eq(r.rc, 2, "--interval=%s: usage error" % bad)
    r = run(["--series", "--interval=1ms", "--scans=3", a, a])
    eq(r.rc, 0, "--interval=1ms is the least accepted")


def peak_kib(args, env=None):
    """ksmscan's peak resident set (GNU time's %M), in KiB."""
    from ksmtest import KSMSCAN
    if not os.path.exists("/usr/bin/time"):
        raise Skip("GNU time (/usr/bin/time) not installed")
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + KSMSCAN + args, capture_output=True,
                       text=True, timeout=600, env=env)
    return p.returncode, int(p.stderr.strip().splitlines()[-1])


@test("memory")
def live_count_costs_per_page():
    from ksmtest import KSMSCAN
    if any(x in KSMSCAN[0] for x in ("build-check", "build-tsan")):
        raise Skip("peak RSS is measured on the release build (sanitizers add shadow memory)")
    # 8192 pages of distinct random bytes in a child that sleeps.
    child = subprocess.Popen([sys.executable, "-c", "import os, time; b = os.urandom("
                              "32 << 20); print(1, flush=True); time.sleep(120)"],
                             stdout=subprocess.PIPE)
    child.stdout.readline()
    try:
        base = ["-p", str(child.pid), "--interval=1ms", "--scans=1", "--csv", "-r", "timeline"]
        rc1, few = peak_kib(base + ["--count=20"])
        rc2, many = peak_kib(base + ["--count=80"])
    finally:
        child.kill()
        child.wait()
    eq((rc1, rc2), (0, 0), "both series ran")
    pages = 8192
    per = (many - few) * 1024 / (60 * pages)
    check(per <= 40, "a live snapshot costs at most 40 bytes a page (a file "
          "series about 18; it was 80): %.1f" % per)


@test("memory")
def series_known_too_big_at_start():
    path = write_pages(tmp("m.img"), pages_of(2048))
    env = dict(os.environ, KSMSCAN_MEM_AVAILABLE=str(100 * 1024))
    from ksmtest import KSMSCAN
    p = subprocess.run(KSMSCAN + ["--series", path, path], capture_output=True, text=True,
                       env=env, timeout=60)
    eq((p.returncode, p.stdout), (1, ""), "a series larger than the memory available: "
       "exit 1 before anything is read or printed")
    check("largest snapshot of 2048 pages" in p.stderr and "--range" in p.stderr,
          "the error gives the estimate (a snapshot's pages: what changes "
          "later is counted as it comes) and the option that lowers it", p.stderr)


@test("memory")
def series_bound_reads_memavailable():
    # A 4 TiB sparse file: 2^30 pages a snapshot, more than any memory here.
    big = tmp("sparse-4t.raw")
    with open(big, "wb") as f:
        f.truncate(4 << 40)
    env = {k: v for k, v in os.environ.items() if k != "KSMSCAN_MEM_AVAILABLE"}
    from ksmtest import KSMSCAN
    p = subprocess.run(KSMSCAN + ["--series", big, big], capture_output=True, text=True,
                       env=env, timeout=60)
    os.unlink(big)
    with open("/proc/meminfo") as f:
        avail = [int(l.split()[1]) for l in f if l.startswith("MemAvailable:")]
    import re
    m = re.search(r"more than the (\d+) MiB available", p.stderr)
    check(p.returncode == 1 and m and avail and
          abs(int(m.group(1)) - avail[0] // 1024) <= 64,
          "the bound is /proc/meminfo's MemAvailable (within 64 MiB of this "
          "test's read of it)", p.stderr + repr(avail))


@test("memory")
def series_bomb_stops_as_it_grows():
    import zstandard
    bomb = tmp("bomb.zst")
    with open(bomb, "wb") as f:
        f.write(zstandard.ZstdCompressor().compress(bytes(64 << 20)))   # 16384 pages
    small = write_pages(tmp("small.img"), pages_of(64))
    # 8192 pages' worth of memory: the bomb's size (a few KB) says nothing.
    env = dict(os.environ, KSMSCAN_MEM_AVAILABLE=str(8192 * 32))
    from ksmtest import KSMSCAN
    p = subprocess.run(KSMSCAN + ["--series", "--scans=2", "--csv", "-r", "summary",
                                  small, bomb, small], capture_output=True, text=True,
                       env=env, timeout=120)
    eq(p.returncode, 1, "a small file that decompresses past the memory: exit 1")
    lines = [l for l in p.stderr.splitlines() if bomb in l]
    check(lines and "at offset" in lines[0] and "memory" in lines[0],
          "one line naming the bomb, where it stopped, and why", p.stderr)
    check(any("not read" in l for l in p.stderr.splitlines()),
          "the snapshot after it is said not to be read", p.stderr)
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    eq([r["status"] for r in rows], ["partial"], "the series row is partial")


@test("bomb")
def bomb_is_said():
    import zstandard
    bomb = tmp("zeros.zst")
    c = zstandard.ZstdCompressor(level=3)
    with open(bomb, "wb") as f, c.stream_writer(f) as w:
        chunk = bytes(1 << 20)
        for _ in range(1100):           # 1100 MiB of zeros in a few KB
            w.write(chunk)
    r = run(["--csv", bomb], timeout=300)
    lines = [l for l in r.err.splitlines() if "decompresses to more than" in l]
    eq(len(lines), 1, "one warning that the input decompresses to far more")
    row = summary_rows(r)[0] if r.out else {}
    eq((r.rc, row.get("pages"), row.get("zero_pages")), (0, str(1100 * 256), str(1100 * 256)),
       "and it is still read whole")
    r = run(["-q", "--csv", bomb], timeout=300)
    eq(r.err, "", "-q silences the warning")


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-hardening-"))
