// @platformatic/kafka 1.35: Admin.metadata for one topic (ApiVersions v3, Metadata v12; it has 9-12).
// Usage: node platformatic-metadata.mjs HOST:PORT TOPIC
// Prints {client, topic, error, partitions: [{partition, leader}], brokers: [{id, host, port}]}.
// Pinned to the 1.x line: 2.x requires node >= 22.22 and CI's node is 20.
import { Admin } from '@platformatic/kafka'
import { main } from './lib.mjs'

await main('platformatic-metadata.mjs HOST:PORT TOPIC', async ([bootstrap, topic]) => {
  const admin = new Admin({
    clientId: 'kgc-interop-platformatic',
    bootstrapBrokers: [bootstrap],
    timeout: 10000,
    retries: 2
  })
  try {
    const metadata = await admin.metadata({ topics: [topic] })
    const found = metadata.topics.get(topic)
    // The client stores partitions in an array indexed by partition index; skip any holes so
    // a missing index shows up as a missing partition rather than a null entry.
    const partitions = []
    for (const [index, p] of (found?.partitions ?? []).entries()) {
      if (p !== undefined) partitions.push({ partition: index, leader: p.leader })
    }
    return {
      client: '@platformatic/kafka',
      topic: found ? topic : null,
      error: found ? null : `topic ${topic} missing; got ${JSON.stringify([...metadata.topics.keys()])}`,
      partitions,
      brokers: [...metadata.brokers].map(([id, b]) => ({ id, host: b.host, port: b.port }))
    }
  } finally {
    await admin.close()
  }
})
