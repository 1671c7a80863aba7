#!/usr/bin/python3
"""scripts/install-deps, run on a copy with a package list of the test's
(KSMSCAN_DEPS_PACKAGES) and a PATH of its own: every command of /usr/bin and
/usr/sbin except sudo, apt-get and apt, plus fakes that only log their
arguments, so nothing is ever installed.  Which packages are installed is
asked of dpkg-query by the test itself.

- a user that is not root, without sudo: exit status 1 (not 127), one line
  naming exactly the missing packages and the apt-get command to run as root;
- the same user with sudo: `sudo apt-get update` and `sudo apt-get install`
  of exactly the missing packages;
- root: apt-get itself, no sudo;
- nothing missing: exit 0, silent, no command run.

As root the test runs the script as `nobody` (setpriv); otherwise as the
user running the tests.

Then ksmfleet as installed: `make install DESTDIR=...` and the .deb
(scripts/make-deb, unpacked with dpkg-deb -x) hold every module of
fleet/ksmfleet/ and the man page, in a folder that the python3 running the
tests searches once DESTDIR is taken off (its own sys.path says so, for
PREFIX=/usr and /usr/local); the installed copy runs, as the launcher and
as `python3 -m ksmfleet`, with that folder on PYTHONPATH and nothing else
of the caller's environment (env -i), from another folder, giving the
totals a Python count of the test's own pages gives; the launcher is
`python3 -m ksmfleet`, no path of its own. `pip install --no-build-isolation
--no-index` of a copy of fleet/ into a fresh venv (--system-site-packages,
offline) gives the venv's `ksmfleet` and `python3 -m ksmfleet`, the same
totals again, and pyproject.toml's version is ksmscan's.

Then the Makefile finds its sources: a copy of the source with a new file
in model/ and in a new subfolder of report/ builds (make -n) exactly the
.c files under the rooms (os.walk), ksmscan.c and compat/glibc.c, links
them all, and cross-arm64 the same without compat/glibc.c and the x86
vector files; the Makefile names no multiarch folder.

Then the package list itself: every Python module that fleet/, tests/ and
bench/*.py import (read with the ast module; the standard library is
exempt) must come from a Debian package (`dpkg -S` of the module's file)
that the script lists, or that a listed package needs (Depends or
Pre-Depends, followed through; Recommends are not installed, since the
script passes --no-install-recommends). The same check is run on the list
without python3-pandas, where it must name pandas: the check can fail on a
machine that has every package installed. Likewise every static library the
Makefile links (LDLIBS) must come from a package of the BUILD list, and
without libjansson-dev the check names libjansson.a.
"""
import ast
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ksmtest import KSMSCAN, Skip, check, eq, run_suite, test, tmp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HIDDEN = {"sudo", "apt-get", "apt"}
MISSING = ["ksmscan-test-absent-one", "ksmscan-test-absent-two"]
LOGGER = '#!/bin/sh\necho "%s $*" >> "%s"\n%s'


def installed(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg],
                       capture_output=True, text=True)
    return r.returncode == 0 and "install ok installed" in r.stdout


def setup(name, fakes):
    """A folder (readable by nobody) with the script, a bin/ of symlinks and
    the fake commands given ({name: runs the rest of the command?})."""
    if not shutil.which("dpkg-query"):
        raise Skip("dpkg-query missing (not Debian)")
    os.chmod(os.path.dirname(tmp("x")), 0o755)
    d = tmp(name)
    os.makedirs(os.path.join(d, "bin"))
    os.chmod(d, 0o777)                         # the fakes' log is written here
    for src in ("/usr/bin", "/usr/sbin"):
        for cmd in os.listdir(src):
            link = os.path.join(d, "bin", cmd)
            if cmd not in HIDDEN and not os.path.lexists(link):
                os.symlink(os.path.join(src, cmd), link)
    log = os.path.join(d, "log")
    for cmd, chain in fakes.items():
        path = os.path.join(d, "bin", cmd)
        with open(path, "w") as f:
            f.write(LOGGER % (cmd, log, 'exec "$@"\n' if chain else "exit 0\n"))
        os.chmod(path, 0o755)
    script = os.path.join(d, "install-deps")
    shutil.copy(os.path.join(ROOT, "scripts", "install-deps"), script)
    os.chmod(script, 0o755)
    return d, script, log


def run(d, script, pkgs, as_root=False):
    env = ["/usr/bin/env", "-i", "PATH=" + os.path.join(d, "bin"),
           "KSMSCAN_DEPS_PACKAGES=" + " ".join(pkgs)]
    cmd = env + [script]
    if os.geteuid() == 0 and not as_root:
        cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] + cmd
    elif os.geteuid() != 0 and as_root:
        raise Skip("the root case needs root")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def logged(log):
    try:
        with open(log) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def present():
    pkgs = [p for p in ("dpkg", "coreutils") if installed(p)]
    if len(pkgs) < 2:
        raise Skip("dpkg and coreutils not both installed?")
    if any(installed(p) for p in MISSING):
        raise Skip("%s installed" % MISSING)
    return pkgs


