// Reads UI message streams (AI SDK protocol v1, as llm-rx writes them) with the AI SDK's own
// client code: parseJsonEventStream with uiMessageChunkSchema (what DefaultChatTransport
// does), then readUIMessageStream. An argument that is a URL is asked by useChat's own
// transport instead (DefaultChatTransport.sendMessages: a POST of the chat's messages). For
// each file or URL named on the command line, prints one JSON line: {"file", "message" (the
// last UI message), "errors" (error chunks and schema failures), "chunks" (the chunk types in
// order), "next" (the message as the next request's model messages: convertToModelMessages,
// what a server does with what the page sends back)}.
import { readFile } from "node:fs/promises";
import {
  DefaultChatTransport, convertToModelMessages, parseJsonEventStream, readUIMessageStream,
  uiMessageChunkSchema,
} from "ai";

async function parsedChunks(file, errors) {
  if (/^https?:\/\//.test(file)) {
    const transport = new DefaultChatTransport({ api: file });
    const messages = [{ id: "u1", role: "user", parts: [{ type: "text", text: "Hello" }] }];
    return transport.sendMessages({
      chatId: "c1", messages, trigger: "submit-message", messageId: undefined,
      abortSignal: undefined,
    });
  }
  const body = await readFile(file);
  return parseJsonEventStream({
    stream: new Response(body).body,
    schema: uiMessageChunkSchema,
  }).pipeThrough(new TransformStream({
    transform(result, controller) {
      if (!result.success) {
        errors.push(`schema: ${result.error.message}`);
        return;
      }
      controller.enqueue(result.value);
    },
  }));
}

async function read(file) {
  const errors = [];
  const chunks = [];
  const stream = (await parsedChunks(file, errors)).pipeThrough(new TransformStream({
    transform(chunk, controller) {
      chunks.push(chunk.type);
      controller.enqueue(chunk);
    },
  }));
  let message = null;
  for await (const snapshot of readUIMessageStream({
    stream,
    onError: (error) => errors.push(`stream: ${error.message ?? error}`),
  })) {
    message = snapshot;
  }
  let next = null;
  if (message !== null) {
    try {
      next = await convertToModelMessages([message]);
    } catch (error) {
      errors.push(`convert: ${error.message ?? error}`);
    }
  }
  return { file, message, errors, chunks, next };
}

for (const file of process.argv.slice(2)) {
  let out;
  try {
    out = await read(file);
  } catch (error) {
    out = { file, message: null, errors: [`thrown: ${error.message ?? error}`], chunks: [] };
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}
