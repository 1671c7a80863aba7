#!/usr/bin/python3
"""More inputs (issue 16): compression layers besides zstd, QEMU's migration
stream (`qemu-save`) and the files that are not memory. Every figure comes
from the bytes the test wrote, from the decompressors themselves (Python's
zlib, lzma and bz2, `zstd -dc`, `lz4 -dc`), or from the same guest memory
read through QEMU's ELF dump; never from an earlier run of ksmscan.

- gzip, xz, bzip2, lz4 and zstd files and pipes give the pages written;
  concatenated frames are one input; gzip inside zstd is read, a third
  layer is refused; a cut layer counts every page decoded before the cut;
- qemu-save: the test's pages at 0x100000 of pc.ram; every pc.ram page the
  ELF dump of the same memory holds agrees; libvirt's header skipped; a
  cut stream gives a prefix; unsupported streams one line naming them;
- disk images, programs and archives are refused (also inside gzip) with
  one line naming the kind; -f raw reads them as raw.
"""
import bz2, io, lzma, os, random, shutil, struct, subprocess, sys, tarfile, zipfile, zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import (KSMSCAN, PAGE, SUMMARY_COLS, ZERO, check, eq, fixture, ram_stream,  # noqa: E402
                     parse_csv, run_suite, skip, test, tmp)
import xxhash  # noqa: E402
import zstandard  # noqa: E402

sys.path.insert(0, os.path.dirname(fixture("make_qemu.py")))
import make_qemu  # noqa: E402

TIMEOUT = 120