def scenario(name, fakes, pkgs, as_root=False):
    """Run the script in a fresh folder: (the result, the fakes' calls)."""
    d, script, log = setup(name, fakes)
    return run(d, script, pkgs, as_root), logged(log)


def apt_calls(prefix):
    return [prefix + "apt-get update -qq",
            prefix + "apt-get install -y -qq --no-install-recommends " + " ".join(MISSING)]


@test("install-deps")
def no_sudo_names_missing():
    pkgs = present()
    r, calls = scenario("nosudo", {}, pkgs[:1] + MISSING + pkgs[1:])
    what = "not root, no sudo"
    check(r.returncode not in (0, 127), what + ": exit status non-zero, not 127",
          "rc=%d" % r.returncode)
    lines = (r.stdout + r.stderr).splitlines()
    eq(len(lines), 1, what + ": one line of output")
    line = lines[0] if lines else ""
    check("apt-get install " + " ".join(MISSING) in line and "root" in line,
          what + ": the line gives the command to run as root, with the missing packages",
          repr(line))
    check(not any(p in line.split() for p in pkgs),
          what + ": installed packages are not named", repr(line))
    check("not found" not in line, what + ": no 'not found'", repr(line))
    eq(calls, [], what + ": nothing run")


@test("install-deps")
def sudo_when_there():
    r, calls = scenario("sudo", {"sudo": True, "apt-get": False}, MISSING + present())
    eq(r.returncode, 0, "not root, with sudo: exit status (fake apt-get succeeds)")
    eq([c for c in calls if c.startswith("sudo ")], apt_calls("sudo "),
       "not root, with sudo: sudo apt-get update, then install of the missing packages")


@test("install-deps")
def root_runs_apt_get():
    r, calls = scenario("root", {"apt-get": False, "sudo": False}, present() + MISSING, True)
    eq(r.returncode, 0, "root: exit status (fake apt-get succeeds)")
    eq(calls, apt_calls(""), "root: apt-get itself, no sudo")


@test("install-deps")
def nothing_missing_is_silent():
    r, calls = scenario("none", {"sudo": False, "apt-get": False}, present())
    eq((r.returncode, r.stdout, r.stderr), (0, "", ""), "all installed: exit 0, silent")
    eq(calls, [], "all installed: nothing run")


# --- the package list covers what the code imports ----------------------------

def script_packages(path=os.path.join(ROOT, "scripts", "install-deps"),
                    lists=("BUILD", "TESTS")):
    """The packages of install-deps' BUILD and TESTS lists (or @lists)."""
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    pkgs = []
    for name in lists:
        m = re.search(r'^%s="([^"]*)"' % name, text, re.M)
        check(m is not None, "install-deps has a %s list" % name)
        pkgs += m.group(1).split() if m else []
    return pkgs


def fleet_modules():
    """The modules of the ksmfleet package, as fleet/ holds them."""
    return sorted(glob.glob(os.path.join(ROOT, "fleet", "ksmfleet", "*.py")))


def code_files():
    return fleet_modules() + glob.glob(os.path.join(ROOT, "tests", "*.py")) + glob.glob(
        os.path.join(ROOT, "bench", "*.py"))


def imported_modules(files):
    """Top-level names of the modules the files import, but the standard
    library's and the project's own (a file of fleet/, tests/ or bench/)."""
    own = {os.path.splitext(os.path.basename(f))[0] for f in code_files()
           + glob.glob(os.path.join(ROOT, "tests", "**", "*.py"), recursive=True)}
    own.add("ksmfleet")         # the package itself
    mods = {}
    for path in files:
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module]
            else:
                continue
            for n in names:
                top = n.split(".")[0]
                if top not in sys.stdlib_module_names and top not in own:
                    mods.setdefault(top, path)
    return mods


def module_package(mod):
    """The Debian package whose file is the module, or None."""
    spec = importlib.util.find_spec(mod)
    if spec is None or not spec.origin:
        return None
    path = os.path.realpath(spec.origin)
    r = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
    if r.returncode:
        return None
    return r.stdout.split(":")[0].strip()


def hard_closure(pkgs):
    """The packages and every package they need (Depends, Pre-Depends), as
    installed here; an alternative (a | b) guarantees neither."""
    seen, todo = set(), list(pkgs)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        r = subprocess.run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", p],
                           capture_output=True, text=True)
        for dep in r.stdout.split(","):
            dep = dep.strip()
            if dep and "|" not in dep:
                todo.append(re.split(r"[ :(]", dep)[0])
    return seen


