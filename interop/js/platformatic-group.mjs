// @platformatic/kafka 1.35 consumer-group member that runs until SIGTERM or stdin EOF, then
// closes (LeaveGroup) and exits 0. Protocol "roundrobin"; it joins, syncs and, as leader,
// assigns by itself, then reads committed offsets (mode "committed", falling back to earliest).
// Usage: node platformatic-group.mjs HOST:PORT GROUP TOPIC CLIENT_ID HEARTBEAT_MS SESSION_MS
// Prints one JSON line per event on stdout (the same contract as kafkajs-group.mjs):
//   {"event":"assign","partitions":[..],"generation":g,"memberId":m}  after each group join
//   {"event":"message","partition":p,"offset":"o","key":k,"value":v}  each message, printed only
//       after message.commit() resolved
//   {"event":"crash","type":t,"message":m}  a stream or consumer error
//   {"event":"closed"}  after close
import { Consumer, stringDeserializers } from '@platformatic/kafka'
import { log } from './lib.mjs'

const [bootstrap, group, topic, clientId, heartbeatMs, sessionMs] = process.argv.slice(2)
const emit = event => process.stdout.write(JSON.stringify(event) + '\n')

const consumer = new Consumer({
  groupId: group,
  clientId,
  bootstrapBrokers: [bootstrap],
  deserializers: stringDeserializers,
  sessionTimeout: Number(sessionMs),
  rebalanceTimeout: 20000,
  heartbeatInterval: Number(heartbeatMs),
  timeout: 10000,
  retries: 5
})
consumer.on('consumer:group:join', payload => {
  const mine = (payload.assignments ?? []).filter(a => a.topic === topic).flatMap(a => a.partitions)
  emit({ event: 'assign', partitions: mine, generation: payload.generationId, memberId: payload.memberId, leader: payload.isLeader })
})
consumer.on('consumer:group:rebalance', () => emit({ event: 'rebalance' }))
const crash = error => emit({ event: 'crash', type: error?.code ?? error?.name ?? null, message: String(error?.message ?? error) })
consumer.on('error', crash)

let stream = null
let stopping = false
async function stop () {
  if (stopping) return
  stopping = true
  try {
    await consumer.close(true)
  } catch (error) {
    log('close failed', String(error?.stack ?? error))
  }
  emit({ event: 'closed' })
  process.exit(0)
}
process.on('SIGTERM', stop)
process.stdin.on('end', stop)
process.stdin.resume()

stream = await consumer.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest', autocommit: false })
stream.on('error', crash)
for await (const message of stream) {
  if (stopping) break
  await message.commit()
  emit({
    event: 'message',
    partition: message.partition,
    offset: message.offset.toString(),
    key: message.key ?? null,
    value: message.value ?? null
  })
}
