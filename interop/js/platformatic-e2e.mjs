// @platformatic/kafka 1.35 producer for the end-to-end scenario (acks=all).
// Usage: node platformatic-e2e.mjs HOST:PORT TOPIC PREFIX COUNT CODEC...
// For each CODEC (none|gzip|snappy|lz4; zstd needs node's zlib.zstdCompressSync, which node 20
// lacks) it sends COUNT messages key-<i % 37> -> PREFIX-CODEC-<i> in one send().
// Prints {"produced": n, "codecs": [...]}.
import { Producer, stringSerializers } from '@platformatic/kafka'
import { main } from './lib.mjs'

await main('platformatic-e2e.mjs HOST:PORT TOPIC PREFIX COUNT CODEC...', async ([bootstrap, topic, prefix, count, ...codecs]) => {
  const producer = new Producer({
    clientId: 'kgc-interop-platformatic-producer',
    bootstrapBrokers: [bootstrap],
    serializers: stringSerializers,
    timeout: 10000,
    retries: 3
  })
  let produced = 0
  try {
    for (const codec of codecs) {
      const messages = []
      for (let i = 0; i < Number(count); i++) messages.push({ topic, key: `key-${i % 37}`, value: `${prefix}-${codec}-${i}` })
      await producer.send({ messages, acks: -1, compression: codec })
      produced += messages.length
    }
  } finally {
    await producer.close()
  }
  return { produced, codecs }
})
