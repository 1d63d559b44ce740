// kafkajs 2.2.4: admin.fetchTopicMetadata for one topic (ApiVersions v2, Metadata v6).
// Usage: node kafkajs-metadata.mjs HOST:PORT TOPIC
// Prints {client, topic, error, partitions: [{partition, leader}], brokers: [{id, host, port}]}.
import kafkajs from 'kafkajs'
import { log, main } from './lib.mjs'

const { Kafka, logLevel } = kafkajs

// kafkajs logs to stdout by default; send its warnings and errors to stderr instead.
const stderrLogCreator = () => ({ namespace, label, log: entry }) =>
  log(`[kafkajs ${label}] ${namespace}`, entry)

await main('kafkajs-metadata.mjs HOST:PORT TOPIC', async ([bootstrap, topic]) => {
  const kafka = new Kafka({
    clientId: 'kgc-interop-kafkajs',
    brokers: [bootstrap],
    logLevel: logLevel.WARN,
    logCreator: stderrLogCreator,
    connectionTimeout: 5000,
    requestTimeout: 10000,
    retry: { retries: 2 }
  })
  const admin = kafka.admin()
  await admin.connect()
  try {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] })
    const found = topics.find(t => t.name === topic)
    // kafkajs keeps the broker list on its cluster object; describeCluster asks for it.
    const cluster = await admin.describeCluster()
    return {
      client: 'kafkajs',
      topic: found?.name ?? null,
      error: found ? null : `topic ${topic} missing from ${JSON.stringify(topics)}`,
      partitions: (found?.partitions ?? []).map(p => ({ partition: p.partitionId, leader: p.leader })),
      brokers: cluster.brokers.map(b => ({ id: b.nodeId, host: b.host, port: b.port }))
    }
  } finally {
    await admin.disconnect()
  }
})