def uncovered(pkgs, mods):
    """{module: its package} for the modules no listed package brings."""
    have = hard_closure(pkgs)
    out = {}
    for mod in mods:
        pkg = module_package(mod)
        if pkg not in have:
            out[mod] = pkg
    return out


@test("install-deps")
def imports_are_installed():
    if not shutil.which("dpkg") or not shutil.which("dpkg-query"):
        raise Skip("dpkg missing (not Debian)")
    mods = imported_modules(code_files())
    for must in ("dask", "distributed", "numpy", "pandas", "xxhash", "zstandard"):
        check(must in mods, "the ast scan finds the import of %s" % must, sorted(mods))
    pkgs = script_packages()
    eq(uncovered(pkgs, mods), {}, "every imported module's package is listed or needed by one")
    # The check fails when a package is left out, although it is installed here.
    without = [p for p in pkgs if p != "python3-pandas"]
    eq(uncovered(without, mods), {"pandas": "python3-pandas"},
       "without python3-pandas in the list: pandas is named")
    env_list = os.environ.get("KSMSCAN_DEPS_PACKAGES")
    if env_list:   # a list of the caller's, checked as the script's would be
        eq(uncovered(env_list.split(), mods), {}, "KSMSCAN_DEPS_PACKAGES covers the imports")


def build_packages(path=os.path.join(ROOT, "scripts", "install-deps")):
    """The packages of install-deps' BUILD list (what make needs)."""
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    m = re.search(r'^BUILD="([^"]*)"', text, re.M)
    return m.group(1).split() if m else []


def make_variable(name, root=ROOT, *args):
    """The value make gives a variable (its database, make -p)."""
    r = subprocess.run(["make", "-pnq", "-C", root] + list(args) + ["ksmscan"],
                       capture_output=True, text=True)
    m = re.search(r"^%s :?= (.*)$" % name, r.stdout, re.M)
    return m.group(1).split() if m else []


def static_libraries():
    """The static libraries the Makefile links ksmscan with (STATIC_LIBS,
    as the compiler found them)."""
    return sorted(make_variable("STATIC_LIBS"))


def file_package(path):
    r = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
    return r.stdout.split(":")[0].strip() if r.returncode == 0 else None


def unlisted_libraries(pkgs, libs):
    """{library: its package} for the libraries no package of pkgs brings."""
    have = hard_closure(pkgs)
    return {lib: file_package(lib) for lib in libs if file_package(lib) not in have}


@test("install-deps")
def libraries_are_installed():
    """Every static library make links comes from a package of the BUILD
    list (or one it needs): a fresh machine builds."""
    if not shutil.which("dpkg") or not shutil.which("dpkg-query"):
        raise Skip("dpkg missing (not Debian)")
    libs = static_libraries()
    for must in ("libzstd.a", "libjansson.a", "liblz4.a"):
        check(any(lib.endswith("/" + must) for lib in libs),
              "the Makefile's LDLIBS name %s" % must, repr(libs))
    eq([lib for lib in libs if not (os.path.isabs(lib) and os.path.isfile(lib))], [],
       "each static library found is a file, by its full path")
    pkgs = build_packages()
    eq(unlisted_libraries(pkgs, libs), {}, "every static library's package is "
       "in the BUILD list or needed by one")
    without = [p for p in pkgs if p != "libjansson-dev"]
    eq(unlisted_libraries(without, libs),
       {l: "libjansson-dev" for l in libs if l.endswith("/libjansson.a")},
       "without libjansson-dev in the list: libjansson.a is named")


# --- ksmfleet as installed ----------------------------------------------------

FLEET_TOTALS = ("hosts", "pages", "distinct_pages", "pages_shared", "pages_sharing",
                "saved_bytes", "saved_bytes_hosts_alone")


def sharing(c, m=256):
    """KSM's pages_sharing of c pages of one content (not the zero page):
    full KSM pages of m, and a leftover of 2 or more makes one more."""
    full, rest = divmod(c, m)
    return full * (m - 1) + (rest - 1 if rest >= 2 else 0)


