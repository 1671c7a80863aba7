"""The command line of ksmfleet: options, the run, and one line for every
error (no traceback reaches a user)."""
import argparse
import os
import re
import sys
from fractions import Fraction

from . import cluster, load, placement, reports
from .errors import BadRow, Failure
from .model import PAGE
from .output import Output, shown

PROG = "ksmfleet"
REPORTS = {"totals": reports.totals, "hosts": reports.hosts_report,
           "pairs": reports.pairs_report, "partners": reports.partners_report,
           "placement": placement.placement_report}
SKETCH_REPORTS = ("pairs", "partners")
PLACEMENTS = ("auto", "exact", "pairs", "first-fit")
# distributed's schemes that reach another process (inproc:// does not)
SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Failure(message + " (see ksmfleet --help)", 2)


def parse_args(argv):
    p = Parser(prog=PROG, description=(
        "What KSM would save across hosts, from their ksmscan contents or "
        "sketch exports (plain or zstd-compressed CSV), computed on Dask."))
    p.add_argument("exports", nargs="+", metavar="EXPORT",
                   help="`ksmscan -r contents --csv` or `-r sketch --csv` output")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None, metavar="N",
                       help="worker processes of the local cluster (default: CPUs)")
    where.add_argument("--scheduler", metavar="ADDR",
                       help="use this distributed scheduler (tcp://host:8786)")
    p.add_argument("--dashboard", metavar="ADDR", default=None,
                   help="the local cluster's dashboard at ADDR (default: none)")
    p.add_argument("--report", default="totals", choices=list(REPORTS),
                   help="totals (default), hosts, pairs, partners or placement")
    p.add_argument("--top", type=int, default=5, metavar="N",
                   help="partners and placement: partners per host (default 5)")
    p.add_argument("--common", type=int, default=64, metavar="HOSTS",
                   help="contents held by more hosts make no pairs of their own "
                   "(default 64)")
    p.add_argument("--capacity", metavar="SIZE",
                   help="placement: what a machine holds before merging: pages, "
                   "or bytes with K, M, G or T (64G)")
    p.add_argument("--placement", default="auto", choices=PLACEMENTS,
                   help="placement's method: exact up to 8 hosts, else from the "
                   "best pairs (auto, the default); exact; pairs; first-fit")
    p.add_argument("--csv", action="store_true", help="CSV instead of a table")
    p.add_argument("-m", "--max-page-sharing", type=int, default=256, metavar="N",
                   help="KSM's max_page_sharing, N >= 2 (default 256)")
    p.add_argument("-z", "--use-zero-pages", action="store_true",
                   help="model KSM with use_zero_pages=1")
    a = p.parse_args(argv)
    check_args(a)
    return a


def check_args(a):
    if a.workers is not None and not 1 <= a.workers <= 256:
        raise Failure("--workers wants 1 to 256, not %d" % a.workers, 2)
    if a.scheduler is not None:
        a.where = scheduler_address(a.scheduler)
    if a.dashboard is not None and (a.scheduler or not a.dashboard.strip()):
        raise Failure("--dashboard wants an address (HOST:PORT) and the local cluster", 2)
    if not 2 <= a.max_page_sharing <= 1 << 31:
        raise Failure("--max-page-sharing wants 2 to 2^31", 2)
    if not 1 <= a.top <= 1 << 20:
        raise Failure("--top wants 1 to 2^20", 2)
    if not 2 <= a.common <= 1 << 20:
        raise Failure("--common wants 2 to 2^20", 2)
    if a.capacity is not None:
        a.capacity = capacity_pages(a.capacity)
    if a.report == "placement" and a.capacity is None:
        raise Failure("--report=placement needs --capacity=SIZE (pages, or bytes as 64G)", 2)


SIZE_RE = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)([KMGT])")
SUFFIX = "KMGT"


