#!/usr/bin/python3
"""Output a person reads at a glance, and what machines and sysadmins expect:

- the default summary of the fixture guest fits 80 columns, shows sizes in
  units of 1024 (computed here from the fixture's truth file), says "up to",
  splits the saving into zero pages and other duplicates, and says that KSM
  merges only mergeable memory; a golden copy (timings masked) catches any
  other change; long names are cut in the middle (their file name kept);
- CSV and JSON: digests 0x-prefixed, the status column (ok, partial,
  failed), JSON's parameters, every documented column in order; CSV through
  LibreOffice (headless) keeps the digests as text;
- the top report shows text pages as text;
- -V names the build and the checksum paths -a help names; standard input is
  read when no file is named; --label names it; "did you mean";
- --svg: renders in rsvg-convert and headless Chromium; its bars and address
  map hold the figures a Python count of the test's own pages gives, and the
  pixels where the first bar and the map are have their colours;
- bash completion (complete -p, and a scripted completion of -a x<TAB>),
  zsh's script parses; make deb builds a package lintian accepts, holding
  the binary, the man page and both completions.
"""
import csv, io, json, os, re, shutil, struct, subprocess, sys, unicodedata, zlib
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import (KSMSCAN, PAGE, ROOT, Skip, app, check, eq, fixture, run_suite,  # noqa: E402
                     shortened, skip, test, tmp)

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
SUMMARY_COLS = ["input", "format", "algo", "pages", "zero_pages", "distinct_pages",
                "duplicate_ratio", "pages_shared", "pages_sharing", "ksm_zero_pages",
                "saved_bytes", "saved_percent", "general_profit", "collisions",
                "expected_collisions", "hash_mib_s", "ns_per_page", "status"]


def ksm(args, **kw):
    kw.setdefault("stdin", subprocess.DEVNULL)
    exe = [os.path.abspath(KSMSCAN[0]) if os.sep in KSMSCAN[0] else KSMSCAN[0]]
    return subprocess.run(exe + KSMSCAN[1:] + args, capture_output=True, text=True,
                          timeout=120, **kw)


def human(n):
    """smem -k's units, written here from its description."""
    if n < 1024:
        return "%dB" % n if n else "0"
    v, units = n / 1024.0, "KMGTPE"
    u = 0
    while v >= 1024 and u < len(units) - 1:
        v, u = v / 1024.0, u + 1
    return "%.1f%s" % (v, units[u])


def width(line):
    return sum(0 if unicodedata.combining(c) else 1 for c in line)


def truth():
    with open(fixture("guest-b.truth.json")) as f:
        return json.load(f)


def guest():
    """The fixture guest under a short name, so that the table is the one a
    user sees for a file in the current folder."""
    path = tmp("guest-b.elf.zst")
    if not os.path.exists(path):
        shutil.copy(fixture("guest-b.elf.zst"), path)
    return path


def mask(text):
    """Timings vary from run to run: hide them, keep everything else."""
    text = re.sub(r"hashed at \d+ MiB/s", "hashed at N MiB/s", text)
    return text.replace(tmp(""), "")


@test("people")
def summary_fits_80_columns():
    t = truth()
    guest()
    r = ksm(["-j", "2", "guest-b.elf.zst"], cwd=tmp(""))
    eq(r.returncode, 0, "the fixture's summary: exit status")
    long_lines = [l for l in r.stdout.splitlines() if width(l) > 80]
    eq(long_lines, [], "no line of the default summary is longer than 80 columns")
    pages, zero = t["pages"], t["zero_pages"]
    for what, value in (("memory", human(pages * PAGE)), ("zero", human(zero * PAGE))):
        check(value in r.stdout.split("\n")[1], "the table shows %s as %s" % (what, value),
              r.stdout[:300])
    check("up to " in r.stdout and "%d zero pages" % zero in r.stdout,
          "the headline says 'up to' and counts the zero pages", r.stdout[:600])
    check("MADV_MERGEABLE" in r.stdout and "PR_SET_MEMORY_MERGE" in r.stdout,
          "the summary says KSM merges only mergeable memory")
    with open(os.path.join(GOLDEN, "summary-guest.txt")) as f:
        eq(mask(r.stdout), f.read(), "the summary as the golden copy has it (timings masked)")