def fleet_inputs():
    """Three hosts' memory as files, and the totals a Python count of
    their pages gives (the fleet as one KSM, each host alone)."""
    hosts = {"web-1": [b"lib%d" % i for i in range(5)] * 3 + [b"w1-%d" % i for i in range(4)],
             "web-2": [b"lib%d" % i for i in range(5)] * 2 + [b"w2-%d" % i for i in range(7)],
             "db-1": [b"lib0"] * 300 + [b"db-%d" % i for i in range(9)]}
    paths = {}
    for name, tags in hosts.items():
        paths[name] = tmp(name + ".raw")
        with open(paths[name], "wb") as f:
            f.write(b"".join(t.ljust(4096, b".") for t in tags))
    every = [t for tags in hosts.values() for t in tags]
    counts = {t: every.count(t) for t in set(every)}
    alone = sum(sharing(tags.count(t)) for tags in hosts.values() for t in set(tags))
    shared = sum(c // 256 + (1 if c % 256 >= 2 else 0) for c in counts.values())
    # Files: each page its own frame, so frames are the pages and the bytes
    # freed the bytes saved (the last two columns).
    return paths, [len(hosts), len(every), len(counts), shared,
                   sum(sharing(c) for c in counts.values()),
                   4096 * sum(sharing(c) for c in counts.values()), 4096 * alone,
                   len(every), 4096 * sum(sharing(c) for c in counts.values())]


def fleet_exports(ksmscan, paths):
    out = []
    for name, path in paths.items():
        r = subprocess.run([ksmscan, "-q", "-r", "contents", "--csv", "--host=" + name, path],
                           capture_output=True, timeout=120)
        out.append(tmp(name + ".csv"))
        with open(out[-1], "wb") as f:
            f.write(r.stdout)
    return out


def fleet_totals(cmd, exports, want, what):
    """@cmd (ksmfleet, however run) from an empty folder: the totals of
    the Python count of the pages."""
    folder = tmp("elsewhere")
    os.makedirs(folder, exist_ok=True)
    r = subprocess.run(cmd + ["--workers=1", "--csv"] + exports, cwd=folder,
                       capture_output=True, text=True, timeout=300)
    lines = r.stdout.splitlines()
    got = [int(x) for x in lines[1].split(",")] if r.returncode == 0 and len(lines) == 2 else None
    eq(got, want, "%s, run from another folder: the totals of a Python count of the pages "
       "(%s)" % (what, r.stderr.strip()[-300:]))


def clean_env(home, pythonpath=None):
    return ["/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=" + home] + (
        ["PYTHONPATH=" + pythonpath] if pythonpath else [])


def installed_runs(root, pydir, exports, want, where):
    """The installed launcher and `python3 -m ksmfleet`, with the package's
    folder on PYTHONPATH and nothing else of the environment: the Python
    count's totals. The launcher only runs python3 -m ksmfleet."""
    clean = clean_env(tmp("home"), pydir)
    launcher = os.path.join(root, "usr", "bin", "ksmfleet")
    with open(launcher) as f:
        body = [l for l in f.read().splitlines() if l.strip() and not l.startswith("#")]
    eq(body, ['exec /usr/bin/python3 -m ksmfleet "$@"'],
       "%s: the launcher is python3 -m ksmfleet, no path of its own" % where)
    fleet_totals(clean + [launcher], exports, want, "%s: the launcher, env -i" % where)
    fleet_totals(clean + [sys.executable, "-m", "ksmfleet"], exports, want,
                 "%s: python3 -m ksmfleet, env -i" % where)


def modules_there(pydir, where):
    there = sorted(os.listdir(os.path.join(pydir, "ksmfleet")))
    want = [os.path.basename(m) for m in fleet_modules()]
    check(len(want) >= 8, "fleet/ksmfleet/ has the package's modules", repr(want))
    eq([m for m in want if m not in there], [], "%s holds every module of fleet/ksmfleet/" % where)


def make_install(dest, what, prefix="/usr"):
    r = subprocess.run(["make", "-s", "-C", ROOT, "install", "DESTDIR=" + dest,
                        "PREFIX=" + prefix, "MANDIR=/usr/share/man"],
                       capture_output=True, text=True)
    eq(r.returncode, 0, "%s: make install DESTDIR=... exit status (%s)" % (what, r.stderr[-300:]))


def package_folder(root, where):
    """The folder under @root holding the package ksmfleet/, which must be
    one the python3 running this searches, once @root is taken off."""
    found = [os.path.dirname(d) for d, _, _ in os.walk(root)
             if os.path.basename(d) == "ksmfleet" and os.path.isfile(os.path.join(d, "cli.py"))]
    if not check(len(found) == 1, "%s holds one ksmfleet package" % where, repr(found)):
        return os.path.join(root, "missing")
    real = "/" + os.path.relpath(found[0], root)
    r = subprocess.run([sys.executable, "-c", "import sys; print('\\n'.join(sys.path))"],
                       capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    check(real in r.stdout.splitlines(), "%s: the package's folder %s is on the path of %s"
          % (where, real, sys.executable), r.stdout)
    return found[0]


def installed_copy(root, man, where):
    """ksmfleet under @root (a DESTDIR, an unpacked .deb): every module,
    the man page @man, and runs giving the Python count's totals."""
    pydir = package_folder(root, where)
    eq(os.path.relpath(pydir, root), "usr/lib/python3/dist-packages",
       "%s (PREFIX=/usr): the package in Debian's system folder" % where)
    modules_there(pydir, where)
    check(os.path.exists(os.path.join(root, "usr", "share", "man", "man1", man)),
          "%s holds ksmfleet's man page (%s)" % (where, man))
    paths, want = fleet_inputs()
    exports = fleet_exports(os.path.join(root, "usr", "bin", "ksmscan"), paths)
    installed_runs(root, pydir, exports, want, where)


@test("install")
def ksmfleet_installed():
    dest = tmp("fleet-dest")
    make_install(dest, "ksmfleet")
    installed_copy(dest, "ksmfleet.1", "make install")


@test("install")
def ksmfleet_in_usr_local():
    """The default PREFIX: the package where Debian's python3 finds what
    is installed by hand (/usr/local), and python3 -m ksmfleet --help
    with nothing but that folder on PYTHONPATH."""
    dest = tmp("fleet-local")
    make_install(dest, "PREFIX=/usr/local", "/usr/local")
    pydir = package_folder(dest, "make install PREFIX=/usr/local")
    check(os.path.relpath(pydir, dest).startswith("usr/local/lib/python3"),
          "PREFIX=/usr/local: the package under usr/local/lib/python3*", pydir)
    r = subprocess.run(clean_env(tmp("home"), pydir) + [sys.executable, "-m", "ksmfleet",
                                                         "--help"],
                       capture_output=True, text=True, cwd=tmp(""), timeout=120)
    check(r.returncode == 0 and r.stdout.startswith("usage: ksmfleet"),
          "PREFIX=/usr/local: python3 -m ksmfleet --help", r.stderr[-300:])


def version_of_ksmscan():
    with open(os.path.join(ROOT, "util", "version.h")) as f:
        return re.search(r'#define KSMSCAN_VERSION "([^"]*)"', f.read()).group(1)


@test("install")
def ksmfleet_by_pip():
    """pip install ./fleet into a fresh venv, offline: the venv's ksmfleet
    and python3 -m ksmfleet give --help and the Python count's totals."""
    with open(os.path.join(ROOT, "fleet", "pyproject.toml")) as f:
        m = re.search(r'^version = "([^"]*)"', f.read(), re.M)
    eq(m and m.group(1), version_of_ksmscan(), "pyproject.toml's version is ksmscan's")
    venv = tmp("venv")
    r = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv],
                       capture_output=True, text=True, timeout=300)
    if r.returncode:
        raise Skip("no venv with pip here (python3-venv): %s" % r.stderr.strip()[-200:])
    src = tmp("fleet-src")             # pip builds in place: not in the clone
    shutil.copytree(os.path.join(ROOT, "fleet"), src,
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    r = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", "--no-index",
                        "--no-build-isolation", src], capture_output=True, text=True,
                       timeout=600, env=dict(os.environ, PIP_NO_INDEX="1",
                                             PIP_DISABLE_PIP_VERSION_CHECK="1"))
    if not check(r.returncode == 0, "pip install --no-build-isolation ./fleet, offline",
                 r.stderr[-500:]):
        return
    clean = clean_env(tmp("home"))
    for how, cmd in (("the venv's ksmfleet", [os.path.join(venv, "bin", "ksmfleet")]),
                     ("the venv's python3 -m ksmfleet",
                      [os.path.join(venv, "bin", os.path.basename(sys.executable)),
                       "-m", "ksmfleet"])):
        h = subprocess.run(clean + cmd + ["--help"], capture_output=True, text=True,
                           cwd=tmp(""), timeout=120)
        check(h.returncode == 0 and h.stdout.startswith("usage: ksmfleet"),
              "%s --help" % how, h.stderr[-300:])
    paths, want = fleet_inputs()
    exports = fleet_exports(KSMSCAN[0], paths)
    fleet_totals(clean + [os.path.join(venv, "bin", "ksmfleet")], exports, want,
                 "the venv's ksmfleet, env -i")


