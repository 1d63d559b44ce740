// kafkajs 2.2.4 consumer-group member for multi-broker scenarios: the bootstrap argument may list
// several brokers (HOST:PORT,HOST:PORT,...), so the client still reaches the cluster when one of
// them is down. Runs until SIGTERM or stdin EOF, then disconnects (LeaveGroup v3) and exits 0.
// Usage: node kafkajs-cluster-member.mjs BOOTSTRAP GROUP TOPIC CLIENT_ID HEARTBEAT_MS SESSION_MS
// Optional environment: KAFKAJS_REQUEST_TIMEOUT_MS (default 10000).
// Prints one JSON line per event on stdout (the contract of interop/clients/group_members.py's
// NodeMember):
//   {"event":"assign","partitions":[..],"generation":g,"memberId":m}  after each GROUP_JOIN
//   {"event":"message","partition":p,"offset":"o","key":k,"value":v}  each message handed to
//       eachBatch, printed before its batch is committed (commitOffsets of lastOffset+1), as the
//       Python members record theirs: a commit whose answer is lost with its broker may have
//       been applied, so reporting only after a successful commit could hide a delivered message
//   {"event":"commit_failed","partition":p,"message":m}  a commit that failed (kafkajs then
//       redelivers from the last commit the coordinator holds: a redelivery, never a gap)
//   {"event":"crash","type":t,"message":m}  the consumer crashed
//   {"event":"closed"}  after disconnect
import kafkajs from 'kafkajs'
import { log } from './lib.mjs'

const { Kafka, logLevel } = kafkajs
const [bootstrap, group, topic, clientId, heartbeatMs, sessionMs] = process.argv.slice(2)
const emit = event => process.stdout.write(JSON.stringify(event) + '\n')

const kafka = new Kafka({
  clientId,
  brokers: bootstrap.split(','),
  logLevel: logLevel.WARN,
  logCreator: () => ({ namespace, label, log: entry }) => log(`[kafkajs ${label}] ${namespace}`, entry),
  connectionTimeout: 2000,
  requestTimeout: Number(process.env.KAFKAJS_REQUEST_TIMEOUT_MS ?? 10000),
  retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 }
})
const consumer = kafka.consumer({
  groupId: group,
  heartbeatInterval: Number(heartbeatMs),
  sessionTimeout: Number(sessionMs),
  rebalanceTimeout: 10000,
  maxWaitTimeInMs: 250,
  // kafkajs caches the coordinator's node id and looks only that node up again after a connection
  // error, so once the coordinator broker is gone from Metadata ("Broker N not found in the cached
  // metadata") only a restart of the consumer (a crash with restartOnFailure, then JoinGroup after
  // FindCoordinator) finds the new one. Few quick retries make that restart come within seconds.
  retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 500 }
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
  emit({ event: 'crash', type: payload.error?.type ?? null, message: String(payload.error?.message ?? payload.error) })
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
    for (const row of rows) emit(row)
    const next = (BigInt(batch.lastOffset()) + 1n).toString()
    try {
      await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }])
    } catch (error) {
      emit({ event: 'commit_failed', partition: batch.partition, message: String(error?.message ?? error) })
      throw error // kafkajs retries the batch (from the last committed or resolved offset)
    }
    await heartbeat()
  }
})
