"""Helpers that let each interop test read as "this real client does X against our server".

Real clients run either in-process with their own timeouts (the Python ones) or as a
subprocess with a hard deadline that prints one JSON document (node scripts in interop/js/,
kcat). Every client's output is captured and shown only in a failing assertion's message.
"""

from interop.clients.metadata import METADATA_CLIENTS, TopicMetadata
from interop.clients.process import ClientRun, run_json
from tests.support.waiting import wait_until

__all__ = ["METADATA_CLIENTS", "ClientRun", "TopicMetadata", "run_json", "wait_until"]
