"""What goes wrong, told to the user in one line: a Failure (a usage error,
exit 2, or a run that cannot go on, exit 1) or a BadRow (a defect of an
export, exit 1, naming the file and the line)."""


class Failure(Exception):
    """A problem to report in one line, with the exit status (1 input, 2 usage)."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class BadRow(ValueError):
    """A defect of an export at a line: @line counts from the line that
    starts at byte @start (1 for that line); message() turns it into the
    line of the file (lines_before). @start None: of the whole file (it
    cannot be read, or is no export), no line."""

    def __init__(self, path, what, start=0, line=1):
        super().__init__(path, what, start, line)
        self.path, self.what, self.start, self.line = path, what, start, line

    def message(self):
        if self.start is None:
            return "%s: %s" % (self.path, self.what)
        try:
            before = lines_before(self.path, self.start)
        except OSError as e:   # unreadable since: the line within its piece
            return "%s: %s, at line %d after byte %d (%s)" % (
                self.path, self.what, self.line, self.start, e.strerror or e)
        return "%s: %s, at line %d" % (self.path, self.what, before + self.line)


def lines_before(path, start):
    """Lines of a plain export before byte @start (0 for a zstd export's
    piece): counted only when it is past 0, so that the file is not opened
    again to report that it cannot be read."""
    n, done = 0, 0
    if not start:
        return 0
    with open(path, "rb") as f:
        while done < start:
            chunk = f.read(min(1 << 20, start - done))
            if not chunk:
                break
            n += chunk.count(b"\n")
            done += len(chunk)
    return n
