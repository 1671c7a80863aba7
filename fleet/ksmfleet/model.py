"""The KSM arithmetic of ksmscan (ksm_content() and ksm_saved_pages() in
model/ksm.c, summed by ksm_tally() in scan/tally.c), written once for the
fleet tool: what KSM makes of c pages of one content in steady state, with
max_page_sharing M and use_zero_pages.

c = k*M + r pages: k full KSM pages (each mapped at most M times); r >= 2
leftovers make one more; a single leftover finds every KSM page of its
content full and stays unmerged (Linux 6.18, as measured by ksmscan's live
test; ceil(c/M) KSM pages would differ only in pages_shared).
With use_zero_pages every zero page is merged with the kernel's zero page:
it counts in ksm_zero_pages, never in shared or sharing.

A content's c pages are mappings of its f distinct frames (f = c but for
live processes, whose pages a fork shares: ksmscan's `frames` column).
KSM merges every mapping of a content on two frames or more, fork-shared
ones too, and nothing of one on a single frame (mm/ksm.c never merges a
page with itself); it frees the frames but its KSM pages (tally_content()
and ksm_freed_frames() in ksmscan).

Functions take numbers or numpy arrays alike.
"""
import numpy as np

PAGE = 4096


def group(c, m):
    """(pages_shared, pages_sharing) of contents with c pages each."""
    c = np.asarray(c, dtype=np.int64)
    full, rest = c // m, c % m
    two = rest >= 2
    shared = full + two
    sharing = full * (m - 1) + np.where(two, rest - 1, 0)
    return shared, sharing


def merged(c, frames, m):
    """(pages_shared, pages_sharing, frames freed) of contents with c pages
    on @frames frames each (None: a frame a page)."""
    c = np.asarray(c, dtype=np.int64)
    f = c if frames is None else np.asarray(frames, dtype=np.int64)
    shared, sharing = group(c, m)
    on = f >= 2
    kept = shared + (c % m == 1)
    return (np.where(on, shared, 0), np.where(on, sharing, 0),
            np.where(on, np.maximum(f - kept, 0), 0))


def saved_pages(c, zero, m, use_zero_pages, frames=None):
    """Pages KSM saves of contents with c pages (on @frames frames each):
    their pages_sharing, or every page of the zero content with
    use_zero_pages."""
    c = np.asarray(c, dtype=np.int64)
    zero = np.asarray(zero, dtype=bool)
    _, sharing, _ = merged(c, frames, m)
    if use_zero_pages:
        return np.where(zero, c, sharing)
    return sharing


def figures(c, zero, m, use_zero_pages, frames=None):
    """(pages_shared, pages_sharing, ksm_zero_pages, frames freed) summed
    over contents with c pages on @frames frames each."""
    c = np.asarray(c, dtype=np.int64)
    zero = np.asarray(zero, dtype=bool)
    f = c if frames is None else np.asarray(frames, dtype=np.int64)
    shared, sharing, freed = merged(c, f, m)
    if use_zero_pages:
        return (int(shared[~zero].sum()), int(sharing[~zero].sum()),
                int(c[zero].sum()), int(freed[~zero].sum() + f[zero].sum()))
    return int(shared.sum()), int(sharing.sum()), 0, int(freed.sum())


def together(ca, cb, zero, m, use_zero_pages):
    """Extra pages saved when contents held ca and cb times by two hosts
    share one KSM: saved(ca + cb) - saved(ca) - saved(cb)."""
    ca = np.asarray(ca, dtype=np.int64)
    cb = np.asarray(cb, dtype=np.int64)
    return (saved_pages(ca + cb, zero, m, use_zero_pages)
            - saved_pages(ca, zero, m, use_zero_pages)
            - saved_pages(cb, zero, m, use_zero_pages))
