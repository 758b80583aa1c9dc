// Reads an OpenAI-style SSE response (`data: {...}` lines ending with `data: [DONE]`) into JSON
// chunks, with eventsource-parser doing the SSE framing.
import { createParser } from "eventsource-parser";
import { ApiError } from "./api.js";

export async function* sseChunks<T>(response: Response): AsyncGenerator<T> {
  if (!response.body) return;
  const queue: T[] = [];
  let done = false;
  let failure: Error | null = null;
  const parser = createParser({
    onEvent(event) {
      if (event.data === "[DONE]") {
        done = true;
        return;
      }
      try {
        const chunk = JSON.parse(event.data) as T & { error?: { message?: string } };
        // A server may report a failure mid-stream as a chunk with an `error` object.
        if (chunk && typeof chunk === "object" && chunk.error?.message) {
          failure = new ApiError(500, chunk.error.message, null);
        } else queue.push(chunk);
      } catch {
        failure = new Error(
          `the server sent an event that is not JSON: ${event.data.slice(0, 80)}`,
        );
      }
    },
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    while (!done) {
      const { value, done: ended } = await reader.read();
      if (value) parser.feed(value);
      while (queue.length > 0) yield queue.shift() as T;
      if (failure) throw failure;
      if (ended) break;
    }
  } finally {
    reader.releaseLock();
  }
}
