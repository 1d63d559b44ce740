"""Kafka wire protocol: framing, headers, primitives and a schema-driven message codec.

Imports nothing from the rest of the project. Message modules (protocol.messages.<api>) and the
generated codecs load lazily, so importing this package is cheap.
"""