def ksm(args, input=None):
    try:
        return subprocess.run(KSMSCAN + args, input=input, capture_output=True,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        check(False, "ksmscan %s finished within %d s" % (" ".join(args), TIMEOUT))
        return None


class Out:
    """What parse_csv() reads of a run."""
    def __init__(self, r):
        self.out = r.stdout.decode("utf-8", "replace")


def err_lines(r):
    return r.stderr.decode("utf-8", "replace").splitlines() if r else []


def xxh64(p):
    """As the pages report prints it in CSV: 0x-prefixed."""
    return "0x%016x" % xxhash.xxh64_intdigest(p, 0)


def pages_rows(r, what):
    """[(region-less) (address, xxh64)] of a -r pages -a xxh64 --csv run."""
    lines = r.stdout.decode().splitlines() if r else []
    if not check(lines and lines[0] == "input,address,zero,xxh64", what + ": pages header",
                 repr(lines[:1])):
        return []
    return [(int(l.split(",")[1], 16), l.split(",")[3]) for l in lines[1:]]


def expect_pages(data, base=0):
    n = len(data) // PAGE
    return [(base + i * PAGE, xxh64(data[i * PAGE:(i + 1) * PAGE])) for i in range(n)]


def write(name, data):
    path = tmp(name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def tool(cmd, data):
    return subprocess.run(cmd, input=data, capture_output=True, check=True).stdout


def image(npages=300, seed=16):
    rnd = random.Random(seed)
    uniq = [bytes(rnd.getrandbits(8) for _ in range(64)) * 64 for _ in range(40)]
    return b"".join(ZERO if rnd.random() < 0.2 else rnd.choice(uniq) for _ in range(npages))


COMPRESS = {
    "gzip": ["gzip", "-c", "-1"],
    "xz": ["xz", "-c", "-1"],
    "bzip2": ["bzip2", "-c", "-1"],
    "lz4": ["lz4", "-c", "-B4", "-q"],   # 64 KiB blocks: a cut still decodes some
    "zstd": ["zstd", "-c", "-q", "-1"],
}


def decoded_prefix(kind, blob):
    """Bytes an independent decoder gives of a (cut) compressed stream."""
    if kind == "gzip":
        return zlib.decompressobj(31).decompress(blob)
    if kind == "xz":
        return lzma.LZMADecompressor().decompress(blob)
    if kind == "bzip2":
        return bz2.BZ2Decompressor().decompress(blob)
    cmd = {"lz4": ["lz4", "-dc"], "zstd": ["zstd", "-dc"]}[kind]
    return subprocess.run(cmd, input=blob, capture_output=True).stdout


def have(*tools):
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        skip("needs %s (scripts/install-deps installs it)" % " ".join(missing))
    return not missing


# ---------------------------------------------------------------------------
# compression layers
# ---------------------------------------------------------------------------
@test("layers")
def each_layer_file_and_pipe():
    """Every layer gives the pages written, from a file and from a pipe."""
    data = image()
    want = expect_pages(data)
    for kind, cmd in COMPRESS.items():
        if not have(cmd[0]):
            continue
        blob = tool(cmd, data)
        path = write("img." + kind, blob)
        for how, args, inp in (("file", [path], None), ("pipe", ["-"], blob)):
            r = ksm(["-r", "pages", "-a", "xxh64", "--csv"] + args, input=inp)
            eq(pages_rows(r, kind), want, "%s %s: every page" % (kind, how))
            eq(r.returncode if r else None, 0, "%s %s: exit status" % (kind, how))


@test("layers")
def concatenated_frames():
    """`X -c a; X -c b` is one stream of a then b, as the tools read it."""
    a, b = image(40, 1), image(50, 2)
    for kind, cmd in COMPRESS.items():
        if not have(cmd[0]):
            continue
        path = write("cat." + kind, tool(cmd, a) + tool(cmd, b))
        r = ksm(["-r", "pages", "-a", "xxh64", "--csv", path])
        eq(pages_rows(r, kind), expect_pages(a + b), kind + " concatenated: every page")


@test("layers")
def truncated_layers():
    """A cut layer: every page decoded before the cut, exit 1, one line."""
    data = image(600)
    for kind, cmd in COMPRESS.items():
        if not have(cmd[0]):
            continue
        blob = tool(cmd, data)
        for frac in (0.3, 0.7):
            cut = blob[:int(len(blob) * frac)]
            n = len(decoded_prefix(kind, cut)) // PAGE
            path = write("cut-%s-%d" % (kind, frac * 10), cut)
            for how, args, inp in (("file", [path], None), ("pipe", ["-"], cut)):
                r = ksm(["-r", "pages", "-a", "xxh64", "--csv"] + args, input=inp)
                what = "%s cut at %d%% (%s)" % (kind, frac * 100, how)
                eq(pages_rows(r, what), expect_pages(data)[:n], what + ": pages before the cut")
                eq(r.returncode if r else None, 1, what + ": exit status")
                lines = err_lines(r)
                check(len(lines) == 1 and lines[0].startswith("ksmscan: ")
                      and kind in lines[0] and ", at offset " in lines[0],
                      what + ": one error line naming the layer", repr(lines))


@test("layers")
def nested_layers():
    """gzip inside zstd is read; a layer inside that is refused."""
    if not have("gzip", "zstd", "xz"):
        return
    data = image()
    inner = tool(COMPRESS["gzip"], data)
    two = tool(COMPRESS["zstd"], inner)
    for how, args, inp in (("file", [write("two.zst", two)], None), ("pipe", ["-"], two)):
        r = ksm(["-r", "pages", "-a", "xxh64", "--csv"] + args, input=inp)
        eq(pages_rows(r, "gzip in zstd"), expect_pages(data), "gzip inside zstd (%s)" % how)
    three = tool(COMPRESS["xz"], two)
    r = ksm([write("three.xz", three)])
    eq(r.returncode if r else None, 1, "three layers: exit status")
    lines = err_lines(r)
    check(len(lines) == 1 and "gzip inside zstd inside xz" in lines[0],
          "three layers: one line naming them", repr(lines))


@test("layers")
def corrupted_layers():
    """Damage in the middle of a layer: the pages before it, exit 1, one line."""
    data = image(600)
    for kind in ("gzip", "xz", "bzip2"):
        blob = bytearray(tool(COMPRESS[kind], data))
        mid = len(blob) // 2
        blob[mid:mid + 16] = bytes(16)
        r = ksm([write("bad." + kind, bytes(blob))])
        eq(r.returncode if r else None, 1, kind + " damaged: exit status")
        lines = err_lines(r)
        check(len(lines) == 1 and kind in lines[0], kind + " damaged: one line", repr(lines))


# ---------------------------------------------------------------------------
# files that are not memory
# ---------------------------------------------------------------------------
def elf_head(e_type):
    return (b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8) +
            struct.pack("<HHIQQQIHHHHHH", e_type, 62, 1, 0, 64, 0, 0, 64, 56, 0, 64, 0, 0))


def tar_bytes():
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as t:
        info = tarfile.TarInfo("page")
        info.size = 3 * PAGE
        t.addfile(info, io.BytesIO(image(3)))
    return out.getvalue()


def zip_bytes():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("page", image(3))
    return out.getvalue()


def at(offset, magic, size=8 * PAGE):
    b = bytearray(image(size // PAGE, 5))
    b[offset:offset + len(magic)] = magic
    return bytes(b)


def not_memory():
    """(name, bytes, word the message must hold), each made from the format's
    published magic, not from ksmscan."""
    fixed_vhd = bytearray(image(8, 6))
    fixed_vhd[-512:-504] = b"conectix"
    return [
        ("qcow2", at(0, b"QFI\xfb\x00\x00\x00\x03"), "qcow2"),
        ("vmdk", at(0, b"KDMV\x01\x00\x00\x00"), "VMDK"),
        ("vmdk-descriptor", at(0, b"# Disk DescriptorFile\nversion=1\n"), "VMDK"),
        ("vdi", at(0, b"<<< Oracle VM VirtualBox Disk Image >>>\n".ljust(64, b"\0")
                   + b"\x7f\x10\xda\xbe"), "VDI"),
        ("vhd", at(0, b"conectix"), "VHD"),
        ("vhd-fixed", bytes(fixed_vhd), "VHD"),
        ("vhdx", at(0, b"vhdxfile"), "VHDX"),
        ("elf-exec", at(0, elf_head(2)), "executable"),
        ("elf-dyn", at(0, elf_head(3)), "shared object"),
        ("tar", tar_bytes(), "tar"),
        ("zip", zip_bytes(), "zip"),
        ("iso", at(32769, b"CD001", 16 * PAGE), "ISO 9660"),
    ]


@test("refuse")
def refused_kinds():
    """Each kind: exit 1, one line naming it, the input still has its row;
    inside gzip too (the footer of a fixed VHD is seen only in a file)."""
    for name, data, word in not_memory():
        forms = [("file", [write(name, data)], None)]
        if name != "vhd-fixed":
            forms.append(("gzip pipe", ["-"], tool(["gzip", "-c", "-1"], data)))
        for how, args, inp in forms:
            r = ksm(["--csv"] + args, input=inp)
            what = "%s (%s)" % (name, how)
            eq(r.returncode if r else None, 1, what + ": exit status")
            lines = err_lines(r)
            check(len(lines) == 1 and word in lines[0] and "not a memory dump" in lines[0]
                  and ", at offset " in lines[0], what + ": one line naming it", repr(lines))
            rows = parse_csv(Out(r), what, SUMMARY_COLS) if r else None
            check(rows and rows[0]["pages"] == "0", what + ": a row with 0 pages", repr(rows))


@test("refuse")
def raw_forced():
    """-f raw reads every refused kind as raw memory: its whole pages."""
    for name, data, _ in not_memory():
        r = ksm(["-f", "raw", "-q", "-r", "pages", "-a", "xxh64", "--csv",
                 write(name + ".raw", data)])
        eq(pages_rows(r, name), expect_pages(data), name + " with -f raw: every page")
        eq(r.returncode if r else None, 0, name + " with -f raw: exit status")


@test("refuse")
def real_programs():
    """A real executable of this system is refused as an ELF program."""
    r = ksm([sys.executable])
    lines = err_lines(r)
    check(r and r.returncode == 1 and len(lines) == 1 and "ELF" in lines[0],
          "python3 binary refused", repr(lines))


# ---------------------------------------------------------------------------
# qemu-save
# ---------------------------------------------------------------------------
def qemu_files():
    """The committed stream and ELF of one guest, decompressed; and, where
    QEMU is installed, the same made again now."""
    sets = []
    d = zstandard.ZstdDecompressor()
    with open(fixture("qemu-64m.mig.zst"), "rb") as f:
        mig = d.stream_reader(f).read()
    with open(fixture("qemu-64m.elf.zst"), "rb") as f:
        elf = d.stream_reader(f).read()
    sets.append(("fixture", write("fixture.mig", mig), write("fixture.elf", elf)))
    if make_qemu.qemu_binary():
        work = tmp("qemu-now")
        os.makedirs(work, exist_ok=True)
        mig_now, elf_now = make_qemu.make_streams(work)
        if check(os.path.exists(mig_now) and os.path.exists(elf_now),
                 "QEMU wrote a stream and an ELF dump"):
            sets.append(("QEMU now", mig_now, elf_now))
    else:
        skip("QEMU is not installed: the committed qemu-save fixture only "
             "(apt-get install qemu-system-x86 to remake it)")
    return sets


def regions_rows(r):
    """The rows of a -r regions --csv run, as lists of fields."""
    lines = r.stdout.decode().splitlines() if r else []
    return [l.split(",") for l in lines[1:]]


@test("qemu")
def qemu_pages_and_elf():
    """The test's pages at 0x100000 of pc.ram; every page of pc.ram that the
    ELF dump of the same memory holds has the same digest."""
    data = make_qemu.qemu_data()
    for name, mig, elf in qemu_files():
        r = ksm(["-r", "regions", "--csv", mig])
        regs = regions_rows(r)
        ram = [x for x in regs if x[1] == "pc.ram"]
        check(len(ram) == 1 and int(ram[0][3], 16) == 64 << 20,
              name + ": region pc.ram of 64 MiB", repr(regs))
        lo, hi = make_qemu.DATA_ADDR, make_qemu.DATA_ADDR + len(data)
        r = ksm(["-r", "pages", "-a", "xxh64", "--csv", "--range=0x%x-0x%x" % (lo, hi), mig])
        got = pages_rows(r, name)
        # Other blocks (pc.bios...) have addresses of their own: only pc.ram's are asked.
        eq([g for g in got if g in expect_pages(data, lo)], expect_pages(data, lo),
           name + ": the test's pages at 0x100000")
        eq(r.returncode if r else None, 0, name + ": exit status")
        # pc.ram against the ELF: a page address may also belong to a ROM
        # block, so compare the addresses where the stream has one page only.
        rs = pages_rows(ksm(["-r", "pages", "-a", "xxh64", "--csv", "--range=0-64M", mig]), name)
        re_ = pages_rows(ksm(["-r", "pages", "-a", "xxh64", "--csv", "--range=0-64M", elf]), name)
        count = {}
        for a, _ in rs:
            count[a] = count.get(a, 0) + 1
        single = {a: h for a, h in rs if count[a] == 1}
        in_elf = dict(re_)
        # 0xa0000-0xfffff of pc.ram lies under the VGA window and the BIOS
        # ROM in guest-physical memory: the ELF holds those, not pc.ram.
        both = [a for a in single if a in in_elf and not 0xa0000 <= a < 0x100000]
        check(len(both) > 15000, name + ": most of pc.ram is in both", str(len(both)))
        bad = [hex(a) for a in both if single[a] != in_elf[a]]
        check(not bad, name + ": pc.ram pages equal the ELF dump's", repr(bad[:5]))


def libvirt_header(xml, magic=b"LibvirtQemudSave", fmt=0):
    """libvirt's save header (its qemu_saveimage.h): magic, version 2,
    data_len, was_running, format, cookieOffset, 14 unused; then the XML."""
    return (magic + struct.pack("<5I", 2, len(xml), 0, fmt, 0) + bytes(56) + xml)


@test("qemu")
def qemu_forms():
    """The same stream from a pipe, in zstd, in gzip, behind libvirt's header:
    the same pages as the file."""
    name, mig, _ = qemu_files()[0]
    base = ksm(["-r", "pages", "-a", "xxh64", "--csv", mig])
    want = pages_rows(base, "plain")
    blob = open(mig, "rb").read()
    xml = b"<domain type='kvm'><name>g</name></domain>\n".ljust(4000, b"\0")
    saved = libvirt_header(xml) + blob
    for how, args, inp in (("pipe", ["-"], blob),
                           ("gzip pipe", ["-"], tool(["gzip", "-c", "-1"], blob)),
                           ("virsh save file", [write("saved", saved)], None),
                           ("virsh save pipe", ["-"], saved)):
        r = ksm(["-r", "pages", "-a", "xxh64", "--csv"] + args, input=inp)
        eq(pages_rows(r, how), want, "qemu-save %s: same pages as the file" % how)
        eq(r.returncode if r else None, 0, "qemu-save %s: exit status" % how)
    r = ksm([write("saved-xz", libvirt_header(xml, fmt=3) + blob)])
    lines = err_lines(r)
    check(r and r.returncode == 1 and len(lines) == 1 and "xz" in lines[0],
          "libvirt image compressed with xz: one line naming it", repr(lines))
    r = ksm([write("part", libvirt_header(xml, b"LibvirtQemudPart") + blob)])
    check(r and r.returncode == 0 and "incomplete" in r.stderr.decode(),
          "LibvirtQemudPart: a warning that the save is incomplete", repr(err_lines(r)))


@test("qemu")
def qemu_truncated():
    """A cut stream gives the first pages of the whole one, exit 1, one line."""
    name, mig, _ = qemu_files()[0]
    blob = open(mig, "rb").read()
    full = pages_rows(ksm(["-r", "pages", "-a", "xxh64", "--csv", mig]), "full")
    for cut in (20, 300, len(blob) // 3, len(blob) // 2 + 7):
        for how, args, inp in (("file", [write("cut%d" % cut, blob[:cut])], None),
                               ("pipe", ["-"], blob[:cut])):
            r = ksm(["-r", "pages", "-a", "xxh64", "--csv"] + args, input=inp)
            got = pages_rows(r, "cut")
            what = "qemu-save cut at %d (%s)" % (cut, how)
            check(got == full[:len(got)] and len(got) < len(full), what + ": a prefix",
                  "%d of %d" % (len(got), len(full)))
            lines = err_lines(r)
            check(r and r.returncode == 1 and len(lines) == 1 and "truncated" in lines[0]
                  and ", at offset " in lines[0], what + ": one error line", repr(lines))


@test("qemu")
def qemu_written_here():
    """Streams this test writes: pages, fill runs, CONTINUE; and each
    capability the reader does not read named in one line."""
    be = lambda n, v: v.to_bytes(n, "big")  # noqa: E731
    a, b = image(1, 3), image(2, 4)[PAGE:]
    recs = (be(8, 0x3000 | 8) + b"\x06pc.ram" + a + be(8, 0x5000 | 0x22) + b"\0"
            + be(8, 0x6000 | 0x22) + b"\0" + be(8, 0x7000 | 0x28) + b
            + be(8, 0x8000 | 0x22) + b"\x5a")
    r = ksm(["-r", "pages", "-a", "xxh64", "--csv", write("mine.mig", ram_stream(recs))])
    eq(pages_rows(r, "written"), [(0x3000, xxh64(a)), (0x5000, xxh64(ZERO)),
                                  (0x6000, xxh64(ZERO)), (0x7000, xxh64(b)),
                                  (0x8000, xxh64(b"\x5a" * PAGE))], "written stream: pages")
    eq(r.returncode if r else None, 0, "written stream: exit status")
    for flag, word in ((0x100, "compressed"), (0x40, "XBZRLE"), (0x200, "multifd")):
        bad = recs + be(8, 0x9000 | 0x20 | flag) + bytes(64)
        r = ksm([write("flag%x" % flag, ram_stream(bad))])
        lines = err_lines(r)
        check(r and r.returncode == 1 and len(lines) == 1 and word in lines[0],
              "RAM flag 0x%x: one line naming %s" % (flag, word), repr(lines))
    post = ram_stream(recs).replace(b"\x01" + be(4, 2), b"\x08" + be(2, 3) + be(2, 0)
                                    + b"\x01" + be(4, 2), 1)
    r = ksm([write("postcopy", post)])
    lines = err_lines(r)
    check(r and r.returncode == 1 and len(lines) == 1 and "postcopy" in lines[0],
          "postcopy advise: one line naming postcopy", repr(lines))
    r = ksm([write("outside", ram_stream(be(8, (1 << 20) | 8) + b"\x06pc.ram" + a))])
    lines = err_lines(r)
    check(r and r.returncode == 1 and len(lines) == 1 and "outside" in lines[0],
          "a page outside its block: one line", repr(lines))


if __name__ == "__main__":
    sys.exit(run_suite("ksmscan-inputs-"))
