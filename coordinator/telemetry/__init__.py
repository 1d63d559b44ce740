"""Client telemetry (KIP-714): clients push their own metrics to the broker.

subscriptions.py  what clients are asked to push (CLIENT_METRICS resources, kgc's default)
instance.py       one client instance: its subscription id, interval, throttling timestamps
manager.py        one broker's ClientMetricsManager: GetTelemetrySubscriptions, PushTelemetry
payload.py        bounded decompression and OTLP decoding (opentelemetry-proto, imported lazily)
store.py          the latest values each client pushed, bounded, for the control plane
wiring.py         how the composition root builds them from the settings
"""
