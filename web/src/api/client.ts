// The one HTTP client of the console: every /_ui/api call goes through
// `api()`. It sends and reads JSON, keeps the session cookie (same origin),
// adds the CSRF header on mutating calls, turns error bodies into ApiError
// with the server's message, and sends the user to sign-in on a 401.

export const API_BASE = '/_ui/api';

/** An error answer of the gateway (`{"error": {"message", "type"}}`). */
export class ApiError extends Error {
  readonly status: number;
  readonly type: string;
  /** The whole parsed body (e.g. `retry_after_secs` of a 423). */
  readonly body: unknown;

  constructor(status: number, type: string, message: string, body: unknown) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.type = type;
    this.body = body;
  }
}

/** The value of a cookie readable by scripts, or null. */
export function readCookie(name: string): string | null {
  for (const part of document.cookie.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      return decodeURIComponent(part.slice(eq + 1).trim());
    }
  }
  return null;
}

type UnauthorizedHandler = (returnTo: string) => void;

function defaultUnauthorized(returnTo: string): void {
  window.location.assign(`/_ui/login?next=${encodeURIComponent(returnTo)}`);
}

let onUnauthorized: UnauthorizedHandler = defaultUnauthorized;

/** Where a 401 sends the user (the router installs a client-side navigation). */
export function setUnauthorizedHandler(handler: UnauthorizedHandler | null): void {
  onUnauthorized = handler ?? defaultUnauthorized;
}

/** The path inside the app (without `/_ui`) the user is on, to come back to. */
export function currentAppPath(): string {
  const { pathname, search } = window.location;
  const inner = pathname.startsWith('/_ui') ? pathname.slice(4) || '/' : pathname;
  return inner + search;
}

const AUTH_PAGES = ['/login', '/setup'];

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  query?: Record<string, string | number | boolean | null | undefined>;
  /** A 401 is the answer itself (bad password), not "signed out". */
  allow401?: boolean;
  signal?: AbortSignal;
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The URL of an API path with its query string. */
export function apiUrl(path: string, query?: RequestOptions['query']): string {
  let url = API_BASE + path;
  if (query) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
    }
    const qs = params.toString();
    if (qs) url += `?${qs}`;
  }
  return url;
}

/** Headers for a call: JSON, and the CSRF token on mutating methods. */
export function requestHeaders(method: string, hasBody: boolean): Headers {
  const headers = new Headers({ Accept: 'application/json' });
  if (hasBody) headers.set('Content-Type', 'application/json');
  if (MUTATING.has(method)) {
    const token = readCookie('csrf_token');
    if (token) headers.set('X-CSRF-Token', token);
  }
  return headers;
}

/** Read an error answer into an ApiError (the server's message when it sent one). */
export async function toApiError(res: Response): Promise<ApiError> {
  let body: unknown = null;
  const text = await res.text().catch(() => '');
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  const err = (body as { error?: { message?: unknown; type?: unknown } } | null)?.error;
  const message =
    typeof err?.message === 'string' && err.message
      ? err.message
      : `${res.status} ${res.statusText || 'error'}`.trim();
  const type = typeof err?.type === 'string' ? err.type : 'http_error';
  return new ApiError(res.status, type, message, body);
}

/** Call `/_ui/api{path}` and return its JSON body. */
export async function api<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const method = opts.method ?? 'GET';
  const hasBody = opts.body !== undefined;
  let res: Response;
  try {
    res = await fetch(apiUrl(path, opts.query), {
      method,
      credentials: 'same-origin',
      headers: requestHeaders(method, hasBody),
      body: hasBody ? JSON.stringify(opts.body) : undefined,
      signal: opts.signal,
    });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError(0, 'network_error', 'The gateway could not be reached. Check that it is running.', null);
  }
  if (!res.ok) {
    const error = await toApiError(res);
    if (res.status === 401 && !opts.allow401) {
      const here = currentAppPath();
      if (!AUTH_PAGES.some((p) => here.startsWith(p))) onUnauthorized(here);
    }
    throw error;
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A readable message for anything thrown. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/** True when the error is "this call does not exist on this gateway (yet)". */
export function isNotFound(e: unknown): boolean {
  return e instanceof ApiError && (e.status === 404 || e.status === 405);
}
