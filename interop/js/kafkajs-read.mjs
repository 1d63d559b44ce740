// kafkajs 2.2.4 consumer reading a whole topic with an isolation level.
// Usage: node kafkajs-read.mjs HOST:PORT TOPIC read_committed|read_uncommitted COUNT
// A fresh group subscribes from the beginning; once COUNT values arrived and the last batch of
// every partition seen reached its high watermark (offset lag 0, markers and aborted records
// included), prints {"values": [...]}.
import kafkajs from 'kafkajs'
import { log, main } from './lib.mjs'

const { Kafka, logLevel } = kafkajs

await main('kafkajs-read.mjs HOST:PORT TOPIC ISOLATION COUNT', async ([bootstrap, topic, isolation, count]) => {
  const kafka = new Kafka({
    clientId: 'kgc-interop-kafkajs-read',
    brokers: [bootstrap],
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, label, log: entry }) => log(`[kafkajs ${label}] ${namespace}`, entry)
  })
  const consumer = kafka.consumer({
    groupId: `kafkajs-read-${Date.now()}-${Math.random()}`,
    readUncommitted: isolation === 'read_uncommitted',
    maxWaitTimeInMs: 200
  })
  await consumer.connect()
  const values = []
  const caughtUp = new Map()
  let finish
  const finished = new Promise(resolve => { finish = resolve })
  const check = () => {
    if (values.length >= Number(count) && caughtUp.size > 0 && [...caughtUp.values()].every(Boolean)) finish()
  }
  // A batch of only markers or aborted records skips eachBatch; every batch ends with this event.
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    caughtUp.set(payload.partition, payload.offsetLag === '0')
    check()
  })
  await consumer.subscribe({ topic, fromBeginning: true })
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      for (const message of batch.messages) values.push(message.value.toString())
    }
  })
  await finished
  await consumer.disconnect()
  return { values }
})