@test("people")
def long_names_and_checksums():
    long_dir = tmp("a-folder-with-a-rather-long-name/and-another-one")
    os.makedirs(long_dir, exist_ok=True)
    path = os.path.join(long_dir, "vectors.img")
    shutil.copy(fixture("vectors.img"), path)
    r = ksm(["-a", "xxhash,crc32c", path])
    lines = r.stdout.splitlines()
    # Cut in the middle: the path's start, "…", and its file name whole.
    head = path[:30 - 1 - len("/vectors.img")]
    row = [l for l in lines if l.startswith(head + "\u2026")]
    check(row and row[0].startswith(head + "\u2026/vectors.img "),
          "a long name keeps its start and its file name, '…' between", repr(lines[:3]))
    check(any(l.split()[:2] == ["input", "algo"] for l in lines),
          "several checksums: their figures in a section of their own", r.stdout[-600:])
    eq([l for l in lines if width(l) > 80], [], "still 80 columns")


@test("people")
def singular_and_no_negative_zero():
    r = ksm([fixture("vectors.img")])
    check(re.search(r"\b1\s+zero\s+page,", r.stdout), "one zero page is singular",
          r.stdout[-500:])
    check(not re.search(r"-0(\.0)?[KMGT ]", r.stdout), "no negative zero", r.stdout[-500:])


@test("people")
def text_pages_in_top():
    text = b"the same text page, kept by many processes\n" * 100
    path = tmp("text.img")
    with open(path, "wb") as f:
        f.write(text[:PAGE] * 3)
    # -l: the description on one line (in 80 columns it may wrap).
    r = ksm(["-l", "-r", "top", path])
    check('text "the same text page, kept by many process..."' in r.stdout,
          "a text page is described as text", r.stdout)
    r = ksm(["-r", "top", path])
    check('text "the same text page, kept by many process..."' in
          re.sub(r"\n +", " ", r.stdout), "and so it is in 80 columns, wrapped", r.stdout)


@test("people")
def nothing_read_is_said_once():
    """When no input could be read, the table keeps each input's row with
    its status and why (as CSV keeps its row), one line on standard error,
    and no sentences about KSM's figures of nothing."""
    missing = tmp("no-such-dump.img")
    r = ksm([missing])
    lines = r.stdout.splitlines()
    eq((r.returncode, r.stderr.count("\n")), (1, 1),
       "the only input missing: exit 1, one line on stderr")
    check(len(lines) == 2 and lines[0].split()[0] == "input" and
          shortened(lines[1].split()[0], missing) and
          lines[1].endswith("  failed: No such file or directory"),
          "the table has its row, status 'failed' and why, and nothing else", r.stdout)
    r = ksm([missing, missing + "2"])
    rows = [l.split() for l in r.stdout.splitlines()[1:]]
    check(len(rows) == 3 and shortened(rows[0][0], missing) and
          shortened(rows[1][0], missing + "2") and rows[0][0] != rows[1][0] and
          rows[2][0] == "*" and rows[2][-1] == "failed",
          "two missing inputs: a row each, told apart, and '*' failed", r.stdout)
    r = ksm(["--csv", missing])
    check(r.stdout.count("\n") == 2 and "failed" in r.stdout, "CSV keeps its row", r.stdout)
    r = ksm(["-o", "yaml", fixture("vectors.img")])
    check(r.returncode == 2 and "(table, csv, json, openmetrics" in r.stderr.splitlines()[0],
          "-o yaml names the formats there are", r.stderr[:200])


