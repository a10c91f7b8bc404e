import { errorInWords, type ErrorBody } from './words';

/** A refused or failed call, already in words; `code` and `reason` are the envelope's. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    readonly reason: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

export interface ApiReply<T> {
  status: number;
  body: T;
}

/**
 * The gateway API as the page calls it: the bearer in `Authorization`, same-origin (the browser adds `Origin` to
 * writes, which the browser routes check), JSON both ways. Errors become `ApiError` with the words to show.
 */
export class ApiClient {
  constructor(private readonly token: string) {}

  async call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiReply<T>> {
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        headers: { Authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
        credentials: 'omit',
      });
    } catch {
      throw new ApiError(0, undefined, undefined, errorInWords(0, undefined));
    }
    const text = await response.text();
    const parsed: unknown = text ? safeJson(text) : undefined;
    if (!response.ok) {
      const envelope = parsed as ErrorBody | undefined;
      throw new ApiError(response.status, envelope?.error?.code, envelope?.error?.details?.reason, errorInWords(response.status, envelope));
    }
    return { status: response.status, body: parsed as T };
  }

  get<T>(path: string): Promise<T> {
    return this.call<T>('GET', path).then((r) => r.body);
  }

  post<T>(path: string, body: unknown = {}, headers?: Record<string, string>): Promise<ApiReply<T>> {
    return this.call<T>('POST', path, body, headers);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
