// The protocol's published JavaScript client, as a judge of llm-rx's producer and reader:
//   node durable_client.mjs read URL LIVE     prints the stream's JSON items (one JSON array)
//                                             read with live = false | long-poll | sse
//   node durable_client.mjs write URL         appends the JSON items of stdin (one a line)
//                                             with its IdempotentProducer, the last with close()
import { DurableStream, IdempotentProducer, stream } from "@durable-streams/client"
import { readFileSync } from "node:fs"

const [mode, url, live] = process.argv.slice(2)
if (mode === "read") {
  const res = await stream({ url, offset: "-1", live: live === "false" ? false : live })
  const items = []
  if (live === "false") {
    items.push(...(await res.json()))
  } else {
    for await (const item of res.jsonStream()) {
      items.push(item)
      if (item && typeof item === "object" && "end" in item) break
    }
  }
  process.stdout.write(JSON.stringify(items) + "\n")
  process.exit(0)
} else if (mode === "write") {
  const lines = readFileSync(0, "utf8").split("\n").filter((line) => line.length > 0)
  const handle = await DurableStream.create({ url, contentType: "application/json" })
  const producer = new IdempotentProducer(handle, "js-producer", { lingerMs: 0 })
  for (const line of lines.slice(0, -1)) producer.append(line)
  await producer.close(lines[lines.length - 1])
  process.stdout.write("done\n")
  process.exit(0)
}