@test("machine")
def csv_json_columns_and_status():
    good, missing = fixture("vectors.img"), tmp("no-such.img")
    r = ksm(["--csv", good, missing])
    eq(r.returncode, 1, "a missing input: exit status 1")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    eq(list(rows[0]), SUMMARY_COLS + ["freed_bytes", "zero_page_mappings", "frames"],
       "summary columns, status, then freed_bytes, zero_page_mappings, frames")
    eq([x["status"] for x in rows], ["ok", "failed", "partial"], "status per input and *")
    # A file has no frames: each page is one, so KSM frees what it saves.
    eq([x["freed_bytes"] for x in rows], [x["saved_bytes"] for x in rows],
       "a file's freed_bytes are its saved_bytes")
    eq([(x["zero_page_mappings"], x["frames"]) for x in rows],
       [("0", x["pages"]) for x in rows], "a file: no zero-page mapping, a frame a page")
    r = ksm(["--json", "-c", "lz4", "-a", "xxhash,crc32c", good])
    doc = json.loads(r.stdout)
    eq(list(doc["summary"][0]), SUMMARY_COLS + ["freed_bytes", "zero_page_mappings", "frames"],
       "JSON summary keys are the columns")
    p = doc.get("parameters", {})
    eq((p.get("algorithms"), p.get("max_page_sharing"), p.get("use_zero_pages"),
        p.get("compressors")), ("xxhash,crc32c", 256, 0, "lz4"), "JSON parameters")
    check(p.get("version") and isinstance(p.get("zram_huge_size"), int),
          "parameters name the version and zram's huge size", repr(p))
    r = ksm(["--csv", "-r", "pages", "-a", "crc32c", good])
    digests = [x["crc32c"] for x in csv.DictReader(io.StringIO(r.stdout))]
    check(digests and all(re.fullmatch(r"0x[0-9a-f]{8}", d) for d in digests),
          "CSV digests are 0x-prefixed lower-case hex", repr(digests[:3]))
    r = ksm(["-r", "pages", "-a", "crc32c", good])
    check("0x00000000" not in r.stdout and "00000000" in r.stdout,
          "tables drop the prefix", r.stdout[:300])


@test("machine", app=True)
def libreoffice_keeps_digests():
    soffice = app(["soffice", "libreoffice"], "libreoffice-calc-nogui")
    path = tmp("digests.csv")
    r = ksm(["--csv", "-r", "pages", "-a", "crc32c,xxhash", fixture("vectors.img")])
    with open(path, "w") as f:
        f.write(r.stdout)
    out = tmp("lo")
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, HOME=tmp("lo-home"))
    subprocess.run([soffice, "--headless", "--convert-to", "csv", "--outdir", out, path],
                   capture_output=True, timeout=180, env=env)
    back = os.path.join(out, "digests.csv")
    if not check(os.path.exists(back), "LibreOffice converted the CSV"):
        return
    want = list(csv.DictReader(io.StringIO(r.stdout)))
    with open(back, newline="") as f:
        got = list(csv.DictReader(f))
    eq([(g["crc32c"], g["xxhash"]) for g in got], [(w["crc32c"], w["xxhash"]) for w in want],
       "every digest survives a round trip through LibreOffice")


@test("cli")
def version_stdin_label_guesses():
    r = ksm(["-V"])
    impls = {x["algo"]: x["impl"] for x in csv.DictReader(io.StringIO(ksm(["-a", "help", "--csv"]).stdout))}
    check(r.stdout.startswith("ksmscan ") and "built with" in r.stdout and "zstd" in r.stdout,
          "-V names the build", r.stdout)
    for algo, impl in impls.items():
        check("%s=%s" % (algo, impl) in r.stdout, "-V names %s's path, %s" % (algo, impl))
    with open(fixture("vectors.img"), "rb") as f:
        r = subprocess.run(KSMSCAN + ["--csv", "--label=vec"], stdin=f, capture_output=True,
                           text=True)
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    eq([(x["input"], x["pages"]) for x in rows], [("vec", "20")],
       "no file named and standard input not a terminal: it is read, named by --label")
    r = ksm(["-a", "xxhsh", fixture("vectors.img")])
    check(r.returncode == 2 and "did you mean 'xxhash'" in r.stderr, "a mistyped algorithm",
          r.stderr[:200])
    r = ksm(["-r", "histgram", fixture("vectors.img")])
    check(r.returncode == 2 and "did you mean 'histogram'" in r.stderr, "a mistyped report",
          r.stderr[:200])


