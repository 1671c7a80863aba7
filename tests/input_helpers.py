#!/usr/bin/python3
"""What the suites of compressed, qemu-save and refused inputs share
(test_format_compressed, test_format_qemu, test_format_refused): running
$KSMSCAN on bytes or a file, the pages report's (address, xxh64) rows, the
pages of bytes the suite wrote, the compressors' commands and an independent
decoder of each (Python's zlib, lzma and bz2, `zstd -dc`, `lz4 -dc`), and the
writers of qemu-save streams: ksmtest's ram_stream() and libvirt's save
header (fuzz/make_seeds.py and tests/corpus/make_corpus.py use them too).
"""
import bz2, lzma, os, random, shutil, struct, subprocess, sys, zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# ksmtest first: it says which package to install when a module is missing.
from ksmtest import KSMSCAN, PAGE, ZERO, check, skip, tmp  # noqa: E402
from ksmtest import ram_stream  # noqa: E402,F401  (a qemu-save writer, used by the seeds)
import xxhash  # noqa: E402


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


def libvirt_header(xml, magic=b"LibvirtQemudSave", fmt=0):
    """libvirt's save header (its qemu_saveimage.h): magic, version 2,
    data_len, was_running, format, cookieOffset, 14 unused; then the XML."""
    return (magic + struct.pack("<5I", 2, len(xml), 0, fmt, 0) + bytes(56) + xml)
