#!/usr/bin/python3
"""Write the corpus of broken dumps in tests/corpus/ and expected.tsv.

Each case is built from a valid dump (the writers of tests/dump_helpers.py)
by one deliberate defect; the expected exit status and first line of standard
error are stated here from how the defect was made (the offset where it is),
not taken from ksmscan. FILE in expected.tsv stands for the path given.
Run it again only to change the corpus; test_broken_dumps_corpus.py reads the files.
"""
import bz2, lzma, os, random, struct, subprocess, sys, zlib

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
import dump_helpers as tf  # noqa: E402
import input_helpers as ti  # noqa: E402
import zstandard  # noqa: E402

PAGE = 4096
rnd = random.Random(11)


def rpage():
    """Random in its first quarter, so that zlib makes it smaller than a block
    (dump tools store a page whole when compression does not shrink it)."""
    return bytes(rnd.getrandbits(8) for _ in range(PAGE // 4)) + bytes(3 * PAGE // 4)


def main():
    cases = []  # (name, data, exit status, first stderr line)

    def add(name, data, status, line):
        cases.append((name, data, status, line))

    pages = [rpage(), bytes(PAGE), rpage(), rpage()]
    elf, ph = tf.build_elf([dict(paddr=0x100000, data=b"".join(pages[:2])),
                            dict(paddr=0x200000, data=b"".join(pages[2:]))])
    seg1 = ph[1]
    # ELF
    add("elf-truncated-header", elf[:40], 1, "FILE: ELF header truncated, at offset 40")
    cut = seg1["offset"] + PAGE + 100
    add("elf-truncated-in-segment", elf[:cut], 1,
        "FILE: segment 1 data (%d bytes at offset %d) runs past the end of the file, "
        "at offset %d" % (seg1["filesz"], seg1["offset"], cut))
    huge = bytearray(elf)
    struct.pack_into("<H", huge, 56, 60000)
    add("elf-phnum-huge", bytes(huge), 1,
        "FILE: 60000 program headers do not fit in the file, at offset 64")
    ovf = bytearray(elf)
    struct.pack_into("<Q", ovf, 64 + 56 + 8, 2**64 - PAGE)      # p_offset of segment 1
    add("elf-offset-plus-size-overflows", bytes(ovf), 1,
        "FILE: segment 1 data (%d bytes at offset %d) runs past the end of the file, "
        "at offset %d" % (seg1["filesz"], 2**64 - PAGE, len(elf)))
    e32 = bytearray(elf)
    e32[4] = 1
    add("elf-32-bit", bytes(e32), 1, "FILE: 32-bit ELF cores are not supported, at offset 4")
    ebe = bytearray(elf)
    ebe[5] = 2
    add("elf-big-endian", bytes(ebe), 1,
        "FILE: big-endian ELF cores are not supported, at offset 5")

    # kdump, assembled
    kd, info = tf.build_kdump([(i, p) for i, p in enumerate(pages)],
                              codec=lambda i, d: "zlib")
    add("kdump-truncated-header", kd[:300], 1, "FILE: kdump header truncated, at offset 300")
    bs = bytearray(kd)
    struct.pack_into("<i", bs, 428, 8192)
    add("kdump-block-size-8192", bytes(bs), 1, "FILE: kdump block size 8192 is not 4096, "
        "at offset 428")
    bm = bytearray(kd)
    struct.pack_into("<I", bm, 436, 1 << 20)
    add("kdump-bitmap-larger-than-file", bytes(bm), 1,
        "FILE: kdump bitmap of 1048576 blocks does not fit in the file, at offset 8192")
    last = info["pages"][-1]
    cut = last["off"] + 10
    add("kdump-truncated-in-page-data", kd[:cut], 1,
        "FILE: data of pfn %d (%d bytes at offset %d) past the end of the file, at offset %d"
        % (last["pfn"], last["size"], last["off"], last["desc"]))
    past = bytearray(kd)
    p0 = info["pages"][0]
    struct.pack_into("<Q", past, p0["desc"], len(kd) + PAGE)
    add("kdump-descriptor-past-end", bytes(past), 1,
        "FILE: data of pfn 0 (%d bytes at offset %d) past the end of the file, at offset %d"
        % (p0["size"], len(kd) + PAGE, p0["desc"]))
    big = bytearray(kd) + bytes(2 * PAGE)
    struct.pack_into("<I", big, p0["desc"] + 8, 2 * PAGE)
    add("kdump-size-larger-than-block", bytes(big), 1,
        "FILE: data of pfn 0 is 8192 bytes, more than the block size, at offset %d" % p0["desc"])
    over = bytearray(kd)
    struct.pack_into("<Q", over, p0["desc"], 0)        # pfn 0's zlib data: the header
    add("kdump-descriptor-overlapping-header", bytes(over), 1,
        "FILE: zlib page of pfn 0 does not inflate to 4096 bytes, at offset 0")
    for n, name in ((4095, "short"), (4097, "long"), (1 << 20, "bomb")):
        blob = zlib.compress(b"\x07" * n)
        pg = [(0, pages[0])]
        img, inf = tf.build_kdump(pg, codec=lambda i, d: "zlib")
        d0 = inf["pages"][0]
        img = bytearray(img[:d0["off"]]) + blob
        struct.pack_into("<I", img, d0["desc"] + 8, len(blob))
        add("kdump-zlib-inflates-%s" % name, bytes(img), 1,
            "FILE: zlib page of pfn 0 does not inflate to 4096 bytes, at offset %d" % d0["off"])
    lzo = bytearray(kd)
    struct.pack_into("<I", lzo, p0["desc"] + 12, 0x2)
    add("kdump-lzo-page", bytes(lzo), 1,
        "FILE: pages compressed with lzo are not supported; they are skipped, at offset %d"
        % p0["off"])

    # kdump, flattened
    flat = tf.flatten(kd)
    add("flat-truncated-header", flat[:100], 1,
        "FILE: flattened header truncated, at offset 100")
    add("flat-no-end-marker", tf.flatten(kd, end=False), 1,
        "FILE: flattened dump ends without its end marker, at offset %d"
        % len(tf.flatten(kd, end=False)))
    add("flat-record-truncated", flat[:PAGE + 16 + 1000], 1,
        "FILE: flattened record data truncated, at offset %d" % (PAGE + 16 + 1000))

    # LiME
    lime = tf.lime_header(0x1000, 0x1000 + 2 * PAGE - 1) + pages[0] + pages[1]
    add("lime-end-before-start", tf.lime_header(0x5000, 0x1000) + pages[0], 1,
        "FILE: LiME range ends (0x1000) before it starts (0x5000), at offset 16")
    add("lime-truncated-header", lime + lime[:20], 1,
        "FILE: LiME range header truncated, at offset %d" % len(lime))
    bad = lime + b"XXXX" + lime[4:32]
    add("lime-bad-magic", bad, 1, "FILE: no LiME range header (bad magic), at offset %d"
        % len(lime))
    add("lime-truncated-data", lime[:32 + PAGE + 5], 1,
        "FILE: LiME range 0x1000-0x2fff runs past the end of the file, at offset 0")

    # zstd
    z = zstandard.ZstdCompressor(write_checksum=True).compress(elf)
    add("zstd-garbage-after-magic", b"\x28\xb5\x2f\xfd" + b"garbage!" * 8, 1,
        "FILE: zstd: ")
    # Nothing decodes before the cut of so small a frame: the error is at 0.
    add("zstd-truncated", z[:len(z) // 2], 1, "FILE: zstd stream truncated after %d "
        "compressed bytes, at offset 0" % (len(z) // 2))

    # gzip, xz, bzip2, lz4: cut, and damaged right after the magic. The
    # offset of a cut is what the decoder itself gives before it.
    raw = b"".join(pages) * 8
    lz4 = subprocess.run(["lz4", "-c", "-q", "-B4"], input=raw, capture_output=True,
                         check=True).stdout
    packed = {"gzip": (subprocess.run(["gzip", "-c", "-1"], input=raw, capture_output=True,
                                      check=True).stdout, lambda b: zlib.decompressobj(31)
                       .decompress(b), b"\x1f\x8b\x08"),
              "xz": (lzma.compress(raw), lambda b: lzma.LZMADecompressor().decompress(b),
                     b"\xfd7zXZ\0"),
              "bzip2": (bz2.compress(raw), lambda b: bz2.BZ2Decompressor().decompress(b),
                        b"BZh9"),
              "lz4": (lz4, lambda b: subprocess.run(["lz4", "-dc"], input=b,
                                                    capture_output=True).stdout,
                      b"\x04\x22\x4d\x18")}
    for kind, (blob, decode, magic) in packed.items():
        cut = blob[:len(blob) * 2 // 3]
        add("%s-truncated" % kind, cut, 1, "FILE: %s stream truncated after %d compressed "
            "bytes, at offset %d" % (kind, len(cut), len(decode(cut))))
        add("%s-garbage-after-magic" % kind, magic + b"garbage!" * 8, 1, "FILE: %s: " % kind)

    # qemu-save: a stream written from the format (input_helpers.ram_stream).
    be = lambda n, v: v.to_bytes(n, "big")  # noqa: E731
    recs = be(8, 0x3000 | 8) + b"\x06pc.ram" + pages[0] + be(8, 0x5000 | 0x22) + b"\0"
    q = ti.ram_stream(recs)
    first = q.index(pages[0])
    add("qemu-truncated-in-page", q[:first + 100], 1,
        "FILE: QEMU stream truncated in a page, at offset %d" % (first - 15))
    add("qemu-truncated-header", q[:6], 1, "FILE: QEMU stream truncated in its header, "
        "at offset 0")
    add("qemu-version-2", b"QEVM" + be(4, 2) + q[8:], 1,
        "FILE: QEMU stream version 2: only version 3 is read, at offset 4")
    bad = q[:first - 15] + be(8, 0x3000 | 0x108) + q[first - 7:]
    add("qemu-compressed-page", bad, 1, "FILE: the stream uses compressed pages, which is "
        "not read (save without the compress, xbzrle, multifd and postcopy capabilities), "
        "at offset %d" % (first - 15))
    blocks = q.index(b"\x06pc.ram")
    add("qemu-block-list-too-long", q[:blocks + 7] + be(8, 1 << 40) + q[blocks + 15:], 1,
        "FILE: RAM block \"pc.ram\" (%d bytes) runs past the RAM size the stream "
        "declares, at offset %d" % (1 << 40, blocks))
    xml = b"<domain/>".ljust(300, b"\0")
    add("libvirt-xml-past-end", ti.libvirt_header(xml)[:200], 1,
        "FILE: libvirt's domain XML (300 bytes) runs past the end of the file, at offset 20")
    add("libvirt-truncated-header", ti.libvirt_header(xml)[:50], 1,
        "FILE: QEMU stream truncated in libvirt's save header, at offset 0")
    add("libvirt-gzip-image", ti.libvirt_header(xml, fmt=1) + q, 1,
        "FILE: libvirt save image compressed with gzip (save_image_format): not read, "
        "at offset 28")

    out = os.path.join(here)
    with open(os.path.join(out, "expected.tsv"), "w") as f:
        f.write("# file\texit status\tfirst line of stderr (FILE: the path given; a line "
                "ending in ': ' is a prefix)\n")
        for name, data, status, line in cases:
            with open(os.path.join(out, name + ".bin"), "wb") as g:
                g.write(data)
            f.write("%s.bin\t%d\tksmscan: %s\n" % (name, status, line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
