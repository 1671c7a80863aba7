"""ksmfleet: what Linux KSM would save across a fleet of hosts, from the
`contents` or `sketch` exports ksmscan writes on each host, computed on Dask.

One module per concern:

- model: KSM's arithmetic (the same as ksmscan's), on counts of pages;
- errors: the two kinds of failure a user is told about in one line;
- read: an export's rows, read and checked on a worker;
- load: the exports as one frame of numbered hosts, checked across rows;
- pairs: pairs of hosts that share, exact or estimated, and partners;
- placement: hosts onto machines of a given capacity;
- output: tables for people (80 columns) and CSV, names escaped;
- reports: totals, hosts, pairs and partners;
- cluster: the Dask client (a loopback LocalCluster, or a scheduler);
- cli: the command line (`python3 -m ksmfleet`, or the ksmfleet command);
- loopback: a `dask scheduler` and workers on 127.0.0.1, for tests and
  make bench.
"""
