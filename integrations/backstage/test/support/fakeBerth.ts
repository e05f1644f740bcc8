// A small HTTP server that answers the action's calls as Berth does (node:http on 127.0.0.1),
// holding every exchange to Berth's OpenAPI description when it has one: a body the action
// sends that the description refuses, or an answer of this stand-in that it does not
// describe, is recorded in `contractErrors` (and a refused body is answered 400, as Berth
// would). Requests move through the states a test gives them, one state per read.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Contract } from './openapi';

export const STATE_LABELS: Record<string, string> = {
  submitted: 'Awaiting approval',
  approved: 'Approved',
  rejected: 'Rejected',
  cancelled: 'Cancelled',
  provisioning: 'Provisioning',
  ready: 'Ready',
  failed: 'Failed',
  decommissioning: 'Decommissioning',
  decommissioned: 'Decommissioned',
  awaiting_merge: 'Awaiting merge',
  returned: 'Returned (pull request closed)',
};

/** What the stand-in's catalog-info.yaml answers: one Group. */
export const CATALOG_YAML = 'apiVersion: backstage.io/v1alpha1\nkind: Group\nmetadata:\n  name: payments\nspec:\n  type: team\n  children: []\n';

type Payload = Record<string, unknown>;
type Body = { tenant: string; kind: string; payload: Payload };

export type Scenario = {
  /** The states the request shows: the first in the answer to POST, then one more per read. */
  states: string[];
  statusMessage?: string;
  approverRole?: 'platform_admin' | 'tenant_owner';
  policyRule?: string;
};
export type Refusal = { status: number; problem: Record<string, unknown> };

export type Exchange = {
  method: string;
  path: string;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  body: unknown;
  status: number;
};

type Filed = { id: number; body: Body; requester: string; scenario: Scenario; step: number; created: string };

export class FakeBerth {
  readonly exchanges: Exchange[] = [];
  readonly contractErrors: string[] = [];
  readonly tokens = new Map<string, string>([['berth_backstage_token', 'backstage']]);
  /** What the next POST /api/v1/requests/ gets. */
  onSubmit: (body: Body) => Scenario | Refusal = () => ({ states: ['approved', 'provisioning', 'ready'] });
  catalog = CATALOG_YAML;
  catalogEtag = '"catalog-1"';
  /** Paths answered with a redirect: path → Location. */
  readonly redirects = new Map<string, string>();

  readonly #server: Server;
  readonly #contract: Contract | undefined;
  readonly #filed = new Map<number, Filed>();
  #nextId = 41;
  url = '';

