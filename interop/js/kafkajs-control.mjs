// The control plane's core fault scenarios with kafkajs 2.2.4, driven over HTTP from node: this
// script installs the fault rules, advances the clock and reads groups, faults and the request
// log through the control API with fetch(), runs kafkajs consumers against the brokers, waits
// on conditions (never a fixed sleep), and prints what it observed as one JSON line.
// Usage: node kafkajs-control.mjs CONTROL_URL BOOTSTRAP TOPIC GROUP SCENARIO
// SCENARIO: not_coordinator | load_in_progress | rebalance_in_progress | sync_dropped |
//           fetch_delay | manual_clock (the server runs with clock.mode=manual)
import kafkajs from 'kafkajs'
import { log, main } from './lib.mjs'

const { Kafka, logLevel } = kafkajs
const PARTITIONS = 3

function controlApi (base) {
  async function call (method, path, body) {
    const response = await fetch(base + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
    return JSON.parse(text)
  }
  return {
    fault: rule => call('POST', '/v1/faults', rule).then(r => r.id),
    faults: () => call('GET', '/v1/faults'),
    hits: async id => (await call('GET', '/v1/faults')).find(f => f.id === id).hits,
    group: async id => {
      try {
        return await call('GET', `/v1/groups/${encodeURIComponent(id)}`)
      } catch (error) {
        if (String(error).includes(': 404 ')) return null
        throw error
      }
    },
    snapshot: () => call('GET', '/v1/snapshot'),
    clock: () => call('GET', '/v1/clock'),
    advance: ms => call('POST', '/v1/clock/advance', { ms }),
    // The request log from `since` on (a filter that matches nothing gives the end cursor).
    end: async () => (await call('GET', '/v1/requests?since=0&limit=1&group=%00')).next,
    requests: async (since, api) => {
      const out = []
      for (;;) {
        const page = await call('GET', `/v1/requests?since=${since}&api=${api}&limit=1000`)
        out.push(...page.requests)
        if (page.requests.length < 1000) return out
        since = page.next
      }
    }
  }
}

async function waitFor (what, predicate, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await predicate()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`)
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

// One kafkajs consumer: records its GROUP_JOIN assignments and consumed offsets, commits each batch.
async function startMember (bootstrap, group, topic, name, { sessionMs = 6000, requestTimeoutMs = 10000 } = {}) {
  const clientId = `kgc-interop-${name}`
  const kafka = new Kafka({
    clientId,
    brokers: bootstrap.split(','),
    logLevel: logLevel.NOTHING,
    requestTimeout: requestTimeoutMs,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 500 }
  })
  const consumer = kafka.consumer({
    groupId: group, sessionTimeout: sessionMs, heartbeatInterval: 200, rebalanceTimeout: 10000,
    maxWaitTimeInMs: 200, retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 500 }
  })
  const state = { name, clientId, consumer, joins: [], consumed: [], crashes: [] }
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    state.joins.push({ generation: payload.generationId, partitions: payload.memberAssignment[topic] ?? [] })
  })
  consumer.on(consumer.events.CRASH, ({ payload }) => state.crashes.push(String(payload.error?.message)))
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      if (batch.messages.length === 0) return
      for (const m of batch.messages) state.consumed.push([batch.partition, Number(m.offset)])
      const next = (BigInt(batch.lastOffset()) + 1n).toString()
      await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }])
    }
  })
  return state
}

const owned = member => member.joins.length ? member.joins[member.joins.length - 1].partitions : []
const ownsAll = members => {
  const all = members.flatMap(owned).sort((a, b) => a - b)
  return members.every(m => owned(m).length > 0) && JSON.stringify(all) === JSON.stringify([...Array(PARTITIONS).keys()])
}

async function produce (bootstrap, topic, count) {
  const kafka = new Kafka({ clientId: 'kgc-interop-kafkajs-control-producer', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING })
  const producer = kafka.producer()
  await producer.connect()
  const ends = {}
  for (let i = 0; i < count; i++) {
    const [meta] = await producer.send({ topic, acks: -1, messages: [{ value: `v${i}`, partition: i % PARTITIONS }] })
    ends[meta.partition] = Math.max(ends[meta.partition] ?? 0, Number(meta.baseOffset) + 1)
  }
  await producer.disconnect()
  return ends
}

const committed = async (control, group, topic) => {
  const offsets = (await control.snapshot()).offsets[group] ?? {}
  return Object.fromEntries(Object.entries(offsets).filter(([tp]) => tp.startsWith(`${topic}-`))
    .map(([tp, v]) => [tp.slice(topic.length + 1), v.offset]))
}
const sameOffsets = (a, b) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).map(([k, v]) => [String(k), v]).sort())

const SCENARIOS = {
  async not_coordinator ({ control, bootstrap, topic, group, members }) {
    const m = await startMember(bootstrap, group, topic, `${group}-0`)
    members.push(m)
    await waitFor('the member owns every partition', () => ownsAll([m]))
    const cursor = await control.end()
    const rule = await control.fault({ api: 'OffsetCommit', errors: ['NOT_COORDINATOR'], count: 1, group })
    const ends = await produce(bootstrap, topic, 30)
    await waitFor('everything committed', async () => sameOffsets(await committed(control, group, topic), ends))
    const mine = async api => (await control.requests(cursor, api)).filter(e => e.client_id === m.clientId)
    return { rule, hits: await control.hits(rule), cursor, clientId: m.clientId, commits: await mine('OffsetCommit'), findCoordinator: await mine('FindCoordinator'), metadata: await mine('Metadata') }
  },

  async load_in_progress ({ control, bootstrap, topic, group, members }) {
    const rule = await control.fault({ api: 'JoinGroup', errors: Array(3).fill('COORDINATOR_LOAD_IN_PROGRESS'), group })
    for (let i = 0; i < 2; i++) members.push(await startMember(bootstrap, group, topic, `${group}-${i}`))
    await waitFor('two members own every partition', () => ownsAll(members))
    const view = await waitFor('the group is Stable', async () => { const v = await control.group(group); return v?.state === 'Stable' && v })
    return { rule, hits: await control.hits(rule), view }
  },

  async rebalance_in_progress ({ control, bootstrap, topic, group, members }) {
    for (let i = 0; i < 2; i++) members.push(await startMember(bootstrap, group, topic, `${group}-${i}`))
    await waitFor('two members own every partition', () => ownsAll(members))
    const before = await waitFor('the group is Stable', async () => { const v = await control.group(group); return v?.state === 'Stable' && v.members.length === 2 && v })
    const joins = members.map(m => m.joins.length)
    const rule = await control.fault({ api: 'Heartbeat', error: 'REBALANCE_IN_PROGRESS', group_state: 'Stable', count: 1, group, member: before.leader })
    const after = await waitFor('a rebalance, then Stable again', async () => {
      const v = await control.group(group)
      return v?.state === 'Stable' && v.generation > before.generation && members.every((m, i) => m.joins.length > joins[i]) && ownsAll(members) && v
    })
    return { rule, hits: await control.hits(rule), before, after }
  },

  async sync_dropped ({ control, bootstrap, topic, group, members }) {
    const rule = await control.fault({ api: 'SyncGroup', drop_response: true, count: 1, group })
    const m = await startMember(bootstrap, group, topic, `${group}-0`, { sessionMs: 1000, requestTimeoutMs: 2500 })
    members.push(m)
    await waitFor('the member recovers and owns every partition', () => ownsAll([m]), 30000)
    const syncs = (await control.requests(0, 'SyncGroup')).filter(e => e.client_id === m.clientId)
    return { rule, hits: await control.hits(rule), syncs, crashes: m.crashes }
  },

  async fetch_delay ({ control, bootstrap, topic, group, members }) {
    const m = await startMember(bootstrap, group, topic, `${group}-0`)
    members.push(m)
    await waitFor('the member owns every partition', () => ownsAll([m]))
    const rule = await control.fault({ api: 'Fetch', delay_ms: 500, client_id: m.clientId })
    const cursor = await control.end()
    const ends = await produce(bootstrap, topic, 30)
    await waitFor('everything consumed and committed', async () => sameOffsets(await committed(control, group, topic), ends))
    const fetches = (await control.requests(cursor, 'Fetch')).filter(e => e.fault === rule)
    return { rule, took: fetches.map(e => e.answered_ms - e.received_ms) }
  },

  async manual_clock ({ control, bootstrap, topic, group, members }) {
    const quick = await startMember(bootstrap, group, topic, `${group}-0`, { sessionMs: 6000 })
    members.push(quick)
    for (const i of [1, 2]) members.push(await startMember(bootstrap, group, topic, `${group}-${i}`, { sessionMs: 60000 }))
    await waitFor('three members own every partition', () => ownsAll(members))
    const stable = await waitFor('the group is Stable with three', async () => { const v = await control.group(group); return v?.state === 'Stable' && v.members.length === 3 && v })
    await control.fault({ api: 'LeaveGroup', close: 'before', client_id: quick.clientId })
    await quick.consumer.disconnect()
    members.shift()
    const held = await control.group(group)
    const clockBefore = await control.clock()
    const clockAfter = await control.advance(6001)
    const expired = await control.group(group)
    const rest = members
    const joins = rest.map(m => m.joins.length)
    const after = await waitFor('the other two rebalance', async () => {
      const v = await control.group(group)
      return v?.state === 'Stable' && v.members.length === 2 && v.generation > stable.generation && rest.every((m, i) => m.joins.length > joins[i]) && ownsAll(rest) && v
    })
    return { quick: quick.clientId, held, clockBefore, clockAfter, expired, after, clockEnd: await control.clock() }
  }
}

await main('kafkajs-control.mjs CONTROL_URL BOOTSTRAP TOPIC GROUP SCENARIO', async ([url, bootstrap, topic, group, scenario]) => {
  const control = controlApi(url)
  const members = []
  try {
    return await SCENARIOS[scenario]({ control, bootstrap, topic, group, members })
  } finally {
    for (const m of members) {
      try { await m.consumer.disconnect() } catch (error) { log('disconnect failed', String(error)) }
    }
  }
})
