// HTTP access to `ruffian serve` from the page: the API key (asked once, kept in localStorage),
// errors in OpenAI's shape turned into readable messages, and "the server cannot be reached" told
// apart from an error the server answered.

const KEY_STORAGE = "ruffian.apiKey";

/** The server did not answer at all (stopped, or the network is down). */
export class UnreachableError extends Error {
  constructor(path: string) {
    super(`Cannot reach the Ruffian server (${path}). Is \`ruffian serve\` still running?`);
    this.name = "UnreachableError";
  }
}

/** The server answered with an error status; `message` is its own explanation. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export function storedApiKey(): string | null {
  return localStorage.getItem(KEY_STORAGE);
}

export function storeApiKey(key: string | null): void {
  if (key) localStorage.setItem(KEY_STORAGE, key);
  else localStorage.removeItem(KEY_STORAGE);
}

/** Asks the person for the key; installed by the app (a dialog), resolves null when dismissed. */
export type KeyPrompt = (reason: string) => Promise<string | null>;
let askForKey: KeyPrompt = async () => null;
export function setKeyPrompt(prompt: KeyPrompt): void {
  askForKey = prompt;
}

function headers(json: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  if (json) out["content-type"] = "application/json";
  const key = storedApiKey();
  if (key) out.authorization = `Bearer ${key}`;
  return out;
}

async function errorOf(response: Response): Promise<ApiError> {
  let message = `${response.status} ${response.statusText}`;
  let code: string | null = null;
  try {
    const body = (await response.json()) as { error?: { message?: string; code?: unknown } };
    if (body.error?.message) message = body.error.message;
    if (body.error?.code != null) code = String(body.error.code);
  } catch {
    // Not JSON: keep the status line.
  }
  return new ApiError(response.status, message, code);
}

/** fetch with the stored key; on 401 asks for a key once and retries. Throws UnreachableError or
 * ApiError; returns only successful responses. */
export async function request(
  path: string,
  init: { method?: string; body?: unknown; signal?: AbortSignal } = {},
): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(path, {
        method: init.method ?? (init.body === undefined ? "GET" : "POST"),
        headers: headers(init.body !== undefined),
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: init.signal,
      });
    } catch (error) {
      if (init.signal?.aborted) throw error;
      throw new UnreachableError(path);
    }
    if (response.ok) return response;
    const failure = await errorOf(response);
    if (response.status === 401 && attempt === 0) {
      const key = await askForKey(failure.message);
      if (key) {
        storeApiKey(key);
        continue;
      }
    }
    throw failure;
  }
}

export async function getJson<T>(path: string): Promise<T> {
  return (await (await request(path)).json()) as T;
}

export async function postJson<T>(path: string, body: unknown): Promise<T> {
  return (await (await request(path, { body })).json()) as T;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
