"""A cluster of N brokers in one process: nodes, replica sets, leaders and leader epochs
(cluster.py), Kafka's replica assignment (assignment.py), and what a move sets in motion
(controller.py). Replicas are logical: there is one copy of every log."""
