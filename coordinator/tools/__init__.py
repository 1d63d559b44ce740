"""The "see inside" tools: `kgc groups` (a kafka-consumer-groups.sh work-alike over the wire),
the __consumer_offsets decoder behind `kgc dump --offsets-decoder`, and `kgc transcript`."""
