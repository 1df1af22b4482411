'use strict'
// Gregor's interop driver for kafkajs: runs the scenarios of interop/SCENARIOS.md named on the
// command line and prints one JSON line per scenario on stdout.
const fs = require('fs')
const path = require('path')
const { Kafka, CompressionTypes, CompressionCodecs, ConfigResourceTypes, logLevel } = require('kafkajs')
const SnappyCodec = require('kafkajs-snappy')
const lz4js = require('lz4js')
const { ZstdCodec } = require('zstd-codec')

const env = (k, d) => process.env[k] || d
const BOOTSTRAP = env('INTEROP_BOOTSTRAP', '127.0.0.1:28092').split(',')
const SASL_BOOTSTRAP = env('INTEROP_SASL_BOOTSTRAP', BOOTSTRAP.join(',')).split(',')
const SSL_BOOTSTRAP = env('INTEROP_SSL_BOOTSTRAP', '').split(',').filter(Boolean)
const SASL_SSL_BOOTSTRAP = env('INTEROP_SASL_SSL_BOOTSTRAP', '').split(',').filter(Boolean)
const CA_FILE = env('INTEROP_CA_FILE', '')
const PREFIX = env('INTEROP_PREFIX', 'it-kafkajs')
const REPLICATION_FACTOR = Number(env('INTEROP_REPLICATION_FACTOR', '1'))
const USER = env('INTEROP_SASL_USER', 'interop')
const PASS = env('INTEROP_SASL_PASSWORD', 'interop-secret')
const TIMEOUT = Number(env('INTEROP_SCENARIO_TIMEOUT_MS', '90000'))
const APIS = new Set(env('INTEROP_TARGET_APIS', '').split(',').filter(Boolean).map(Number))
const CODECS = ['none', 'gzip', 'snappy', 'lz4', 'zstd']
const GROUP_KEYS = [8, 9, 10, 11, 12, 13, 14]

// kafkajs ships gzip only; the other codecs plug in (pure JavaScript or WebAssembly, no native build).
CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec
// lz4js leaves the frame's block-independence flag unset, which Kafka's LZ4 reader refuses
// ("Dependent block stream is unsupported"). A frame of one block is independent by
// definition, so set the flag and recompute the descriptor checksum.
const xxh32 = require('lz4js/xxh32.js')
const LZ4_BLOCK = 4 << 20
function lz4Frame (buf) {
  if (buf.length > LZ4_BLOCK) throw new Error(`lz4: ${buf.length} bytes exceed one ${LZ4_BLOCK}-byte block`)
  const c = Buffer.from(lz4js.compress(buf))
  c[4] |= 0x20
  c[6] = (xxh32.hash(0, c, 4, 2) >> 8) & 0xff
  return c
}
CompressionCodecs[CompressionTypes.LZ4] = () => ({
  async compress (encoder) { return lz4Frame(encoder.buffer) },
  async decompress (buffer) { return Buffer.from(lz4js.decompress(buffer)) }
})
let zstd = null
CompressionCodecs[CompressionTypes.ZSTD] = () => ({
  async compress (encoder) { return Buffer.from(zstd.compress(encoder.buffer)) },
  async decompress (buffer) { return Buffer.from(zstd.decompress(buffer)) }
})
const zstdReady = new Promise(resolve => ZstdCodec.run(z => { zstd = new z.Simple(); resolve() }))
const codecType = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP, snappy: CompressionTypes.Snappy, lz4: CompressionTypes.LZ4, zstd: CompressionTypes.ZSTD }

class Skip extends Error {}
class Check extends Error {}
function check (ok, msg) { if (!ok) throw new Check(msg) }

let deadline = 0
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

function kafka (extra = {}) {
  return new Kafka({ clientId: 'interop-kafkajs', brokers: BOOTSTRAP, logLevel: logLevel.NOTHING, retry: { retries: 5 }, ...extra })
}

// kafkajs has no group-less consumer: every read goes through a consumer group.
function needGroups (what) {
  const lack = GROUP_KEYS.filter(k => !APIS.has(k))
  if (APIS.size > 0 && lack.length > 0) {
    throw new Skip(`not implemented: kafkajs ${what} only through a consumer group and the target does not advertise API keys ${lack.join(',')}`)
  }
}

async function eventually (fn) {
  for (;;) {
    try { return await fn() } catch (e) {
      if (Date.now() > deadline) throw e
      await sleep(200)
    }
  }
}

async function withAdmin (k, fn) {
  const admin = k.admin()
  await admin.connect()
  try { return await fn(admin) } finally { await admin.disconnect() }
}

async function create (admin, topic, numPartitions, configEntries = []) {
  await admin.createTopics({ topics: [{ topic, numPartitions, replicationFactor: REPLICATION_FACTOR, configEntries }], waitForLeaders: true })
}

