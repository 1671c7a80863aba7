#!/usr/bin/python3
"""QEMU's migration stream (qemu-save) as an input.

    /usr/bin/python3 tests/test_format_qemu.py [NAME-SUBSTRING...]

The committed fixture (tests/fixtures/qemu-64m.mig.zst, made by
tests/fixtures/make_qemu.py, which this suite runs again where
qemu-system-x86_64 is installed, else one SKIP): the test's pages at
0x100000 of pc.ram, and every pc.ram page that QEMU's ELF dump of the same
memory holds has the same digest; behind libvirt's save header, through a
pipe and zstd; a cut stream gives a prefix; streams written here from the
format (ksmtest.ram_stream()); each unsupported stream one line naming it.
Hostile qemu-save streams (blocks apart, pages sent again) are in
test_hostile_input.py.
"""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import (PAGE, ZERO, check, eq, fixture, ram_stream, run_suite, skip, test,
                     tmp)  # noqa: E402
from input_helpers import (err_lines, expect_pages, image, ksm, libvirt_header,
                           pages_rows, tool, write, xxh64)  # noqa: E402
import zstandard  # noqa: E402

sys.path.insert(0, os.path.dirname(fixture("make_qemu.py")))
import make_qemu  # noqa: E402


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


def main():
    return run_suite("ksmscan-inputs-")


if __name__ == "__main__":
    sys.exit(main())
