"""python3 -m ksmfleet, and the `ksmfleet` command pip installs: the command
line (cli.main); a library missing is one line naming it, not a traceback."""
import sys


def main():
    try:
        from ksmfleet.cli import main as cli_main
    except ImportError as e:
        if (e.name or "").split(".")[0] == "ksmfleet":
            print("ksmfleet: a module of its own is missing (%s): install it again" % e.name,
                  file=sys.stderr)
            return 1
        print("ksmfleet: needs the Python module %s (Debian: python3-dask, python3-distributed, "
              "python3-numpy, python3-pandas, python3-zstandard)" % e.name, file=sys.stderr)
        return 1
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
