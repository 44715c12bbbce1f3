// The Durable Streams reference server on loopback, for the tests: node durable_server.mjs
// [LONG_POLL_MS]. Prints "ready <base URL>" once it listens (port chosen by the system);
// stops on SIGTERM or when its stdin closes (the test process went away).
import { DurableStreamTestServer } from "@durable-streams/server"

const server = new DurableStreamTestServer({
  port: 0,
  host: "127.0.0.1",
  longPollTimeout: Number(process.argv[2] ?? 30000),
})
await server.start()
process.stdout.write(`ready ${server.url}\n`)
const stop = async () => { await server.stop(); process.exit(0) }
process.on("SIGTERM", stop)
process.stdin.on("end", stop)
process.stdin.resume()
