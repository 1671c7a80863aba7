#!/usr/bin/python3
"""Files that are not memory: refused, unless -f raw says otherwise.

    /usr/bin/python3 tests/test_format_refused.py [NAME-SUBSTRING...]

Disk images, programs, archives and other known kinds (also inside gzip) are
refused with one line naming the kind, exit 1; `-f raw` reads them as raw
pages; real programs of the system are refused as programs.

Oracle: the bytes written here (each kind's magic at its offset).
"""
import io, os, struct, sys, tarfile, zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import PAGE, SUMMARY_COLS, check, eq, parse_csv, run_suite, test  # noqa: E402
from input_helpers import (Out, err_lines, expect_pages, image, ksm, pages_rows, tool,
                           write)  # noqa: E402


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


def main():
    return run_suite("ksmscan-inputs-")


if __name__ == "__main__":
    sys.exit(main())
