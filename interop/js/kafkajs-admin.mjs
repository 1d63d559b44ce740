// kafkajs 2.2.4 admin: createPartitions (CreatePartitions v1), deleteTopicRecords (DeleteRecords
// v1), describeConfigs (DescribeConfigs v2), alterConfigs (AlterConfigs v1), describeCluster.
// Usage: node kafkajs-admin.mjs HOST:PORT TOPIC  (TOPIC exists with 2 partitions, 5 records in 0)
// Prints {partitions, lowWatermark, configs, bad: {shrink, unknownConfig}, brokers, controller}.
import kafkajs from 'kafkajs'
import { log, main } from './lib.mjs'

const { Kafka, logLevel, ConfigResourceTypes } = kafkajs

const stderrLogCreator = () => ({ namespace, label, log: entry }) =>
  log(`[kafkajs ${label}] ${namespace}`, entry)

async function refused (promise) {
  try {
    await promise
    return null
  } catch (error) {
    return error.type ?? error.errors?.[0]?.type ?? error.name
  }
}

await main('kafkajs-admin.mjs HOST:PORT TOPIC', async ([bootstrap, topic]) => {
  const kafka = new Kafka({
    clientId: 'kgc-interop-kafkajs-admin',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    logCreator: stderrLogCreator,
    connectionTimeout: 5000,
    requestTimeout: 10000,
    retry: { retries: 0 }
  })
  const admin = kafka.admin()
  await admin.connect()
  try {
    await admin.createPartitions({ topicPartitions: [{ topic, count: 4 }] })
    const meta = await admin.fetchTopicMetadata({ topics: [topic] })
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '3' }] })
    const offsets = await admin.fetchTopicOffsets(topic)
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'retention.ms', value: '86400000' }] }]
    })
    const described = await admin.describeConfigs({
      includeSynonyms: true,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms', 'cleanup.policy'] }]
    })
    const shrink = await refused(admin.createPartitions({ topicPartitions: [{ topic, count: 2 }] }))
    const unknownConfig = await refused(admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'no.such.config', value: '1' }] }]
    }))
    const cluster = await admin.describeCluster()
    return {
      partitions: meta.topics[0].partitions.length,
      lowWatermark: offsets.find(o => o.partition === 0)?.low ?? null,
      configs: Object.fromEntries(described.resources[0].configEntries.map(c => [c.configName, [c.configValue, c.isDefault]])),
      bad: { shrink, unknownConfig },
      brokers: cluster.brokers.map(b => b.nodeId),
      controller: cluster.controller
    }
  } finally {
    await admin.disconnect()
  }
})
