#!/usr/bin/python3
"""Compressed inputs: gzip, xz, bzip2, lz4 and zstd around any input.

    /usr/bin/python3 tests/test_format_compressed.py [NAME-SUBSTRING...]

Each compressor's file and pipe give the pages written; concatenated frames
are one input; a cut layer counts every page decoded before the cut (as much
as the decompressor itself gives); gzip inside zstd is read, a third layer is
refused; damaged streams are one line and exit 1.

Oracles: the bytes written here, the decompressors themselves (Python's
zlib, lzma and bz2, `zstd -dc`, `lz4 -dc`). Broken zstd around each dump
format is in test_broken_dumps.py.
"""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import PAGE, check, eq, run_suite, test  # noqa: E402
from input_helpers import (COMPRESS, decoded_prefix, err_lines, expect_pages, have,
                           image, ksm, pages_rows, tool, write)  # noqa: E402


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


def main():
    return run_suite("ksmscan-inputs-")


if __name__ == "__main__":
    sys.exit(main())
