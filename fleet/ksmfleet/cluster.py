"""The Dask client: a LocalCluster on this machine, or a scheduler given.

The LocalCluster listens on 127.0.0.1 only (scheduler and workers) and
serves no dashboard unless --dashboard=ADDR asks for one: what it serves
has no authentication.

With --scheduler the workers may not have ksmfleet installed: the package
travels with the tasks (cloudpickle by value), and dask pickles some tasks
(blockwise ones) with plain pickle, which names functions by module, so
the package is also uploaded to every worker, those there now and those
that join later, as a zip file on their import path.
"""
import logging
import os
import re
import socket
import tempfile
import time
import zipfile

from .errors import Failure

PACKAGE = os.path.dirname(os.path.abspath(__file__))


def package_zip(folder):
    """The package's modules in a zip file in @folder (dask's upload_file
    puts a zip on the workers' import path)."""
    path = os.path.join(folder, "ksmfleet.zip")
    with zipfile.ZipFile(path, "w") as z:
        for name in sorted(os.listdir(PACKAGE)):
            if name.endswith(".py"):
                z.write(os.path.join(PACKAGE, name), "ksmfleet/" + name)
    return path


def first_line(e):
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else type(e).__name__


def reachable(address, where):
    """Fail at once, in one line saying what was tried, when nothing
    listens at the scheduler's host and port (distributed would retry for
    its whole timeout) or the host has no address."""
    scheme, host, port = where
    if scheme == "ucx":
        return
    try:
        socket.create_connection((host, port), timeout=10).close()
    except OSError as e:
        why = ("nothing listens there (connection refused)" if isinstance(e, ConnectionRefusedError)
               else "no answer in 10 s" if isinstance(e, socket.timeout)
               else e.strerror or first_line(e))
        raise Failure("--scheduler=%s: no scheduler there: tried %s port %d: %s"
                      % (address, host, port, why), 1)


def connect(address, where):
    """A client of the scheduler at @address (@where: its scheme, host and
    port, checked by cli.scheduler_address), with a worker."""
    from distributed import Client
    reachable(address, where)
    scheme, host, port = where
    url = "%s://%s:%d" % (scheme, "[%s]" % host if ":" in host else host, port)
    began = time.monotonic()
    try:
        client = Client(url, timeout=30)
    except ImportError as e:   # ucx:// without its module
        raise Failure("--scheduler=%s: the %s scheme needs the Python module %s, which is "
                      "not installed" % (address, scheme, e.name), 1)
    except (OSError, TimeoutError, ValueError, TypeError, KeyError) as e:
        raise Failure("--scheduler=%s: no scheduler answered at %s in %.0f s (%s)" % (
            address, url, time.monotonic() - began,
            re.sub(r" after [0-9.]+ ?s\b", "", first_line(e))), 1)
    try:
        client.wait_for_workers(1, timeout=60)
        with tempfile.TemporaryDirectory() as tmp:
            client.upload_file(package_zip(tmp))
    except (OSError, TimeoutError) as e:
        client.close()
        raise Failure("--scheduler=%s: no worker there: %s" % (address, first_line(e)), 1)
    return client


def start(a):
    """(client, cluster or None)."""
    import cloudpickle
    import ksmfleet
    cloudpickle.register_pickle_by_value(ksmfleet)   # and its modules
    for name in ("distributed", "tornado", "bokeh"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    if a.scheduler:
        return connect(a.scheduler, a.where), None
    import dask
    from distributed import Client, LocalCluster
    n = a.workers or os.cpu_count() or 1
    quiet = {}
    if not a.dashboard:
        # distributed serves HTTP (/health, /metrics...) even without a
        # dashboard, by default on every interface at 8787: no routes, and
        # on loopback at a port of the kernel's choosing.
        dask.config.set({"distributed.scheduler.http.routes": [],
                         "distributed.worker.http.routes": []})
        quiet = {"dashboard_address": "127.0.0.1:0"}
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address=a.dashboard,
                           scheduler_kwargs=quiet, silence_logs=logging.CRITICAL,
                           worker_dashboard_address=None if a.dashboard else "127.0.0.1:0")
    return Client(cluster), cluster
