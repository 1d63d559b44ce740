"""Data-dir safety (coordinator/datadir.py): kgc's meta file, refusing directories it must not use,
the partition cap and the open-file limit."""

from __future__ import annotations

import logging
import os

import pytest

from coordinator import datadir
from coordinator.config import Config
from coordinator.datadir import META_FILE, DataDirError, prepare_data_dir


def config(path, **settings) -> Config:
    return Config({"data.dir": str(path), **settings})


def meta(path) -> dict[str, str]:
    lines = (path / META_FILE).read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if not line.startswith("#"))


def test_a_new_dir_is_created_and_claimed_with_kafkas_meta_properties_fields(tmp_path):
    path = tmp_path / "a" / "b"
    assert prepare_data_dir(config(path, node_id=3)) == path
    written = meta(path)
    assert written.keys() == {"version", "cluster.id", "node.id", "directory.id"}
    assert (written["version"], written["cluster.id"], written["node.id"]) == ("1", "kgc-local-cluster", "3")
    assert len(written["directory.id"]) == 22  # a Kafka Uuid as Uuid.toString writes it
    prepare_data_dir(config(path, node_id=3))
    assert meta(path) == written  # the directory keeps its id across starts


def test_a_non_empty_dir_without_the_meta_file_is_refused_until_adopted(tmp_path):
    (tmp_path / "orders-0").mkdir()
    (tmp_path / "orders-0" / "00000000000000000000.log").write_bytes(b"not kafka" * 500)
    with pytest.raises(DataDirError, match=r"not empty \(orders-0\).*--adopt-data-dir"):
        prepare_data_dir(config(tmp_path))
    assert not (tmp_path / META_FILE).exists()
    prepare_data_dir(config(tmp_path, data_dir_adopt=True))
    assert meta(tmp_path)["version"] == "1"
    assert (tmp_path / "orders-0" / "00000000000000000000.log").read_bytes() == b"not kafka" * 500
    prepare_data_dir(config(tmp_path))  # adopted once: kgc's own from now on


def test_a_data_dir_of_a_kgc_from_before_the_meta_file_is_claimed_without_asking(tmp_path):
    """./data of an earlier checkout: __consumer_offsets-0 with its partition.metadata, no Kafka
    meta.properties. `make serve` after an upgrade keeps working on it."""
    (tmp_path / "__consumer_offsets-0").mkdir()
    (tmp_path / "__consumer_offsets-0" / "partition.metadata").write_text("version: 0\ntopic_id: x\n")
    (tmp_path / "orders-0").mkdir()
    prepare_data_dir(config(tmp_path))
    assert meta(tmp_path)["version"] == "1"
    assert (tmp_path / "orders-0").is_dir()


def test_lost_and_found_alone_counts_as_empty(tmp_path):
    (tmp_path / "lost+found").mkdir()
    prepare_data_dir(config(tmp_path))
    assert (tmp_path / META_FILE).exists()


def test_a_kafka_brokers_log_dir_is_named_as_such(tmp_path):
    (tmp_path / "meta.properties").write_text("#\nnode.id=1\ndirectory.id=abc\nversion=1\ncluster.id=XyZ\n")
    (tmp_path / "__consumer_offsets-0").mkdir()
    with pytest.raises(DataDirError, match="Kafka broker's log dir.*cluster.id=XyZ, node.id=1"):
        prepare_data_dir(config(tmp_path))


@pytest.mark.parametrize(
    "setting, stored, message",
    [
        ("cluster_id", "other", "belongs to cluster.id 'kgc-local-cluster', not 'other'"),
        ("node_id", 7, "was written by node.id 0, not 7"),
    ],
)
def test_a_dir_of_another_cluster_or_node_is_refused_as_kafka_does(tmp_path, setting, stored, message):
    prepare_data_dir(config(tmp_path))
    with pytest.raises(DataDirError, match=message):
        prepare_data_dir(config(tmp_path, **{setting: stored}))


def test_a_file_and_an_impossible_dir_are_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(DataDirError, match="is a file, not a directory"):
        prepare_data_dir(config(tmp_path / "f"))
    with pytest.raises(DataDirError, match="cannot create data dir .*a parent is a file"):
        prepare_data_dir(config(tmp_path / "f" / "data"))