async function withProducer (k, opts, fn) {
  const p = k.producer(opts)
  await p.connect()
  try { return await fn(p) } finally { await p.disconnect() }
}

// readAll consumes topic from the start in a fresh group until want messages arrived.
async function readAll (k, topic, want, opts = {}, start = null) {
  const c = k.consumer({ groupId: `${PREFIX}-reader-${Math.random().toString(16).slice(2)}`, ...opts })
  const out = []
  await c.connect()
  try {
    await c.subscribe({ topics: [topic], fromBeginning: true })
    await c.run({ eachMessage: async ({ partition, message }) => { out.push({ partition, ...message }) } })
    if (start) start(c)
    while (out.length < want && Date.now() < deadline) await sleep(50)
  } finally { await c.disconnect() }
  check(out.length >= want, `consumed ${out.length} of ${want} records`)
  return out
}

const str = b => (b === null || b === undefined ? null : b.toString())

async function topicConfig (admin, topic, name) {
  const r = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }], includeSynonyms: false })
  const e = r.resources[0].configEntries.find(x => x.configName === name)
  check(e, `describe configs of ${topic}: no ${name}`)
  return e.configValue
}

const scenarios = {
  async metadata () {
    const topic = `${PREFIX}-meta`
    await withAdmin(kafka(), async admin => {
      const c = await admin.describeCluster()
      check(c.brokers.length > 0, 'no brokers')
      await create(admin, topic, 3)
      await eventually(async () => {
        const md = await admin.fetchTopicMetadata({ topics: [topic] })
        const ps = md.topics[0].partitions
        check(ps.length === 3, `${ps.length} partitions, want 3`)
        ps.forEach(p => check(p.leader >= 0, `partition ${p.partitionId} has no leader`))
      })
    })
  },

  async topic_admin () {
    const topic = `${PREFIX}-topic`
    await withAdmin(kafka(), async admin => {
      await create(admin, topic, 3, [{ name: 'retention.ms', value: '3600000' }])
      await eventually(async () => {
        const md = await admin.fetchTopicMetadata({ topics: [topic] })
        check(md.topics[0].partitions.length === 3, 'want 3 partitions')
      })
      await eventually(async () => {
        const v = await topicConfig(admin, topic, 'retention.ms')
        check(v === '3600000', `retention.ms after create = ${v}`)
      })
      // kafkajs has only the non-incremental AlterConfigs (key 33).
      await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'retention.ms', value: '7200000' }] }] })
      await eventually(async () => {
        const v = await topicConfig(admin, topic, 'retention.ms')
        check(v === '7200000', `retention.ms after alter = ${v}`)
      })
      await admin.deleteTopics({ topics: [topic] })
      await eventually(async () => check(!(await admin.listTopics()).includes(topic), 'topic still listed after delete'))
    })
  },

  async produce_consume () {
    const topic = `${PREFIX}-pc`
    const k = kafka()
    await zstdReady
    await withAdmin(k, admin => create(admin, topic, 3))
    const want = new Map()
    await withProducer(k, {}, async p => {
      for (const codec of CODECS) {
        const messages = []
        for (let i = 0; i < 10; i++) {
          const key = i % 2 === 0 ? `key-${codec}-${i}` : null
          const value = `value-${codec}-${i}`
          messages.push({ key, value, headers: { 'h-index': String(i), 'h-codec': codec } })
          want.set(value, { key, headers: `h-index=${i},h-codec=${codec}` })
        }
        await p.send({ topic, compression: codecType[codec], messages })
      }
    })
    needGroups('consumes')
    const got = await readAll(k, topic, want.size)
    const seen = new Set()
    for (const m of got) {
      const v = str(m.value)
      check(!seen.has(v), `value ${v} consumed twice`)
      seen.add(v)
      const w = want.get(v)
      check(w, `unexpected value ${v}`)
      check(str(m.key) === w.key, `value ${v}: key ${str(m.key)}, want ${w.key}`)
      const h = Object.entries(m.headers || {}).map(([a, b]) => `${a}=${str(b)}`).join(',')
      check(h === w.headers, `value ${v}: headers ${h}, want ${w.headers}`)
    }
    check(got.length === want.size, `consumed ${got.length}, produced ${want.size}`)
  },

  async consume_timestamp () {
    const topic = `${PREFIX}-ts`
    const k = kafka()
    const base = Date.now() - 60000
    const at = base + 5000
    await withAdmin(k, async admin => {
      await create(admin, topic, 1)
      await withProducer(k, {}, p => p.send({ topic, messages: [...Array(10).keys()].map(i => ({ value: `ts-${i}`, partition: 0, timestamp: String(base + i * 1000) })) }))
      for (const q of [at, at - 500]) {
        const r = await admin.fetchTopicOffsetsByTimestamp(topic, q)
        check(r[0].offset === '5', `offset for timestamp base+${q - base} = ${r[0].offset}, want 5`)
      }
    })
    needGroups('consumes')
    const got = await readAll(k, topic, 1, {}, c => c.seek({ topic, partition: 0, offset: '5' }))
    const m = got.find(x => x.offset === '5') || got[0]
    check(m.offset === '5' && str(m.value) === 'ts-5' && m.timestamp === String(at), `first record from timestamp: offset ${m.offset} value ${str(m.value)} ts ${m.timestamp}, want 5 ts-5 ${at}`)
  },

  async idempotent () {
    const topic = `${PREFIX}-idem`
    const k = kafka()
    await withAdmin(k, admin => create(admin, topic, 1))
    await withProducer(k, { idempotent: true, maxInFlightRequests: 1 }, async p => {
      // Sequential sends: kafkajs does not order concurrent send() calls.
      for (let i = 0; i < 200; i += 20) {
        await p.send({ topic, acks: -1, messages: [...Array(20).keys()].map(j => ({ value: `idem-${i + j}` })) })
      }
    })
    await withAdmin(k, async admin => {
      const o = await admin.fetchTopicOffsets(topic)
      check(o[0].high === '200', `high watermark ${o[0].high}, want 200`)
    })
    needGroups('consumes')
    const got = (await readAll(k, topic, 200)).sort((a, b) => Number(a.offset) - Number(b.offset))
    check(got.length === 200, `consumed ${got.length}, want 200`)
    got.forEach((m, i) => check(m.offset === String(i) && str(m.value) === `idem-${i}`, `offset ${m.offset} holds ${str(m.value)}, want ${i} holding idem-${i}`))
  },

  async consumer_group () {
    const topic = `${PREFIX}-grp`
    const groupId = topic
    const k = kafka()
    await withAdmin(k, admin => create(admin, topic, 6))
    const p = k.producer()
    await p.connect()
    try {
      await p.send({ topic, messages: [...Array(60).keys()].map(i => ({ value: `g-${i}`, partition: i % 6 })) })
      const seen = new Set()
      const member = async () => {
        const c = k.consumer({ groupId, heartbeatInterval: 500, sessionTimeout: 10000, rebalanceTimeout: 10000 })
        c.assigned = 0
        c.on(c.events.GROUP_JOIN, e => { c.assigned = (e.payload.memberAssignment[topic] || []).length })
        await c.connect()
        await c.subscribe({ topics: [topic], fromBeginning: true })
        await c.run({ autoCommitThreshold: 1, eachMessage: async ({ message }) => { seen.add(str(message.value)) } })
        return c
      }
      const ms = [await member(), await member(), await member()]
      try {
        await eventually(async () => check(ms.every(c => c.assigned === 2), `assignment ${ms.map(c => c.assigned)}, want 2 each`))
        await ms.pop().disconnect()
        await eventually(async () => check(ms.every(c => c.assigned === 3) && seen.size >= 60, `after a member left: assignment ${ms.map(c => c.assigned)}, consumed ${seen.size} of 60`))
      } finally { for (const c of ms) await c.disconnect() }
      await p.send({ topic, messages: [...Array(6).keys()].map(i => ({ value: `after-${i}`, partition: i })) })
      seen.clear()
      const c = await member()
      try {
        await eventually(async () => check(seen.size >= 6 || [...seen].some(v => !v.startsWith('after-')), `resumed member read ${seen.size} of 6`))
        const old = [...seen].filter(v => !v.startsWith('after-'))
        check(old.length === 0, `resumed member re-read ${old.slice(0, 3)}: committed offsets not used`)
      } finally { await c.disconnect() }
    } finally { await p.disconnect() }
  },

  async transactions () {
    const topic = `${PREFIX}-txn`
    const k = kafka()
    await withAdmin(k, admin => create(admin, topic, 1))
    await withProducer(k, { transactionalId: `${PREFIX}-tx`, idempotent: true, maxInFlightRequests: 1 }, async p => {
      for (const step of ['c1', 'a', 'c2']) {
        const t = await p.transaction()
        await t.send({ topic, messages: [...Array(5).keys()].map(i => ({ value: `${step}-${i}` })) })
        if (step === 'a') await t.abort(); else await t.commit()
      }
    })
    await withAdmin(k, admin => eventually(async () => {
      const end = await admin.fetchTopicOffsets(topic)
      check(end[0].high === '18', `end offset ${end[0].high}, want 18`)
    }))
    needGroups('consumes')
    const committed = (await readAll(k, topic, 10, { readUncommitted: false })).map(m => str(m.value))
    const want = ['c1', 'c2'].flatMap(x => [0, 1, 2, 3, 4].map(i => `${x}-${i}`))
    check(committed.join() === want.join(), `read_committed saw ${committed}, want ${want}`)
    const all = await readAll(k, topic, 15, { readUncommitted: true })
    check(all.length === 15, `read_uncommitted saw ${all.length}, want 15`)
  },

  async admin () {
    const topic = `${PREFIX}-adm`
    const k = kafka()
    await withAdmin(k, async admin => {
      await create(admin, topic, 1)
      await eventually(async () => {
        const v = await topicConfig(admin, topic, 'cleanup.policy')
        check(v === 'delete', `cleanup.policy = ${v}`)
      })
      const c = await admin.describeCluster()
      check(c.clusterId && c.brokers.length > 0, `describe cluster: id ${c.clusterId}, ${c.brokers.length} brokers`)
      const bc = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.BROKER, name: String(c.brokers[0].nodeId) }], includeSynonyms: false })
      check(bc.resources[0].configEntries.length > 0, 'broker configs empty')
      await admin.createPartitions({ topicPartitions: [{ topic, count: 3 }] })
      await eventually(async () => {
        const md = await admin.fetchTopicMetadata({ topics: [topic] })
        check(md.topics[0].partitions.length === 3, 'want 3 partitions after create partitions')
      })
      await withProducer(k, {}, p => p.send({ topic, messages: [...Array(10).keys()].map(i => ({ value: String(i), partition: 0 })) }))
      let o = (await admin.fetchTopicOffsets(topic)).find(x => x.partition === 0)
      check(o.low === '0' && o.high === '10', `earliest ${o.low} latest ${o.high}, want 0 and 10`)
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '4' }] })
      o = (await admin.fetchTopicOffsets(topic)).find(x => x.partition === 0)
      check(o.low === '4', `earliest after delete records ${o.low}, want 4`)
    })
  },

  sasl_plain () { return secure('sasl_plain', SASL_BOOTSTRAP, 'plain', false, 'sasl') },
  sasl_scram () { return secure('sasl_scram', SASL_BOOTSTRAP, 'scram-sha-256', false, 'sasl') },
  ssl () { return secure('ssl', SSL_BOOTSTRAP, null, true, 'ssl') },
  sasl_ssl () { return secure('sasl_ssl', SASL_SSL_BOOTSTRAP, 'scram-sha-512', true, 'sasl_ssl') }
}