def png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, color = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = {2: 3, 6: 4}[color]
    raw, rows, prev = zlib.decompress(idat), [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (w * bpp + 1)], bytearray(raw[y * (w * bpp + 1) + 1:(y + 1) * (w * bpp + 1)])
        for i in range(len(line)):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            p = a + b - c
            pred = [0, a, b, (a + b) // 2,
                    a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else
                    b if abs(p - b) <= abs(p - c) else c][f]
            line[i] = (line[i] + pred) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


@test("svg")
def svg_histogram_axis_values_gaps():
    """The histogram as a person reads it, rendered by rsvg-convert: a bar per
    bucket of sharing from the first with pages to the last, the pages
    written on each, an empty bucket keeping its place (a gap, white where a
    bar would be), and a log axis of powers of ten. The oracle: the counts
    the test chose (6 contents once, 2 twice, one 9 times, one 70 times:
    buckets 1, 2, 8, 64; 4, 16 and 32 empty)."""
    rnd = __import__("random").Random(4)
    counts = [1] * 6 + [2] * 2 + [9] + [70]
    pages = []
    for c in counts:
        pages += [rnd.randbytes(PAGE)] * c
    img = tmp("hist.img")
    with open(img, "wb") as f:
        f.write(b"".join(pages))
    svg = tmp("hist.svg")
    r = ksm(["--svg=" + svg, img])
    if not check(r.returncode == 0 and os.path.exists(svg), "--svg writes the picture", r.stderr):
        return
    expect = {}
    for c in counts:
        b = 1 << (c.bit_length() - 1)
        expect[b] = expect.get(b, 0) + c
    ns = {"s": "http://www.w3.org/2000/svg"}
    root = ET.parse(svg).getroot()
    bars = root.findall(".//s:rect[@class='bar']", ns)
    got = {int(b.get("data-bucket")): int(b.get("data-pages")) for b in bars}
    eq(got, expect, "a bar per bucket with pages, its pages as in the input")
    values = sorted(int(t.text) for t in root.findall(".//s:text[@class='value']", ns))
    eq(values, sorted(expect.values()), "each bar has its pages written on it")
    ticks = [int(t.text) for t in root.findall(".//s:text[@class='bucket']", ns)]
    eq(ticks, [1, 2, 4, 8, 16, 32, 64], "a place for every bucket from the first to the last")
    xs = {int(b.get("data-bucket")): float(b.get("x")) for b in bars}
    slot = xs[2] - xs[1]
    check(slot > 0 and xs[8] - xs[1] == 3 * slot and xs[64] - xs[1] == 6 * slot,
          "empty buckets keep their places: bars at equal steps of the bucket's log",
          repr(xs))
    axis = [int(t.text) for t in root.findall(".//s:text[@class='axis']", ns)]
    eq(axis, [1, 10], "an axis of the powers of ten up to the most pages (70)")
    if not shutil.which("rsvg-convert"):
        raise Skip("no rsvg-convert to render the picture")
    png = tmp("hist.png")
    rr = subprocess.run(["rsvg-convert", svg, "-o", png], capture_output=True, text=True)
    if not check(rr.returncode == 0, "rsvg-convert renders it", rr.stderr[-300:]):
        return
    w, h, px = png_pixels(png)
    bar8 = next(b for b in bars if b.get("data-bucket") == "8")
    base = int(float(bar8.get("y")) + float(bar8.get("height"))) - 2
    mid = lambda x: int(x + float(bar8.get("width")) / 2)
    eq(px[base][mid(xs[8])], (0x1f, 0x77, 0xb4), "the bar of bucket 8 is drawn (blue)")
    for b in (4, 16, 32):
        x = mid(xs[1] + slot * (b.bit_length() - 1))
        eq(px[base][x], (255, 255, 255), "bucket %d, empty: a gap (white)" % b)
    # Heights follow the axis: the bar of 9 pages reaches between 1 and 10.
    lines = {int(t.text): float(t.get("y")) - 4 for t in
             root.findall(".//s:text[@class='axis']", ns)}
    top = float(bar8.get("y"))
    check(lines[10] <= top <= lines[1], "the 9-page bar ends between the axis' 1 and 10",
          "%r, top %r" % (lines, top))


