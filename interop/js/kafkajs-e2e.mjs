// kafkajs 2.2.4 producer for the end-to-end scenario (Produce v7, acks=all).
// Usage: node kafkajs-e2e.mjs HOST:PORT TOPIC PREFIX COUNT CODEC...
// For each CODEC (none|gzip; kafkajs ships only gzip: snappy, lz4 and zstd need codec packages
// that are not installed) it sends COUNT messages key-<i % 37> -> PREFIX-CODEC-<i> in one send().
// Prints {"produced": n, "codecs": [...]}.
import kafkajs from 'kafkajs'
import { log, main } from './lib.mjs'

const { Kafka, logLevel, CompressionTypes } = kafkajs
const CODECS = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP }

await main('kafkajs-e2e.mjs HOST:PORT TOPIC PREFIX COUNT CODEC...', async ([bootstrap, topic, prefix, count, ...codecs]) => {
  const kafka = new Kafka({
    clientId: 'kgc-interop-kafkajs-producer',
    brokers: [bootstrap],
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, label, log: entry }) => log(`[kafkajs ${label}] ${namespace}`, entry),
    retry: { retries: 3 }
  })
  const producer = kafka.producer()
  await producer.connect()
  let produced = 0
  try {
    for (const codec of codecs) {
      if (!(codec in CODECS)) throw new Error(`kafkajs has no ${codec} codec here`)
      const messages = []
      for (let i = 0; i < Number(count); i++) messages.push({ key: `key-${i % 37}`, value: `${prefix}-${codec}-${i}` })
      await producer.send({ topic, messages, acks: -1, compression: CODECS[codec] })
      produced += messages.length
    }
  } finally {
    await producer.disconnect()
  }
  return { produced, codecs }
})