# --- the Makefile finds its sources -------------------------------------------

ROOMS = ("util", "hash", "dump", "scan", "check", "model", "compress", "host", "cli", "report")
VECTOR = {"hash/xxh3_avx2.c", "hash/xxh3_avx512.c"}
# The files a copy of the source gains (joined: they exist in no clone).
NEW_FILES = ("/".join(("model", "replay_new.c")), "/".join(("report", "new", "new.c")))


def sources_under(root):
    """The .c files of the rooms (any depth), as os.walk finds them."""
    out = set()
    for room in ROOMS:
        for d, _, files in os.walk(os.path.join(root, room)):
            out |= {os.path.relpath(os.path.join(d, f), root) for f in files if f.endswith(".c")}
    return out


def dry_run(root, target, folder):
    """(the .c files make compiles into @folder/, the objects it links)
    for `make -n -B @target`."""
    r = subprocess.run(["make", "-n", "-B", "-C", root, target], capture_output=True,
                       text=True, timeout=120)
    compiled = set(re.findall(r" -c -o %s/(\S+)\.o (\S+)\.c\b" % folder, r.stdout))
    links = [l for l in r.stdout.splitlines() if " -o %s " % (folder + "/ksmscan" if
             folder != "build" else "ksmscan") in l]
    linked = set(re.findall(r"%s/(\S+)\.o\b" % folder, links[-1])) if links else set()
    return {c + ".c" for o, c in compiled if o == c}, {o + ".c" for o in linked}, r