def svg_input():
    """Pages with known sharing: 5 unique, 3 contents twice, one 8 times,
    4 zero pages, in an order the address map can be checked against."""
    rnd = __import__("random").Random(17)
    uniq = [rnd.randbytes(PAGE) for _ in range(5)]
    twice = [rnd.randbytes(PAGE) for _ in range(3)]
    eight = rnd.randbytes(PAGE)
    pages = uniq + [bytes(PAGE)] * 4 + twice + twice + [eight] * 8
    return pages


@test("svg", app=True)
def svg_picture():
    pages = svg_input()
    path, svg = tmp("pic.img"), tmp("pic.svg")
    with open(path, "wb") as f:
        f.write(b"".join(pages))
    r = ksm(["--svg=" + svg, path])
    eq(r.returncode, 0, "--svg: exit status")
    root = ET.parse(svg).getroot()
    ns = {"s": "http://www.w3.org/2000/svg"}
    bars = {int(b.get("data-bucket")): int(b.get("data-pages"))
            for b in root.iterfind(".//s:rect[@class='bar']", ns)}
    counts = {}
    for p in pages:
        counts[p] = counts.get(p, 0) + 1
    want = {}
    for c in counts.values():
        b = 1 << (c.bit_length() - 1)
        want[b] = want.get(b, 0) + c
    eq(bars, want, "the histogram's bars: pages per bucket")
    heights = {int(b.get("data-bucket")): float(b.get("height"))
               for b in root.iterfind(".//s:rect[@class='bar']", ns)}
    order = sorted(want, key=lambda b: want[b])
    check(all(heights[x] <= heights[y] for x, y in zip(order, order[1:])),
          "taller bars for more pages", repr(heights))
    seen, zero, copies, other = set(), 0, 0, 0
    for p in pages:
        if p == bytes(PAGE):
            zero += 1
        elif p in seen:
            copies += 1
        else:
            other += 1
        seen.add(p)
    cols = list(root.iterfind(".//s:g[@class='col']", ns))
    got = [sum(int(c.get(k)) for c in cols) for k in ("data-zero", "data-copies", "data-other")]
    eq(got, [zero, copies, other], "the address map: zero, copies and other pages")
    # The memory chart: KSM's bar from the summary, zram's from -r compress.
    r = ksm(["--svg=" + svg, "-c", "lz4", path])
    sizes = {b.get("data-label"): int(b.get("data-bytes"))
             for b in ET.parse(svg).getroot().iterfind(".//s:rect[@class='size']", ns)}
    summary = list(csv.DictReader(io.StringIO(ksm(["--csv", path]).stdout)))[0]
    comp = list(csv.DictReader(io.StringIO(ksm(["--csv", "-r", "compress", "-c", "lz4",
                                                path]).stdout)))[0]
    eq(sizes, {"as it is": len(pages) * PAGE,
               "KSM": len(pages) * PAGE - int(summary["saved_bytes"]),
               "zram lz4": int(comp["zram_mem_used"]),
               "KSM+zram lz4": int(comp["ksm_zram_mem_used"])},
       "the memory chart: as it is, KSM, zram and both, as the reports say")
    for tool, cmd, png in (
            ("rsvg-convert", ["rsvg-convert", svg, "-o", tmp("pic-rsvg.png")], tmp("pic-rsvg.png")),
            ("chromium", ["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                          "--screenshot=" + tmp("pic-chr.png"), "--window-size=800,300",
                          "file://" + svg], tmp("pic-chr.png"))):
        if tool == "chromium":         # an application of make test-apps
            try:
                cmd[0] = app(["chromium", "chromium-browser"], "chromium")
            except Skip as e:
                skip(str(e))
                continue
        elif not shutil.which(cmd[0]):
            skip("%s not installed" % tool)
            continue
        rr = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, HOME=tmp("home")))
        if not check(rr.returncode == 0 and os.path.exists(png), "%s renders the SVG" % tool,
                     rr.stderr[-300:]):
            continue
        w, h, px = png_pixels(png)
        bar = root.find(".//s:rect[@class='bar']", ns)
        x = int(float(bar.get("x")) + 15)
        y = int(float(bar.get("y")) + float(bar.get("height")) - 2)
        eq(px[y][x], (0x1f, 0x77, 0xb4), "%s: the first bar is blue where the SVG puts it" % tool)
        check(px[5][5] == (255, 255, 255), "%s: the background is white" % tool, repr(px[5][5]))


