// Berth's REST API as the action uses it: its configuration in app-config (berth.baseUrl,
// berth.token), its problem details turned into one readable message, and the three calls
// the action makes (file a request, read it, list the namespaces it created).
import type { Config } from '@backstage/config';

export type BerthConfig = {
  /** Where Berth answers, without a trailing slash (it may have a path: a Berth behind /berth). */
  baseUrl: string;
  /** An API token of a person or service user of Berth (`manage.py create_api_token`). */
  token: string;
};

/** berth.baseUrl and berth.token from app-config; an error naming what is wrong. */
export function readBerthConfig(config: Config): BerthConfig {
  const baseUrl = checkedBaseUrl(config.getString('berth.baseUrl'));
  const token = config.getString('berth.token').trim();
  if (!token) throw new Error('berth.token is empty: set it to a Berth API token');
  return { baseUrl, token };
}

export function checkedBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`berth.baseUrl is not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error(`berth.baseUrl must be an http or https URL, not ${url.protocol}`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new Error('berth.baseUrl must be a plain URL (no query, fragment or user)');
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** RFC 9457 problem detail, as Berth answers every error (docs/api.md, Errors). */
export type Problem = {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  instance?: string;
  errors?: Record<string, string[]>;
};

/** What Berth answered with a status outside 2xx, said as "field: message; …". */
export class BerthApiError extends Error {
  readonly status: number;
  readonly problem: Problem | undefined;

  constructor(action: string, status: number, problem: Problem | undefined, text: string) {
    super(`${action}: ${status} ${describeProblem(problem, text)}`);
    this.name = 'BerthApiError';
    this.status = status;
    this.problem = problem;
  }
}

export function describeProblem(problem: Problem | undefined, text = ''): string {
  if (!problem) return text.trim().slice(0, 300) || '(no body)';
  const fields = Object.entries(problem.errors ?? {}).map(
    ([field, messages]) => `${field}: ${(Array.isArray(messages) ? messages : [messages]).join(' ')}`,
  );
  const title = problem.title ?? '';
  if (fields.length) return `${title} ${fields.join('; ')}`.trim();
  return [title, problem.detail].filter(Boolean).join(' ') || '(no detail)';
}

export type RequestKind = 'namespace' | 'project' | 'environment';

/** The body of POST /api/v1/requests/ (RequestCreateRequest in Berth's schema). */
export type RequestCreate = {
  tenant: string;
  kind: RequestKind;
  payload: Record<string, string | string[]>;
};

/** The fields of RequestDetail the action reads. */
export type RequestDetail = {
  id: number;
  tenant: string;
  kind: string;
  state: string;
  state_label: string;
  status_message: string;
  policy_rule: string;
  approvals_required: number;
  approver_role: string;
  wait_reason: string;
  pull_request: { url?: string } | null;
};

type NamespacePage = {
  next: string | null;
  results: { name: string; request: number | null }[];
};

export class BerthClient {
  readonly baseUrl: string;
  readonly #token: string;

  constructor(baseUrl: string, token: string) {
    this.baseUrl = checkedBaseUrl(baseUrl);
    this.#token = token;
  }

  /** The request's page in Berth's web interface (tenants/urls.py: requests/<pk>/). */
  requestPage(id: number): string {
    return `${this.baseUrl}/requests/${id}/`;
  }

  async submit(body: RequestCreate, idempotencyKey: string): Promise<RequestDetail> {
    return this.#call<RequestDetail>('Berth refused the request', 'POST', '/api/v1/requests/', {
      body,
      headers: { 'Idempotency-Key': idempotencyKey },
    });
  }

  async request(id: number): Promise<RequestDetail> {
    return this.#call<RequestDetail>(`Berth did not show request #${id}`, 'GET', `/api/v1/requests/${id}/`);
  }

  /** The namespaces request `id` created or will create, read page by page from the
   * tenant's namespaces on the cluster (each names the request that created it). */
  async namespacesOf(id: number, tenant: string, cluster: string): Promise<string[]> {
    const names: string[] = [];
    for (let page = 1; page <= 20; page += 1) {
      const query = new URLSearchParams({ tenant, cluster, page: String(page), page_size: '200' });
      const answer = await this.#call<NamespacePage>(
        'Berth did not list the namespaces',
        'GET',
        `/api/v1/namespaces/?${query}`,
      );
      names.push(...answer.results.filter((row) => row.request === id).map((row) => row.name));
      // Pages are asked by number here: `next` is an address Berth builds from what the
      // proxy told it, and the token goes to berth.baseUrl only.
      if (!answer.next) break;
    }
    return names;
  }

  async #call<T>(
    failure: string,
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          Accept: 'application/json',
          Authorization: `Bearer ${this.#token}`,
          ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...options.headers,
        },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        redirect: 'manual',
      });
    } catch (error) {
      throw new Error(`${failure}: could not reach Berth at ${this.baseUrl} (${reason(error)})`);
    }
    const text = await response.text();
    if (!response.ok) {
      throw new BerthApiError(failure, response.status, parsedProblem(text), text);
    }
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new Error(`${failure}: Berth answered ${response.status} with a body that is not JSON`);
    }
  }
}

function parsedProblem(text: string): Problem | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Problem) : undefined;
  } catch {
    return undefined;
  }
}

function reason(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}