def source_copy():
    """The source (no build output) in a folder of its own, with a new
    file in model/ and in a new subfolder of report/."""
    copy = tmp("source-copy")
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(
        "build", "build-*", ".git", "ksmscan", "*.deb", "__pycache__", "fixtures", "corpus"))
    for new in NEW_FILES:
        os.makedirs(os.path.dirname(os.path.join(copy, new)), exist_ok=True)
        with open(os.path.join(copy, new), "w") as f:
            f.write("/* A file no Makefile names. */\nint probe_%d(void);\n"
                    "int probe_%d(void) { return 0; }\n" % ((len(new),) * 2))
    return copy


@test("makefile")
def makefile_finds_sources():
    copy = source_copy()
    want = sources_under(copy)
    check(set(NEW_FILES) | {"hash/hash.c"} <= want,
          "os.walk finds the new files and the old", sorted(want)[:5])
    compiled, linked, r = dry_run(copy, "ksmscan", "build")
    eq(sorted(compiled ^ (want | {"ksmscan.c", "compat/glibc.c"})), [],
       "make compiles exactly the rooms' .c files, ksmscan.c and compat/glibc.c "
       "(the new files too)")
    eq(sorted(linked ^ (want | {"ksmscan.c", "compat/glibc.c"})), [],
       "make links every object it compiles into ksmscan")
    compiled, _, r = dry_run(copy, "cross-arm64", "build-arm64")
    eq(sorted(compiled ^ ((want - VECTOR) | {"ksmscan.c"})), [],
       "make cross-arm64 compiles the same files but the x86 vector builds and "
       "compat/glibc.c")


@test("makefile")
def makefile_names_no_multiarch_folder():
    with open(os.path.join(ROOT, "Makefile")) as f:     # its comments left out
        text = "\n".join(l.split("#")[0] for l in f.read().splitlines())
    eq(re.findall(r"/usr/(?:lib|include)/[a-z0-9_]+-linux-gnu\w*", text), [],
       "the Makefile names no multiarch folder (the compiler finds them)")
    listed = sorted(set(re.findall(r"\b((?:%s)/[\w/]+\.c)\b" % "|".join(ROOMS), text)) - VECTOR)
    eq(listed, [], "the Makefile names no source of the rooms (but the x86 vector builds)")


@test("install")
def ksmfleet_in_the_deb():
    if not shutil.which("dpkg-deb"):
        raise Skip("dpkg-deb missing (not Debian)")
    stage, out, unpacked = tmp("deb-stage"), tmp("deb-out"), tmp("deb-root")
    os.makedirs(out)
    make_install(stage, "the package's staging folder")
    env = dict(os.environ, DEBFULLNAME="Test Builder", DEBEMAIL="builder@ksmscan.test")
    r = subprocess.run([os.path.join(ROOT, "scripts", "make-deb"), "0.0-test", stage, out],
                       capture_output=True, text=True, env=env, cwd=ROOT)
    debs = glob.glob(os.path.join(out, "*.deb"))
    if not check(r.returncode == 0 and len(debs) == 1, "scripts/make-deb builds a package",
                 r.stderr[-300:]):
        return
    subprocess.run(["dpkg-deb", "-x", debs[0], unpacked], check=True)
    installed_copy(unpacked, "ksmfleet.1.gz", "the .deb")


# --- the applications: their own list, their services kept down --------------

APP_COMMANDS = {"chromium": ["chromium"], "libreoffice-calc-nogui": ["soffice"],
                "redis-server": ["redis-server"], "prometheus-node-exporter":
                ["prometheus-node-exporter"], "postgresql": glob.glob(
                    "/usr/lib/postgresql/*/bin/postgres"),
                "debootstrap": ["/usr/sbin/debootstrap"],
                "systemd-container": ["systemd-nspawn"]}


