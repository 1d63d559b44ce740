"""The admin surface behind CreatePartitions, DeleteRecords, the config APIs and the cluster,
log-dir and producer descriptions: the rules (Kafka's controller and KafkaApis checks, in their
order) live here; the handlers in coordinator/handlers/ only translate requests and responses."""
