// Errors in OpenAI's shape ({"error": {message, type, param, code}}): one class the routes throw,
// and the Fastify error handler that turns validation, parse and size failures into it.
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";

export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "not_found_error"
  | "server_overloaded"
  | "vm_error"
  | "server_error";

export interface OpenAIErrorBody {
  error: { message: string; type: ErrorType; param: string | null; code: string | null };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: ErrorType = "invalid_request_error",
    readonly param: string | null = null,
    readonly code: string | null = null,
    /** Extra response headers, e.g. Retry-After on 503. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  body(): OpenAIErrorBody {
    return {
      error: { message: this.message, type: this.type, param: this.param, code: this.code },
    };
  }
}

export const badRequest = (message: string, param: string | null = null, code?: string) =>
  new ApiError(400, message, "invalid_request_error", param, code ?? null);

/** The JSON path of an Ajv error as a parameter name: "/messages/0/role" → "messages[0].role". */
function paramOf(instancePath: string, missing?: string): string | null {
  const parts = instancePath.split("/").filter(Boolean);
  if (missing) parts.push(missing);
  if (parts.length === 0) return null;
  return parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

/** Maps any error a route or Fastify raised to an OpenAI-shaped reply. */
export function toApiError(err: FastifyError | ApiError | Error): ApiError {
  if (err instanceof ApiError) return err;
  const fe = err as FastifyError;
  if (fe.validation && fe.validation.length > 0) {
    const v = fe.validation[0]!;
    const missing = (v.params as { missingProperty?: string }).missingProperty;
    const param = paramOf(v.instancePath ?? "", missing);
    const what = missing
      ? `missing required parameter '${param}'`
      : `invalid value for '${param ?? "body"}': ${v.message ?? "does not match the schema"}`;
    return badRequest(what, param, missing ? "missing_required_parameter" : "invalid_value");
  }
  switch (fe.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return badRequest(`the request body is not valid JSON: ${fe.message}`, null, "invalid_json");
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new ApiError(
        413,
        "the request body is too large",
        "invalid_request_error",
        null,
        "body_too_large",
      );
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new ApiError(
        415,
        `unsupported content type: ${fe.message}`,
        "invalid_request_error",
        null,
        "unsupported_media_type",
      );
  }
  if (typeof fe.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500)
    return new ApiError(fe.statusCode, fe.message);
  return new ApiError(500, `the server failed: ${err.message}`, "server_error");
}

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  return reply.code(err.status).headers(err.headers).send(err.body());
}

export function errorHandler(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  const api = toApiError(err);
  if (api.status >= 500) reply.log.error(err);
  void sendError(reply, api);
}
