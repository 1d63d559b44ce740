// kafkajs 2.2.4 over SASL (PLAIN or SCRAM-SHA-512), optionally over TLS: a transaction commits,
// a consumer group forms and commits, and a wrong password is refused.
// Usage: node kafkajs-secure.mjs HOST:PORT TOPIC GROUP MECHANISM USER PASSWORD CA_FILE|- COUNT
// Prints {"consumed": n, "committed": offset, "wrongPassword": "<error name>"}.
import fs from 'node:fs'
import kafkajs from 'kafkajs'
import { log, main } from './lib.mjs'

const { Kafka, logLevel } = kafkajs

await main('kafkajs-secure.mjs HOST:PORT TOPIC GROUP MECHANISM USER PASSWORD CA_FILE|- COUNT',
  async ([bootstrap, topic, group, mechanism, username, password, ca, count]) => {
    const client = pw => new Kafka({
      clientId: 'kgc-interop-kafkajs-secure',
      brokers: [bootstrap],
      ssl: ca === '-' ? false : { ca: [fs.readFileSync(ca, 'utf-8')] },
      sasl: { mechanism: mechanism.toLowerCase(), username, password: pw },
      logLevel: logLevel.NOTHING,
      logCreator: () => ({ namespace, label, log: entry }) => log(`[kafkajs ${label}] ${namespace}`, entry),
      retry: { retries: 2, initialRetryTime: 100 }
    })
    const kafka = client(password)
    const producer = kafka.producer({ transactionalId: `${group}-txn`, idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    const txn = await producer.transaction()
    const n = Number(count)
    await txn.send({ topic, acks: -1, messages: Array.from({ length: n }, (_, i) => ({ value: `v${i}` })) })
    await txn.commit()
    await producer.disconnect()

    const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 200, heartbeatInterval: 500 })
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    let consumed = 0
    const done = new Promise(resolve => {
      consumer.run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          consumed += 1
          await consumer.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }])
          if (consumed >= n) resolve()
        }
      })
    })
    await done
    const admin = kafka.admin()
    await admin.connect()
    const offsets = await admin.fetchOffsets({ groupId: group, topics: [topic] })
    await admin.disconnect()
    await consumer.disconnect()

    let wrongPassword = null
    const bad = client('wrong-password').producer()
    try {
      await bad.connect()
    } catch (error) {
      wrongPassword = error.name
    }
    return { consumed, committed: Number(offsets[0].partitions[0].offset), wrongPassword }
  })