def test_an_unwritable_dir_is_refused_before_anything_is_served(tmp_path, monkeypatch):
    real_open = os.open

    def read_only(path, flags, *args):
        if flags & os.O_WRONLY:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(datadir.os, "open", read_only)
    with pytest.raises(DataDirError, match="is not writable \\(permission denied\\)"):
        prepare_data_dir(config(tmp_path / "d"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_dir_is_refused(tmp_path):
    (tmp_path / "d").mkdir(mode=0o555)
    with pytest.raises(DataDirError, match="is not writable"):
        prepare_data_dir(config(tmp_path / "d"))


def test_creating_beyond_max_partitions_is_refused_with_what_to_do(tmp_path):
    with pytest.raises(
        DataDirError,
        match=r"creating big:101 would make 101 user-topic partitions, more than "
        r"max.partitions=100.*--set max.partitions=101",
    ):
        prepare_data_dir(config(tmp_path, max_partitions=100), {"big": 101})
    assert not any(p.name.startswith("big-") for p in tmp_path.iterdir())
    prepare_data_dir(config(tmp_path, max_partitions=100), {"big": 100})


def test_the_cap_counts_topics_already_there_but_a_restart_is_never_refused(tmp_path):
    prepare_data_dir(config(tmp_path))
    for i in range(8):
        (tmp_path / f"old-{i}").mkdir()
    with pytest.raises(DataDirError, match="would make 11 user-topic partitions"):
        prepare_data_dir(config(tmp_path, max_partitions=10), {"new": 3})
    prepare_data_dir(config(tmp_path, max_partitions=5), {"old": 8})  # nothing to create


def test_an_existing_topic_with_another_count_is_kept_and_said(tmp_path, caplog):
    prepare_data_dir(config(tmp_path))
    for i in range(3):
        (tmp_path / f"orders-{i}").mkdir()
    with caplog.at_level(logging.WARNING, logger="kgc.datadir"):
        prepare_data_dir(config(tmp_path), {"orders": 5})
    assert "topic.exists topic=orders partitions=3 asked=5" in caplog.text


def test_the_open_file_limit_is_raised_or_the_start_refused(tmp_path, monkeypatch):
    import resource

    limits = {"now": (1024, 4096)}
    monkeypatch.setattr(resource, "getrlimit", lambda which: limits["now"])
    monkeypatch.setattr(resource, "setrlimit", lambda which, value: limits.update(now=value))
    prepare_data_dir(config(tmp_path, offsets_topic_num_partitions=50), {"t": 1000})
    assert limits["now"] == ((1000 + 50) * 3 + datadir.SPARE_FILES, 4096)
    with pytest.raises(DataDirError, match=r"need about 6406 open files and the limit is 4096.*ulimit -n"):
        prepare_data_dir(config(tmp_path, offsets_topic_num_partitions=50), {"u": 2000})


def test_progress_counts_the_partitions_created_so_far(tmp_path):
    progress = datadir._CreationProgress(tmp_path, {"big": 10})
    assert progress._created("big", 10) == 0
    for i in range(4):
        (tmp_path / f"big-{i}").mkdir()
        (tmp_path / f"big-{i}" / "partition.metadata").write_text("version: 0\n")
    (tmp_path / "big-4").mkdir()  # its metadata not yet written: not finished
    assert progress._created("big", 10) == 4


def test_the_lock_refuses_a_second_server_on_the_same_dir_until_the_first_lets_go(tmp_path):
    with datadir.data_dir_lock(tmp_path / "d") as path:
        assert (path / datadir.LOCK_FILE).read_text() == f"{os.getpid()}\n"
        with pytest.raises(DataDirError, match=rf"in use by another kgc \(pid {os.getpid()}\)"):
            with datadir.data_dir_lock(tmp_path / "d"):
                pass
        prepare_data_dir(config(path))  # the lock file alone does not make the dir foreign
    with datadir.data_dir_lock(tmp_path / "d"):
        pass