def capacity_pages(text):
    """--capacity in pages: a plain number is pages (as before sizes were
    taken); digits with an optional fraction and K, M, G or T (powers of
    1024, as ksmscan's sizes) are bytes, rounded down to whole pages. From
    1 page to 2^51 pages."""
    if re.fullmatch(r"[0-9]{1,16}", text):
        pages = int(text)
    else:
        m = SIZE_RE.fullmatch(text)
        if not m or len(text) > 40:
            raise Failure("--capacity wants pages (4194304) or a size such as 64G "
                          "(K, M, G, T: powers of 1024), not %r" % text[:40], 2)
        pages = int(Fraction(m.group(1)) * 1024 ** (SUFFIX.index(m.group(2)) + 1)) // PAGE
    if not 1 <= pages <= 1 << 51:
        raise Failure("--capacity wants 1 page (4K) to 2^51 pages (8E), not %r" % text[:40], 2)
    return pages


def scheduler_address(text):
    """(scheme, host, port) of --scheduler: SCHEME://HOST:PORT or HOST:PORT
    (tcp), HOST a name or address ([...] for IPv6), PORT 1 to 65535 (8786
    when left out); anything else is a usage error, before any connection."""
    wants = ("--scheduler wants a scheduler's network address, as tcp://HOST:8786, "
             "not %r" % text[:80])
    scheme, rest = text.split("://", 1) if "://" in text else ("tcp", text)
    if scheme not in SCHEMES:
        raise Failure(wants + " (schemes: %s)" % ", ".join(SCHEMES), 2)
    m = re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::([0-9]{1,5}))?", rest)
    if not m:
        raise Failure(wants, 2)
    port = int(m.group(2)) if m.group(2) else 8786
    if not 1 <= port <= 65535:
        raise Failure("--scheduler: port %d is not one from 1 to 65535" % port, 2)
    return scheme, m.group(1).strip("[]"), port


def run(a, out):
    f, kind, hosts = load.load(a.exports)
    if kind == "sketch" and a.report not in SKETCH_REPORTS:
        raise Failure("--report=%s needs contents exports; from sketches "
                      "ksmfleet estimates pairs and partners only" % a.report, 2)
    if a.report in ("pairs", "partners", "placement"):
        f = reports.by_frames(f)
    REPORTS[a.report](f, kind, hosts, a, out)


def run_here_if_lost(a, out):
    """run(a, out); if the cluster itself fails (a worker lost a task's input under
    load: distributed raises KeyError or CancelledError, not the export's
    error), compute again in this process, where an export's error is the one
    raised."""
    import dask
    import pandas as pd
    try:
        run(a, out)
    except (Failure, ValueError, OSError, pd.errors.ParserError):
        raise
    except Exception as e:  # the cluster's, not the data's: the answer is the same
        if out.started:    # rows written cannot be taken back
            raise Failure("the cluster failed after the first rows were written (%s)"
                          % cluster.first_line(e), 1)
        with dask.config.set(scheduler="synchronous"):
            run(a, out)


def peak_rss():
    """The client's peak resident memory in MiB (VmHWM), for make bench."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def checked(argv):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    for p in a.exports:
        if not os.path.isfile(p):
            raise Failure("%s: %s" % (p, "no such file" if not os.path.exists(p)
                                      else "not a regular file"), 1)
    return a


def main(argv=None):
    client = local = None
    try:
        a = checked(argv)
        client, local = cluster.start(a)
        run_here_if_lost(a, Output(a.csv))
        sys.stdout.flush()
        return 0
    except Failure as e:
        print("%s: %s" % (PROG, shown(e)), file=sys.stderr)
        return e.status
    except BadRow as e:
        print("%s: %s" % (PROG, shown(e.message())), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("%s: interrupted" % PROG, file=sys.stderr)
        return 130
    except BrokenPipeError:
        sys.stderr.close()          # the reader left: nothing more to say
        return 1
    except Exception as e:   # a cluster's or a library's: one line all the same
        print("%s: %s: %s" % (PROG, type(e).__name__, shown(cluster.first_line(e))),
              file=sys.stderr)
        return 1
    finally:
        quietly_close(client, local)
        if os.environ.get("KSMFLEET_PEAK_RSS"):
            print("%s: client peak RSS %.1f MiB" % (PROG, peak_rss()), file=sys.stderr)


def quietly_close(client, local):
    for x in (client, local):
        try:
            if x:
                x.close()
        except Exception:  # closing is best effort; the answer is given
            pass