def daemon_packages(pkgs):
    """The packages (of @pkgs and what they need) that ship a daemon: an
    init script or a socket unit (dpkg's and man-db's timers are no daemon)."""
    files = glob.glob("/etc/init.d/*") + glob.glob("/lib/systemd/system/*.socket") + \
        glob.glob("/usr/lib/systemd/system/*.socket")
    r = subprocess.run(["dpkg", "-S"] + files, capture_output=True, text=True)
    owners = {line.split(":")[0].strip() for line in r.stdout.splitlines()}
    return sorted(owners & hard_closure(pkgs))


def apps_unlisted(apps):
    """{command: its package} for the applications the app tests run that
    no package of @apps brings (those installed here)."""
    have = hard_closure(apps)
    out = {}
    for cmds in APP_COMMANDS.values():
        for c in cmds:
            path = c if os.path.isabs(c) else shutil.which(c)
            if path:
                pkg = file_package(os.path.realpath(path)) or file_package(path)
                if pkg not in have:
                    out[os.path.basename(c)] = pkg
    return out


@test("install-deps")
def apps_are_their_own_list():
    """make test installs no daemon; the applications the app tests run
    come from the APPS list (make test-apps)."""
    if not shutil.which("dpkg") or not shutil.which("dpkg-query"):
        raise Skip("dpkg missing (not Debian)")
    core = script_packages(lists=("BUILD", "TESTS"))
    apps = script_packages(lists=("APPS",))
    eq(sorted(set(APP_COMMANDS) - set(apps)), [], "the APPS list names every application")
    eq(sorted(set(APP_COMMANDS) & hard_closure(core)), [],
       "BUILD and TESTS bring none of the applications")
    eq(daemon_packages(core), [], "no package of BUILD and TESTS (or needed by one) "
       "ships an init script or a socket unit")
    there = [p for p in ("redis-server", "prometheus-node-exporter") if installed(p)]
    if there:   # the check can fail: a daemon's package added to the core list
        eq(daemon_packages(core + there[:1]), there[:1],
           "with %s in the core list: it is named" % there[:1][0])
    if not any(installed(p) for p in APP_COMMANDS):
        raise Skip("no application installed here (make test-apps installs them)")
    eq(apps_unlisted(apps), {}, "every application installed here comes from the APPS list")
    if installed("chromium") and shutil.which("chromium"):
        eq(apps_unlisted([p for p in apps if p != "chromium"]), {"chromium": "chromium"},
           "without chromium in the list: chromium is named")


def app_suites():
    """The suites that hold tests of real applications: they use
    ksmtest.app() or KSMSCAN_APPS."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "test_*.py"))):
        if os.path.basename(path) == "test_harness.py":
            continue    # the harness's own tests of app(), on fakes
        with open(path) as f:
            text = f.read()
        if re.search(r"\bapp\(\[|\bAPPS_ENV\b", text):
            out.append(os.path.splitext(os.path.basename(path))[0])
    return out


@test("makefile")
def make_test_apps_runs_every_app_suite():
    found = app_suites()
    check({"test_output", "test_hostile_input", "test_monitoring", "test_apps_live"} <=
          set(found), "the scan finds the suites that run Chromium, LibreOffice, "
          "node_exporter, Redis and PostgreSQL", repr(found))
    eq(sorted(make_variable("APP_SUITES")), found, "make test-apps runs exactly those suites")
    r = subprocess.run(["make", "-n", "-C", ROOT, "test-apps"], capture_output=True, text=True)
    check("install-deps apps" in r.stdout and "KSMSCAN_APPS=1" in r.stdout,
          "make test-apps installs the applications and runs their tests", r.stdout[-400:])
    r = subprocess.run(["make", "-n", "-C", ROOT, "test"], capture_output=True, text=True)
    check("install-deps apps" not in r.stdout and "KSMSCAN_APPS" not in r.stdout,
          "make test does not", r.stdout[-400:])


APT_FAKE = """#!/bin/sh
echo "apt-get $*" >> "%(log)s"
[ "$1" = install ] || exit 0
# What Debian's maintainer scripts do: ask policy-rc.d, enable the unit.
if "%(root)s/usr/sbin/policy-rc.d" ksmscan-test.service start; then
    echo "policy 0" >> "%(log)s"
else
    echo "policy $?" >> "%(log)s"
fi
mkdir -p "%(root)s/etc/systemd/system/multi-user.target.wants"
ln -s /lib/systemd/system/ksmscan-test.service \
    "%(root)s/etc/systemd/system/multi-user.target.wants/ksmscan-test.service"