@test("package")
def bash_and_zsh_completion():
    script = os.path.join(ROOT, "completions", "ksmscan.bash")
    exe = os.path.abspath(KSMSCAN[0])
    prog = ('source %s; complete -p ksmscan; COMP_WORDS=(%s -a x); COMP_CWORD=2; _ksmscan; '
            'echo "${COMPREPLY[*]}"; COMP_WORDS=(%s -r sum,hi); COMP_CWORD=2; _ksmscan; '
            'echo "${COMPREPLY[*]}"' % (script, exe, exe))
    r = subprocess.run(["bash", "-c", prog], capture_output=True, text=True)
    lines = r.stdout.splitlines()
    check(lines and "-F _ksmscan" in lines[0], "complete -p names the function", r.stdout)
    algos = [x["algo"] for x in csv.DictReader(io.StringIO(ksm(["-a", "help", "--csv"]).stdout))]
    eq(lines[1].split() if len(lines) > 1 else None, [a for a in algos if a.startswith("x")],
       "ksmscan -a x<TAB>: every algorithm starting with x")
    eq(lines[2] if len(lines) > 2 else None, "sum,histogram", "a comma list completes its last name")
    # -f completes from the readers' table (through --help): every name it
    # offers is one ksmscan takes, and the formats the man page lists are there.
    prog = 'source %s; COMP_WORDS=(%s -f ""); COMP_CWORD=2; _ksmscan; echo "${COMPREPLY[*]}"' % (
        script, exe)
    offered = subprocess.run(["bash", "-c", prog], capture_output=True, text=True).stdout.split()
    with open(os.path.join(ROOT, "man", "ksmscan.1")) as f:
        man = f.read()
    listed = re.findall(r"^\.Cm ([a-z-]+)", man.split(".It Fl f ", 1)[1].split(".It ", 1)[0], re.M)
    check("qemu-save" in offered and set(listed) <= set(offered), "ksmscan -f <TAB>: every format",
          "%s, man page %s" % (offered, listed))
    for name in offered:
        r = ksm(["-f", name, fixture("vectors.img")])
        check(r.returncode != 2, "-f %s (offered by completion) is no usage error" % name, r.stderr)
    if shutil.which("zsh"):
        r = subprocess.run(["zsh", "-n", os.path.join(ROOT, "completions", "_ksmscan")],
                           capture_output=True, text=True)
        eq((r.returncode, r.stderr), (0, ""), "zsh completion parses")