// secure runs a security scenario: one record through its listener, then a client that must be
// refused (a wrong password, or for ssl one that trusts only a CA that signed nothing of ours).
async function secure (sc, brokers, mechanism, tls, value) {
  check(brokers.length > 0, `no bootstrap for ${sc} given`)
  const topic = `${PREFIX}-${sc.replace(/_/g, '-')}`
  const opts = (password, ca) => {
    const o = { brokers }
    if (mechanism) o.sasl = { mechanism, username: USER, password }
    if (tls) o.ssl = { ca: [fs.readFileSync(ca)] }
    return o
  }
  const k = kafka(opts(PASS, CA_FILE))
  await withAdmin(k, admin => create(admin, topic, 1))
  await withProducer(k, {}, p => p.send({ topic, messages: [{ value }] }))
  const bad = mechanism
    ? kafka({ ...opts('wrong-' + PASS, CA_FILE), retry: { retries: 0 } })
    : kafka({ ...opts(PASS, path.join(path.dirname(CA_FILE), 'other-ca.pem')), retry: { retries: 0 } })
  let refused = null
  try { await withAdmin(bad, admin => admin.listTopics()) } catch (e) { refused = e }
  const want = mechanism ? /auth/i : /certificate|ssl|tls/i
  check(refused && want.test(`${refused.name} ${refused.message}`), `refused client: ${refused ? refused.message : 'accepted'}, want an ${mechanism ? 'authentication' : 'TLS'} error`)
  needGroups('consumes')
  const got = await readAll(k, topic, 1)
  check(str(got[0].value) === value, `read ${str(got[0].value)} back`)
}

async function main () {
  for (const sc of process.argv.slice(2)) {
    const start = Date.now()
    deadline = start + TIMEOUT - 2000
    let status = 'pass'
    let detail = ''
    try {
      if (!scenarios[sc]) throw new Skip(`kafkajs driver has no scenario ${sc}`)
      await scenarios[sc]()
    } catch (e) {
      status = e instanceof Skip ? 'skip' : 'fail'
      detail = e instanceof Skip ? e.message : `${e.name}: ${e.message}`
    }
    process.stdout.write(JSON.stringify({ scenario: sc, status, detail, duration_ms: Date.now() - start }) + '\n')
  }
}

main().then(() => process.exit(0), e => { console.error(e); process.exit(1) })