exit %(rc)d
"""


def apps_scenario(name, admin_policy, rc=0):
    """install-deps apps in a fake root (KSMSCAN_DEPS_ROOT) with a unit
    enabled before and an apt-get that enables another, asking policy-rc.d
    first: (result, calls, root)."""
    d, script, log = setup(name, {"sudo": True})
    root = os.path.join(d, "root")
    wants = os.path.join(root, "etc", "systemd", "system", "multi-user.target.wants")
    os.makedirs(wants)
    os.makedirs(os.path.join(root, "usr", "sbin"))
    os.symlink("/lib/systemd/system/before.service", os.path.join(wants, "before.service"))
    if admin_policy is not None:
        with open(os.path.join(root, "usr", "sbin", "policy-rc.d"), "w") as f:
            f.write(admin_policy)
        os.chmod(os.path.join(root, "usr", "sbin", "policy-rc.d"), 0o755)
    for dd, _, _ in os.walk(root):
        os.chmod(dd, 0o777)
    with open(os.path.join(d, "bin", "apt-get"), "w") as f:
        f.write(APT_FAKE % {"log": log, "root": root, "rc": rc})
    os.chmod(os.path.join(d, "bin", "apt-get"), 0o755)
    env = ["/usr/bin/env", "-i", "PATH=" + os.path.join(d, "bin"),
           "KSMSCAN_DEPS_PACKAGES=" + " ".join(MISSING), "KSMSCAN_DEPS_ROOT=" + root]
    cmd = env + [script, "apps"]
    if os.geteuid() == 0:
        cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    return r, logged(log), root


def masked(root, unit):
    return os.path.realpath(os.path.join(root, "etc", "systemd", "system", unit)) == "/dev/null"


@test("install-deps")
def apps_keep_services_down():
    if not shutil.which("systemctl"):
        raise Skip("systemctl missing (the masks are systemd's)")
    present()
    policy = lambda root: os.path.join(root, "usr", "sbin", "policy-rc.d")
    r, calls, root = apps_scenario("apps", None)
    eq(r.returncode, 0, "install-deps apps: exit status (%s)" % r.stderr.strip()[-300:])
    check("apt-get install -y -qq --no-install-recommends " + " ".join(MISSING) in calls,
          "install-deps apps installs the missing packages", repr(calls))
    eq([c for c in calls if c.startswith("policy")], ["policy 101"],
       "during apt-get install, policy-rc.d forbids starting a service (101)")
    check(not os.path.lexists(policy(root)), "after it, no policy-rc.d is left")
    check(masked(root, "ksmscan-test.service"), "the unit the install enabled is masked")
    check(not masked(root, "before.service"), "a unit enabled before is left alone")
    check("ksmscan-test.service" in r.stderr and "unmask" in r.stderr,
          "the mask is said, with how to undo it", r.stderr)
    # An administrator's policy-rc.d is put back as it was, also when the
    # install fails.
    mine = "#!/bin/sh\n# the administrator's\nexit 0\n"
    r, calls, root = apps_scenario("apps-admin", mine, rc=100)
    check(r.returncode != 0, "a failing apt-get: install-deps apps fails", repr(r.returncode))
    eq([c for c in calls if c.startswith("policy")], ["policy 101"],
       "an existing policy-rc.d: 101 all the same during the install")
    with open(policy(root)) as f:
        eq(f.read(), mine, "the administrator's policy-rc.d is back, byte for byte")
    check(not os.path.exists(policy(root) + ".ksmscan-saved"), "and no saved copy is left")


@test("install")
def uninstall_removes_what_install_put():
    for prefix in ("/usr", "/usr/local"):
        dest = tmp("uninstall" + prefix.replace("/", "-"))
        other = os.path.join(dest, prefix.lstrip("/"), "bin", "someone-elses")
        os.makedirs(os.path.dirname(other))
        with open(other, "w") as f:
            f.write("not ksmscan's\n")
        make_install(dest, "PREFIX=%s" % prefix, prefix)
        put = [os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs]
        check(len(put) >= 20, "PREFIX=%s: make install put its files" % prefix, repr(len(put)))
        r = subprocess.run(["make", "-s", "-C", ROOT, "uninstall", "DESTDIR=" + dest,
                            "PREFIX=" + prefix, "MANDIR=/usr/share/man"],
                           capture_output=True, text=True)
        eq(r.returncode, 0, "PREFIX=%s: make uninstall exit status (%s)"
           % (prefix, r.stderr[-300:]))
        left = sorted(os.path.join(d, f) for d, _, fs in os.walk(dest) for f in fs)
        eq(left, [other], "PREFIX=%s: make uninstall leaves no file of make install's, "
           "and the file that was there before" % prefix)
        check(not any(os.path.basename(d) in ("ksmfleet", "ksmscan")
                      for d, _, _ in os.walk(dest)),
              "PREFIX=%s: ksmscan's own folders are gone" % prefix)


def main():
    return run_suite("ksmscan-install-")


if __name__ == "__main__":
    sys.exit(main())
