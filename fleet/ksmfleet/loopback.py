"""A real Dask cluster on this machine, for the tests and make bench: a
`dask scheduler` and `dask worker` processes started as commands of their
own, listening on 127.0.0.1 only, and stopped (their whole process groups)
when the `with` block ends, also on an error.

    with Loopback(workers=2, folder=tmpdir) as address:
        subprocess.run(["fleet/bin/ksmfleet", "--scheduler=" + address, ...])
"""
import json
import os
import shutil
import signal
import subprocess
import time


class Loopback:
    def __init__(self, workers, folder, memory="2GiB", seconds=60):
        self.workers, self.folder, self.memory, self.seconds = workers, folder, memory, seconds
        self.procs = []
        self.file = os.path.join(folder, "scheduler.json")

    def start(self, args, log):
        with open(os.path.join(self.folder, log), "w") as f:
            self.procs.append(subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT,
                                               start_new_session=True))

    def address(self):
        """The scheduler's address once it has written it, or None after
        self.seconds or when it has exited."""
        for _ in range(self.seconds * 10):
            if self.procs[0].poll() is not None:
                return None
            try:
                with open(self.file) as f:
                    return json.load(f)["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.1)
        return None

    def __enter__(self):
        dask = shutil.which("dask")
        if not dask:
            raise OSError("no dask command (python3-distributed)")
        try:
            self.start([dask, "scheduler", "--host", "127.0.0.1", "--port", "0",
                        "--no-dashboard", "--scheduler-file", self.file], "scheduler.log")
            addr = self.address()
            if not addr:
                raise OSError("the scheduler did not start: see %s/scheduler.log" % self.folder)
            self.start([dask, "worker", "--scheduler-file", self.file, "--host", "127.0.0.1",
                        "--nworkers", str(self.workers), "--nthreads", "1", "--no-dashboard",
                        "--memory-limit", self.memory], "worker.log")
        except BaseException:
            self.stop()
            raise
        return addr

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    def stopped(self):
        return all(p.poll() is not None for p in self.procs)

    def log(self, name):
        with open(os.path.join(self.folder, name)) as f:
            return f.read()
