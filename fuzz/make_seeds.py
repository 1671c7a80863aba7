#!/usr/bin/python3
"""Write the fuzzers' seed corpora to fuzz/seeds/<fuzzer>/: small valid inputs
of every format, built with the writers of tests/dump_helpers.py (which the
format suites check against the fixtures and against ksmscan)."""
import bz2, gzip, lzma, os, random, shutil, struct, subprocess, sys, zlib

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests"))
import dump_helpers as tf  # noqa: E402
import input_helpers as ti  # noqa: E402
import zstandard  # noqa: E402

PAGE = 4096
rnd = random.Random(7)


def page(kind):
    if kind == "zero":
        return bytes(PAGE)
    if kind == "ff":
        return b"\xff" * PAGE
    if kind == "word":
        return struct.pack("<I", 0xdeadbeef) * (PAGE // 4)
    return bytes(rnd.getrandbits(8) for _ in range(PAGE))


def seeds():
    pages = [page(k) for k in ("zero", "rand", "ff", "rand", "zero", "word")]
    pages[3] = pages[1]
    elf, _ = tf.build_elf([
        dict(type=4, data=struct.pack("<IIII", 5, 40, 0x46494c45, 0) + b"CORE\0\0\0\0"
             + struct.pack("<QQ", 1, PAGE) + struct.pack("<QQQ", 0x400000, 0x402000, 0)
             + b"/bin/x\0\0"),
        dict(vaddr=0x400000, data=b"".join(pages[:2])),
        dict(paddr=0x100000, data=b"".join(pages[2:]) + b"tail"),
    ])
    kd, _ = tf.build_kdump([(i, p) for i, p in enumerate(pages)])
    flat = tf.flatten(kd)
    lime = tf.lime_header(0x1000, 0x1000 + 2 * PAGE - 1) + pages[0] + pages[1] + \
        tf.lime_header(0x10000, 0x10000 + 3 * PAGE + 99) + b"".join(pages[2:5]) + b"x" * 100
    raw = b"".join(pages) + b"partial"
    z = zstandard.ZstdCompressor(level=3, write_checksum=True)
    maps = (b"00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/dbus-daemon\n"
            b"00e03000-00e24000 rw-p 00000000 00:00 0 [heap]\n"
            b"7f2c4c000000-7f2c4c021000 rw-p 00000000 00:00 0 \n"
            b"7fffb2c0d000-7fffb2c2e000 rw-p 00000000 00:00 0 [stack]\n"
            b"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n")
    be = lambda n, v: v.to_bytes(n, "big")  # noqa: E731
    recs = (be(8, 0x3000 | 8) + b"\x06pc.ram" + pages[1] + be(8, 0x5000 | 0x22) + b"\0"
            + be(8, 0x6000 | 0x22) + b"\0" + be(8, 0x7000 | 0x28) + pages[5])
    qemu = ti.ram_stream(recs, ((b"pc.ram", 1 << 20), (b"pc.bios", 1 << 16)))
    saved = ti.libvirt_header(b"<domain/>\n".ljust(200, b"\0")) + qemu
    lz4 = subprocess.run(["lz4", "-c", "-q", "-B4"], input=raw, capture_output=True,
                         check=True).stdout
    layers = {"image.raw.gz": gzip.compress(raw), "image.raw.xz": lzma.compress(raw),
              "image.raw.bz2": bz2.compress(raw), "image.raw.lz4": lz4,
              "image.raw.gz.zst": z.compress(gzip.compress(raw)),
              "two-ranges.lime.xz": lzma.compress(lime)}
    return {
        "fuzz_elf": {"core.elf": elf},
        "fuzz_qemu": {"ram.qemu": qemu, "virsh-save.qemu": saved},
        "fuzz_kdump": {"assembled.kdump": kd, "flattened.kdump": flat},
        "fuzz_lime": {"two-ranges.lime": lime},
        "fuzz_auto": {"core.elf": elf, "assembled.kdump": kd, "flattened.kdump": flat,
                      "two-ranges.lime": lime, "image.raw": raw,
                      "core.elf.zst": z.compress(elf), "ram.qemu": qemu,
                      "virsh-save.qemu.gz": gzip.compress(saved), **layers},
        "fuzz_stream": {"core.elf.zst": z.compress(elf), "flattened.kdump.zst": z.compress(flat),
                        "two-ranges.lime.zst": z.compress(lime), "image.raw.zst": z.compress(raw),
                        "image.raw": raw, "flattened.kdump": flat, "ram.qemu.xz":
                        lzma.compress(qemu), **layers},
        "fuzz_maps": {"maps": maps},
        "fuzz_options": {"range": b"0x1000-4K", "algos": b"xxhash,crc32c,xxh3", "size": b"12G",
                         "duration": b"0.25s"},
        # 32 addresses, 3 snapshots: duplicates, zero pages, pages that change
        # and go; ksmd with a small batch, smart_scan, use_zero_pages, M = 3.
        "fuzz_replay": {"series": bytes([31, 2, 9, 20, 3, 1, 24, 99]) + bytes(
            (i * 7 + s * (i % 3 == 0)) % 9 for s in range(3) for i in range(32))},
        # the JSON a live series of two processes writes, as --check reads it
        "fuzz_forecast": {"forecast.json": forecast()},
        # a record's uncompressed data (fuzz_record compresses it): a series
        # of three snapshots of these pages, as ksmscan --record writes it
        "fuzz_record": record(pages),
    }


def record(pages):
    """{name: the data of a record of three snapshots of @pages, changing},
    from ./ksmscan (or $KSMSCAN); none without it."""
    import tempfile
    exe = os.environ.get("KSMSCAN", os.path.join(here, "..", "ksmscan"))
    if not os.path.exists(exe):
        print("make_seeds: no %s: no seed for fuzz_record" % exe)
        return {}
    with tempfile.TemporaryDirectory() as d:
        snaps = []
        for k in range(3):
            snaps.append(os.path.join(d, "s%d" % k))
            with open(snaps[-1], "wb") as f:
                f.write(b"".join(pages[k:] + pages[:k] + [pages[1]] * 3))
        subprocess.run([exe, "--series"] + snaps + ["--record=" + d + "/r"],
                       stdout=subprocess.DEVNULL, check=True)
        with open(d + "/r", "rb") as f:
            data = f.read()
    return {"series.record": zstandard.ZstdDecompressor().decompress(data[16:])}


def forecast():
    import json
    par = {"pages_to_scan": 100, "sleep_ms": 20, "use_zero_pages": 0,
           "max_page_sharing": 256, "smart_scan": 1, "policy": "fixed,advisor",
           "ksm_full_scans": 7}
    tl = [{"input": "pid:10+1", "scan": k, "seconds": 0.5 * k,
           "pages_shared": 3 * (k > 1), "pages_sharing": 40 * (k > 1),
           "ksm_zero_pages": 0, "general_profit": 160000 * (k > 1) - 5000}
          for k in (1, 2, 3)]
    ps = [{"input": "pid:%d" % p, "pid": p, "start_time": 1000 + p,
           "command": "guest", "scan": 3, "seconds": 1.5, "ksm_rmap_items": 30,
           "ksm_merging_pages": 20 + p % 3, "ksm_zero_pages": 0,
           "ksm_process_profit": 80000} for p in (10, 11)]
    return json.dumps({"parameters": par, "summary": [], "timeline": tl,
                       "processes": ps}).encode()


def main():
    out = os.path.join(here, "seeds")
    shutil.rmtree(out, ignore_errors=True)
    for fuzzer, files in seeds().items():
        os.makedirs(os.path.join(out, fuzzer))
        for name, data in files.items():
            with open(os.path.join(out, fuzzer, name), "wb") as f:
                f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
