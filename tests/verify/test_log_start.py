"""The verifier honours the log start offset DeleteRecords set: segments wholly below it are not
part of the log (kgc deleted them, or will on its next retention pass), in the after image and in
the before image it is compared with, so deleted records are no 'removed latest record' (C2)."""

from __future__ import annotations

import shutil

from coordinator.verify.layout import log_starts, plan_splits
from coordinator.verify.oracle import verify
from tests.storage.helpers import fill, open_log


def test_records_deleted_by_delete_records_are_no_violation(tmp_path):
    before, after = tmp_path / "before", tmp_path / "after"
    log = open_log(before / "events-0", segment_bytes=1024)
    fill(log, 30, per_batch=2, size=40)
    log.close()
    shutil.copytree(before, after)
    log = open_log(after / "events-0", segment_bytes=1024)
    start = log.segments[3].base_offset + 1
    assert log.increment_log_start_offset(start) == 3
    log.close()
    assert log_starts(str(after)) == {"events-0": start}
    planned = {s.segment for s in plan_splits(str(before), log_start=log_starts(str(after)))}
    assert min(planned) == start - 1  # the segment holding the start, and those after it
    report = verify(str(after), before=str(before), num_partitions=0)
    assert report.violations == []
    assert report.stats["before_records"] == report.stats["records"]