  private constructor(contract: Contract | undefined, readonly prefix: string) {
    this.#contract = contract;
    this.#server = createServer((req, res) => {
      this.#answer(req, res).catch((error: Error) => {
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(error.stack));
      });
    });
  }

  /** `prefix`: where Berth is mounted, e.g. '/berth' behind a proxy ('' at the root). */
  static async start(contract?: Contract, prefix = ''): Promise<FakeBerth> {
    const fake = new FakeBerth(contract, prefix);
    await new Promise<void>((resolve) => fake.#server.listen(0, '127.0.0.1', resolve));
    const { port } = fake.#server.address() as AddressInfo;
    fake.url = `http://127.0.0.1:${port}${prefix}`;
    return fake;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  calls(method: string, path: string): Exchange[] {
    return this.exchanges.filter((e) => e.method === method && e.path === path);
  }

  async #answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://berth.invalid');
    const method = req.method ?? 'GET';
    const exchange: Exchange = {
      method,
      path: url.pathname.startsWith(this.prefix) ? url.pathname.slice(this.prefix.length) : url.pathname,
      authorization: req.headers.authorization,
      idempotencyKey: req.headers['idempotency-key'] as string | undefined,
      body: text ? safeJson(text) : undefined,
      status: 0,
    };
    this.exchanges.push(exchange);
    const send = (status: number, body: unknown, template: string, headers: Record<string, string> = {}) => {
      exchange.status = status;
      const problem = status >= 400;
      const type = problem ? 'application/problem+json' : 'application/json';
      this.#checkAnswer(method, template, status, type, body);
      res.writeHead(status, { 'Content-Type': type, ...headers }).end(JSON.stringify(body));
    };
    const problem = (status: number, title: string, detail: string, template: string, extra: Payload = {}) =>
      send(status, { type: `/api/problems/${status}`, title, status, detail, instance: url.pathname, ...extra }, template);

    const path = exchange.path;
    if (!url.pathname.startsWith(this.prefix) || !path.startsWith('/')) {
      return problem(404, 'Not found.', 'No such page.', path);
    }
    const location = this.redirects.get(path);
    if (location) {
      exchange.status = 302;
      res.writeHead(302, { Location: location }).end();
      return;
    }
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const user = bearer ? this.tokens.get(bearer) : undefined;
    const template = templateOf(path);
    if (!user) {
      return problem(401, 'Authentication failed.', 'Invalid or expired token.', template);
    }

    if (method === 'POST' && path === '/api/v1/requests/') {
      const checked = this.#contract?.requestBody('POST', '/api/v1/requests/', exchange.body);
      if (checked && !checked.ok) {
        this.contractErrors.push(`POST /api/v1/requests/ body ${JSON.stringify(exchange.body)}: ${checked.errors}`);
        return problem(400, 'Your request is not valid.', checked.errors, template, { errors: { body: [checked.errors] } });
      }
      const body = exchange.body as Body;
      const outcome = this.onSubmit(body);
      if ('problem' in outcome) {
        return send(outcome.status, { instance: url.pathname, ...outcome.problem }, template);
      }
      const filed: Filed = { id: this.#nextId++, body, requester: user, scenario: outcome, step: 0, created: new Date().toISOString() };
      this.#filed.set(filed.id, filed);
      return send(201, this.#detail(filed), template, { Location: `${this.prefix}/api/v1/requests/${filed.id}/` });
    }
    const one = /^\/api\/v1\/requests\/(\d+)\/$/.exec(path);
    if (method === 'GET' && one) {
      const filed = this.#filed.get(Number(one[1]));
      if (!filed || filed.requester !== user) return problem(404, 'Not found.', 'No such request.', template);
      filed.step = Math.min(filed.step + 1, filed.scenario.states.length - 1);
      return send(200, this.#detail(filed), template);
    }
    if (method === 'GET' && path === '/api/v1/namespaces/') {
      const pageSize = Number(url.searchParams.get('page_size') ?? 50);
      const page = Number(url.searchParams.get('page') ?? 1);
      const rows = this.#namespaces().filter(
        (row) =>
          (!url.searchParams.has('tenant') || row.tenant === url.searchParams.get('tenant')) &&
          (!url.searchParams.has('cluster') || row.cluster === url.searchParams.get('cluster')),
      );
      const next = rows.length > page * pageSize ? `${this.url}/api/v1/namespaces/?page=${page + 1}` : null;
      const previous = page > 1 ? `${this.url}/api/v1/namespaces/?page=${page - 1}` : null;
      return send(200, { count: rows.length, next, previous, results: rows.slice((page - 1) * pageSize, page * pageSize) }, template);
    }
    if (method === 'GET' && path === '/api/v1/backstage/catalog-info.yaml') {
      exchange.status = req.headers['if-none-match'] === this.catalogEtag ? 304 : 200;
      if (exchange.status === 304) {
        res.writeHead(304, { ETag: this.catalogEtag }).end();
      } else {
        res.writeHead(200, { 'Content-Type': 'application/yaml', ETag: this.catalogEtag }).end(this.catalog);
      }
      return;
    }
    return problem(404, 'Not found.', 'No such page.', template);
  }

  #checkAnswer(method: string, template: string, status: number, type: string, body: unknown): void {
    if (!this.#contract) return;
    let checked;
    try {
      checked = this.#contract.response(method, template, status, type, body);
    } catch (error) {
      checked = { ok: false, errors: (error as Error).message };
    }
    if (!checked.ok) this.contractErrors.push(`${method} ${template} ${status}: ${checked.errors}`);
  }

  #detail(filed: Filed) {
    const state = filed.scenario.states[filed.step];
    const { scenario } = filed;
    return {
      id: filed.id,
      tenant: filed.body.tenant,
      kind: filed.body.kind,
      state,
      state_label: STATE_LABELS[state] ?? state,
      status_message: scenario.statusMessage ?? '',
      payload: filed.body.payload,
      requester: filed.requester,
      policy_rule: scenario.policyRule ?? 'dev-and-review-auto-approve',
      approvals_required: 1,
      approver_role: scenario.approverRole ?? 'platform_admin',
      waiting_since: null,
      next_try_at: null,
      wait_reason: '',
      conditions: [],
      created_at: filed.created,
      updated_at: new Date().toISOString(),
      plan: null,
      plan_error: '',
      approvals: [],
      comments: [],
      history: [],
      permissions: { may_decide: false, may_cancel: state === 'submitted', may_retry: false },
      pull_request: null,
    };
  }

  /** A namespace per tier each filed request asks for, and one of somebody else's request. */
  #namespaces() {
    const rows = [namespaceRow(7, 'payments-legacy-dev', 'payments', 'dev', 'sandbox', 3, 'active')];
    for (const filed of this.#filed.values()) {
      const { tenant, kind, payload } = filed.body;
      const app = (kind === 'environment' ? payload.project : payload.app) as string;
      const tiers = kind === 'project' ? ((payload.tiers as string[]) ?? ['dev', 'staging', 'prod']) : [payload.tier as string];
      const ready = filed.scenario.states[filed.step] === 'ready';
      for (const tier of tiers) {
        rows.push(namespaceRow(100 + rows.length, `${tenant}-${app}-${tier}`, tenant, tier, payload.cluster as string, filed.id, ready ? 'active' : 'requested'));
      }
    }
    return rows;
  }
}

function namespaceRow(id: number, name: string, tenant: string, tier: string, cluster: string, request: number, state: string) {
  return {
    id,
    name,
    tenant,
    tier,
    cluster,
    project: null,
    project_name: null,
    state,
    quota: { cpu: '1', memory: '2Gi', storage: '10Gi', cpu_millis: 1000, memory_mib: 2048, storage_gib: 10 },
    labels: {},
    expires_at: null,
    request,
    drift: null,
    drift_checked_at: null,
    conditions: [],
    definition: { tier_version: 1, bundle_version: 1, current: true, behind: [] },
    sleep: { mode: 'tier', schedule: null, asleep: false, awake_until: null, next_change: null, idle_hours: null, by: null },
    created_at: new Date().toISOString(),
  };
}

/** The description's path for a concrete one: /api/v1/requests/41/ → /api/v1/requests/{id}/. */
function templateOf(path: string): string {
  return path.replace(/^\/api\/v1\/requests\/\d+\/$/, '/api/v1/requests/{id}/');
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
