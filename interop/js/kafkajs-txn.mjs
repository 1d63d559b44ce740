// kafkajs 2.2.4 transactional producer.
// Usage: node kafkajs-txn.mjs HOST:PORT TOPIC TXN_ID PARTITIONS PLAN_JSON
// PLAN_JSON is [[commit, [value, ...]], ...]: one transaction per step, its values round-robin
// over PARTITIONS, then committed (true) or aborted (false). Prints {"transactions": n}.
import kafkajs from 'kafkajs'
import { log, main } from './lib.mjs'

const { Kafka, logLevel } = kafkajs

await main('kafkajs-txn.mjs HOST:PORT TOPIC TXN_ID PARTITIONS PLAN_JSON', async ([bootstrap, topic, txnId, partitions, plan]) => {
  const kafka = new Kafka({
    clientId: 'kgc-interop-kafkajs-txn',
    brokers: [bootstrap],
    logLevel: logLevel.WARN,
    logCreator: () => ({ namespace, label, log: entry }) => log(`[kafkajs ${label}] ${namespace}`, entry),
    retry: { retries: 5 }
  })
  const producer = kafka.producer({ transactionalId: txnId, idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  let done = 0
  try {
    for (const [commit, values] of JSON.parse(plan)) {
      const transaction = await producer.transaction()
      await transaction.send({
        topic,
        acks: -1,
        messages: values.map((value, i) => ({ key: value, value, partition: i % Number(partitions) }))
      })
      if (commit) await transaction.commit()
      else await transaction.abort()
      done += 1
    }
  } finally {
    await producer.disconnect()
  }
  return { transactions: done }
})
