// kafkajs 2.2.4 consumer-group member that runs until SIGTERM or stdin EOF, then disconnects
// (LeaveGroup v3) and exits 0. JoinGroup v5 with protocol "RoundRobinAssigner", SyncGroup v3,
// Heartbeat v3, OffsetFetch v4, OffsetCommit v5 (protocol.md §3.1, §3.3).
// Usage: node kafkajs-group.mjs HOST:PORT GROUP TOPIC CLIENT_ID HEARTBEAT_MS SESSION_MS
// Prints one JSON line per event on stdout:
//   {"event":"assign","partitions":[..],"generation":g,"memberId":m}  after each GROUP_JOIN
//   {"event":"message","partition":p,"offset":"o","key":k,"value":v}  each message, printed only
//       once its batch is committed (eachBatch, then commitOffsets of lastOffset+1)
//   {"event":"crash","type":t,"message":m,"restart":r}  the consumer crashed (e.g. INCONSISTENT_GROUP_PROTOCOL;
//       restart: it starts again, after an unreachable broker)
//   {"event":"closed"}  after disconnect
import kafkajs from 'kafkajs'
import { log } from './lib.mjs'

const { Kafka, logLevel } = kafkajs
const [bootstrap, group, topic, clientId, heartbeatMs, sessionMs] = process.argv.slice(2)
const emit = event => process.stdout.write(JSON.stringify(event) + '\n')

const UNREACHABLE = new Set(['KafkaJSNoBrokerAvailableError', 'KafkaJSConnectionError'])
const unreachable = error => Boolean(error) && (UNREACHABLE.has(error.name) || unreachable(error.cause))

const kafka = new Kafka({
  clientId,
  brokers: [bootstrap],
  logLevel: logLevel.WARN,
  logCreator: () => ({ namespace, label, log: entry }) => log(`[kafkajs ${label}] ${namespace}`, entry),
  connectionTimeout: 5000,
  requestTimeout: 10000,
  // a restarting coordinator (interop/test_end_to_end.py) may take a few seconds on a loaded machine
  retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 }
})
const consumer = kafka.consumer({
  groupId: group,
  heartbeatInterval: Number(heartbeatMs),
  sessionTimeout: Number(sessionMs),
  rebalanceTimeout: 20000,
  // disconnect() waits for the fetch in flight; kafkajs' default long poll is 5 s.
  maxWaitTimeInMs: 1000,
  // Retriable errors are retried for ~8 s, and a crash restarts the consumer only when the broker
  // was unreachable: a coordinator restarting on a loaded machine (interop/test_end_to_end.py)
  // refuses connections for a second or two. Any other crash (e.g. INCONSISTENT_GROUP_PROTOCOL) is
  // reported, not retried forever out of sight.
  retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000, restartOnFailure: async e => unreachable(e) }
})
const { GROUP_JOIN, CRASH } = consumer.events
consumer.on(GROUP_JOIN, ({ payload }) => {
  emit({
    event: 'assign',
    partitions: payload.memberAssignment[topic] ?? [],
    generation: payload.generationId ?? null,
    memberId: payload.memberId,
    leader: payload.isLeader
  })
})
consumer.on(CRASH, ({ payload }) => {
  emit({
    event: 'crash',
    type: payload.error?.type ?? null,
    message: String(payload.error?.message ?? payload.error),
    restart: payload.restart
  })
})

let stopping = false
async function stop () {
  if (stopping) return
  stopping = true
  try {
    await consumer.disconnect()
  } catch (error) {
    log('disconnect failed', String(error?.stack ?? error))
  }
  emit({ event: 'closed' })
  process.exit(0)
}
process.on('SIGTERM', stop)
process.stdin.on('end', stop)
process.stdin.resume()

await consumer.connect()
await consumer.subscribe({ topics: [topic], fromBeginning: true })
await consumer.run({
  autoCommit: false,
  eachBatch: async ({ batch, heartbeat }) => {
    if (batch.messages.length === 0) return
    const rows = batch.messages.map(m => ({
      event: 'message',
      partition: batch.partition,
      offset: m.offset,
      key: m.key === null ? null : m.key.toString(),
      value: m.value === null ? null : m.value.toString()
    }))
    const next = (BigInt(batch.lastOffset()) + 1n).toString()
    await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }])
    for (const row of rows) emit(row)
    await heartbeat()
  }
})
