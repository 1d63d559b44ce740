// Shared plumbing for the interop node scripts.
//
// Contract with interop/clients/node.py: a script prints exactly one JSON document as its
// last stdout line and exits 0, or exits non-zero with the reason on stderr. Client logging
// goes to stderr only (captured by the harness and shown when a test fails). The harness sets
// INTEROP_DEADLINE_MS so the script gives up by itself just before it would be killed.

export function parseBootstrap(arg) {
  const match = /^(.+):(\d+)$/.exec(arg ?? '')
  if (!match) throw new Error(`expected HOST:PORT, got ${JSON.stringify(arg)}`)
  return { host: match[1], port: Number(match[2]) }
}

export function log(...parts) {
  process.stderr.write(parts.map(p => (typeof p === 'string' ? p : JSON.stringify(p))).join(' ') + '\n')
}

// Run `body(argv)` under the deadline; print its result as one JSON line.
export async function main(usage, body) {
  const argv = process.argv.slice(2)
  const deadlineMs = Number(process.env.INTEROP_DEADLINE_MS ?? 25000)
  const watchdog = setTimeout(() => {
    log(`deadline of ${deadlineMs} ms passed; giving up`)
    process.exit(3)
  }, deadlineMs)
  try {
    const result = await body(argv)
    process.stdout.write(JSON.stringify(result) + '\n')
    clearTimeout(watchdog)
    process.exit(0)
  } catch (error) {
    log(`usage: ${usage}`)
    log(error?.stack ?? String(error))
    process.exit(1)
  }
}
