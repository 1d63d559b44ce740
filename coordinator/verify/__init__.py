"""The PySpark verifier behind `kgc verify`: reads Kafka log dirs directly and checks structure
(S*), compaction (C*) and committed offsets (G*) as in shared/reference/storage.md §3.6.

Nothing outside this package imports it. Only source.py / spark_checks.py / session.py import
pyspark, lazily, when a verification runs; kernels.py / fastscan.py (numba) are the compiled
scan, scan.py its pure-Python twin and fallback, txn.py the transaction rule both apply;
oracle.py is the single-process twin of it all.
"""
