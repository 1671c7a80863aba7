"""python3 -m ksmfleet: the command line (cli.main); a library missing is
one line naming it, not a traceback."""
import sys

try:
    from ksmfleet.cli import main
except ImportError as e:
    if (e.name or "").split(".")[0] == "ksmfleet":
        print("ksmfleet: a module of its own is missing (%s): install it again" % e.name,
              file=sys.stderr)
        sys.exit(1)
    print("ksmfleet: needs the Python module %s (Debian: python3-dask, python3-distributed, "
          "python3-numpy, python3-pandas, python3-zstandard)" % e.name, file=sys.stderr)
    sys.exit(1)

sys.exit(main())