@test("package")
def make_deb():
    if not shutil.which("dpkg-deb"):
        raise Skip("no dpkg-deb")
    # Under umask 077, as a careful builder has it: the package must still
    # hold documents everyone may read (Debian policy: 0644, programs and
    # folders 0755), so the script sets every mode itself.
    # With no maintainer known (no DEBEMAIL, no git identity), make deb
    # stops with one line rather than invent an address.
    home = tmp("deb-home")
    os.makedirs(home, exist_ok=True)
    anon = {k: v for k, v in os.environ.items() if not k.startswith(("DEB", "GIT_"))}
    anon.update(HOME=home, XDG_CONFIG_HOME=home, GIT_CONFIG_NOSYSTEM="1")
    out = os.path.join(ROOT, "build")
    debs_in = lambda d: [f for f in os.listdir(d) if f.endswith(".deb")] if os.path.isdir(d) else []
    source_before = debs_in(ROOT)
    r = subprocess.run(["make", "-s", "-C", ROOT, "deb"], capture_output=True, text=True, env=anon)
    check(r.returncode != 0 and "DEBEMAIL" in r.stderr and not debs_in(out),
          "no maintainer known: make deb stops, saying how to name one", r.stderr[-300:])
    # The builder names the maintainer (as a packager does with DEBEMAIL).
    env = dict(os.environ, DEBFULLNAME="Test Builder", DEBEMAIL="builder@ksmscan.test")
    r = subprocess.run(["make", "-s", "-C", ROOT, "deb"], capture_output=True, text=True,
                       preexec_fn=lambda: os.umask(0o077), env=env)
    debs = [f for f in debs_in(out) if f.startswith("ksmscan_")]
    if not check(r.returncode == 0 and debs, "make deb builds a package in build/",
                 r.stderr[-300:]):
        return
    eq(debs_in(ROOT), source_before, "make deb writes no .deb into the source tree")
    deb = os.path.join(out, sorted(debs)[-1])
    files = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True).stdout
    for f in ("./usr/bin/ksmscan", "./usr/share/man/man1/ksmscan.1.gz",
              "./usr/share/bash-completion/completions/ksmscan",
              "./usr/share/zsh/vendor-completions/_ksmscan", "./usr/share/doc/ksmscan/copyright"):
        check(f in files, "the package holds %s" % f)
    check("./usr/bin/ksmfleet" in files.split() and
          "./usr/lib/python3/dist-packages/ksmfleet/cli.py" in files.split(),
          "the package holds ksmfleet (test_install checks every module)")
    for f in ("./usr/lib/systemd/system/ksmscan-metrics.service",
              "./usr/lib/systemd/system/ksmscan-metrics.timer"):
        check(f in files, "the package holds %s" % f)
    programs = ("./usr/bin/ksmscan", "./usr/bin/ksmfleet",
                "./usr/lib/ksmscan/ksmscan-metrics")
    bad = []
    for line in files.splitlines():
        mode, path = line.split()[0], line.split()[5]
        want = "drwxr-xr-x" if mode[0] == "d" else "lrwxrwxrwx" if mode[0] == "l" else \
            "-rwxr-xr-x" if path in programs else "-rw-r--r--"
        if mode != want:
            bad.append((path, mode))
    eq(bad, [], "under umask 077 every file is 0644, programs and folders 0755")
    info = subprocess.run(["dpkg-deb", "-f", deb], capture_output=True, text=True).stdout
    check("example.org" not in info and "Homepage" not in info and
          re.search(r"^Maintainer: Test Builder <builder@ksmscan.test>$", info, re.M),
          "no placeholder fields: the builder's maintainer, no made-up homepage", info)
    root = tmp("deb-root")
    subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
    r = subprocess.run([os.path.join(root, "usr/bin/ksmscan"), "-V"], capture_output=True, text=True)
    check(r.returncode == 0 and r.stdout.startswith("ksmscan "), "the packaged binary runs")
    if shutil.which("man"):
        r = subprocess.run(["man", "-l", os.path.join(root, "usr/share/man/man1/ksmscan.1.gz")],
                           capture_output=True, text=True, env=dict(os.environ, MANPAGER="cat"))
        check("KSMSCAN" in r.stdout.upper() and "SEE ALSO" in r.stdout, "the packaged man page reads")
    if shutil.which("lintian"):
        r = subprocess.run(["lintian", deb], capture_output=True, text=True)
        errors = [l for l in r.stdout.splitlines() if l.startswith("E:")]
        eq(errors, [], "lintian finds no error")
    if os.environ.get("KSMSCAN_LIVE_TESTS") == "1" and os.geteuid() == 0 and \
            subprocess.run(["dpkg", "-s", "ksmscan"], capture_output=True).returncode != 0:
        r = subprocess.run(["dpkg", "-i", deb], capture_output=True, text=True)
        try:
            eq(r.returncode, 0, "dpkg -i installs it")
            v = subprocess.run(["ksmscan", "-V"], capture_output=True, text=True)
            check(v.stdout.startswith("ksmscan "), "the installed ksmscan -V")
            m = subprocess.run(["man", "ksmscan"], capture_output=True, text=True,
                               env=dict(os.environ, MANPAGER="cat"))
            check("SEE ALSO" in m.stdout, "man ksmscan")
        finally:
            subprocess.run(["dpkg", "-r", "ksmscan"], capture_output=True)
    os.unlink(deb)


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-output-"))
