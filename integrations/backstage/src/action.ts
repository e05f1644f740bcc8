// The scaffolder action berth:request: files a request for a namespace, a project or an
// environment of a project with Berth (POST /api/v1/requests/), as the signed-in person when
// the template hands it their Berth token as the secret `berthToken`, else with berth.token;
// then, if asked to wait, follows it until it is ready, and fails the step with Berth's
// words when it is rejected, cancelled, returned or failed. A request that waits for people
// (an approver, or a pull request's reviewer) ends the step at once with its page's address.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import { createTemplateAction } from '@backstage/plugin-scaffolder-node';

import { BerthClient, type BerthConfig, type RequestCreate, type RequestDetail, type RequestKind } from './berth';

export const ACTION_ID = 'berth:request';

/** What each kind's payload holds (Berth's tenants/payloads/namespaces.py; docs/api.md). */
export const PAYLOAD_FIELDS: Record<RequestKind, readonly string[]> = {
  namespace: ['app', 'tier', 'cluster', 'cpu', 'memory', 'storage'],
  project: ['app', 'engine', 'cluster', 'tiers'],
  environment: ['project', 'tier', 'cluster', 'cpu', 'memory', 'storage'],
};
const ALL_FIELDS = [...new Set(Object.values(PAYLOAD_FIELDS).flat())];

/** Request states (Berth's tenants/choices.py RequestState) by what the action does next. */
const DONE = new Set(['ready']);
const REFUSED = new Set(['rejected', 'cancelled', 'failed', 'returned']);
const WAITING_ON_PEOPLE = new Set(['submitted', 'awaiting_merge']);
const MOVING = new Set(['approved', 'provisioning']);

export const DEFAULT_TIMEOUT_SECONDS = 600;

export type BerthRequestInput = {
  kind: RequestKind;
  tenant: string;
  app?: string;
  project?: string;
  tier?: string;
  tiers?: string[];
  engine?: string;
  cluster?: string;
  cpu?: string | number;
  memory?: string | number;
  storage?: string | number;
  wait?: boolean;
  timeoutSeconds?: number;
};

export type BerthRequestActionOptions = {
  /** Berth's address and token, or a function reading them (app-config may be reloaded). */
  berth: BerthConfig | (() => BerthConfig);
  /** Between two reads of a request while waiting; 2 s unless a test says otherwise. */
  pollIntervalMs?: number;
};

/** The body the action sends for an input: only the fields of the input's kind. */
export function requestBody(input: BerthRequestInput): RequestCreate {
  const fields = PAYLOAD_FIELDS[input.kind];
  if (!fields) {
    throw new Error(`kind must be one of ${Object.keys(PAYLOAD_FIELDS).join(', ')}, not ${input.kind}`);
  }
  const given = input as Record<string, unknown>;
  const stray = ALL_FIELDS.filter((field) => !fields.includes(field) && isGiven(given[field]));
  if (stray.length) {
    throw new Error(`${stray.join(', ')} ${stray.length > 1 ? 'do' : 'does'} not apply to a ${input.kind} request`);
  }
  const payload: Record<string, string | string[]> = {};
  for (const field of fields) {
    const value = given[field];
    if (isGiven(value)) payload[field] = typeof value === 'number' ? String(value) : (value as string | string[]);
  }
  return { tenant: input.tenant, kind: input.kind, payload };
}

function isGiven(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '' && !(Array.isArray(value) && !value.length);
}

/** Same task, same body: the same key, so a retried step gets Berth's first answer back. */
function idempotencyKey(taskId: string, body: RequestCreate): string {
  const digest = createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 32);
  return `backstage-${taskId}-${digest}`.slice(0, 255);
}

function waitingFor(request: RequestDetail): string {
  if (request.state === 'awaiting_merge') {
    return `its pull request to be merged${request.pull_request?.url ? ` (${request.pull_request.url})` : ''}`;
  }
  const who = (request.approver_role || 'an approver').replace(/_/g, ' ');
  const count = request.approvals_required > 1 ? `${request.approvals_required} approvals by` : 'approval by';
  return `${count} ${who}${request.policy_rule ? ` (rule ${request.policy_rule})` : ''}`;
}

export function createBerthRequestAction(options: BerthRequestActionOptions) {
  const pollIntervalMs = options.pollIntervalMs ?? 2000;
  const berthConfig = typeof options.berth === 'function' ? options.berth : () => options.berth as BerthConfig;

  return createTemplateAction({
    id: ACTION_ID,
    description:
      "Asks Berth for a namespace, an application project or a project's environment, and waits until it is ready.",
    examples: [
      {
        description: 'A dev namespace of the tenant payments',
        example: [
          'steps:',
          '  - id: berth',
          '    name: Ask Berth',
          `    action: ${ACTION_ID}`,
          '    input:',
          '      kind: namespace',
          '      tenant: payments',
          '      app: shop',
          '      tier: dev',
          '      cluster: sandbox',
          "      cpu: '1'",
          '      memory: 2Gi',
        ].join('\n'),
      },
    ],
    schema: {
      input: {
        kind: (z) => z.enum(['namespace', 'project', 'environment']).describe('What to ask Berth for'),
        tenant: (z) => z.string().describe("The tenant's slug"),
        app: (z) => z.string().optional().describe('namespace, project: the application name (a DNS label)'),
        project: (z) => z.string().optional().describe('environment: the project it belongs to'),
        tier: (z) => z.string().optional().describe('namespace, environment: the tier (dev, staging, prod, …)'),
        tiers: (z) => z.array(z.string()).optional().describe("project: its tiers (Berth's default: dev, staging, prod)"),
        engine: (z) =>
          z.enum(['argocd', 'argocd_kargo', 'flux']).optional().describe('project: the GitOps engine'),
        cluster: (z) => z.string().optional().describe("The cluster's name"),
        // A quantity as a form gives it ('1') or as a template may render it (a number): both
        // are sent as the string Berth parses.
        cpu: (z) => z.union([z.string(), z.number()]).optional().describe('namespace, environment: CPU quota, e.g. 500m or 2'),
        memory: (z) => z.union([z.string(), z.number()]).optional().describe('namespace, environment: memory quota, e.g. 2Gi'),
        storage: (z) => z.union([z.string(), z.number()]).optional().describe('namespace, environment: storage quota, e.g. 10Gi'),
        wait: (z) =>
          z.boolean().optional().describe('Wait until the request is ready (default true); a request awaiting approval ends the step at once'),
        timeoutSeconds: (z) =>
          z.number().int().positive().optional().describe(`How long to wait for ready (default ${DEFAULT_TIMEOUT_SECONDS})`),
      },
      output: {
        requestId: (z) => z.number().describe("The request's id in Berth"),
        state: (z) => z.string().describe('Its state when the step ended (ready, submitted, …)'),
        url: (z) => z.string().describe("The request's page in Berth"),
        namespace: (z) => z.string().optional().describe('The namespace it creates, when it creates one'),
        namespaces: (z) => z.array(z.string()).optional().describe('Every namespace it creates (a project: one per tier)'),
      },
    },
    async handler(ctx) {
      const input = ctx.input as BerthRequestInput;
      const body = requestBody(input);
      const config = berthConfig();
      const personal = ctx.secrets?.berthToken?.trim();
      const client = new BerthClient(config.baseUrl, personal || config.token);
      const wait = input.wait ?? true;
      const timeoutMs = (input.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
      ctx.logger.info(
        `Asking Berth (${client.baseUrl}) for a ${body.kind} of ${body.tenant} ` +
          (personal ? 'as the signed-in person (their Berth token)' : "with Backstage's token (berth.token)"),
      );

      const key = idempotencyKey(ctx.task.id, body);
      const created = await ctx.checkpoint({
        key: `berth-request-${key}`,
        fn: async () => {
          const answer = await client.submit(body, key);
          return { id: answer.id, state: answer.state };
        },
      });
      const url = client.requestPage(created.id);
      ctx.output('requestId', created.id);
      ctx.output('url', url);
      ctx.logger.info(`Berth request #${created.id}: ${created.state} (${url})`);

      let request = await client.request(created.id);
      const deadline = Date.now() + timeoutMs;
      while (wait && MOVING.has(request.state)) {
        if (Date.now() >= deadline) {
          ctx.output('state', request.state);
          throw new Error(
            `Berth request #${created.id} is still ${request.state_label.toLowerCase()} after ` +
              `${timeoutMs / 1000} s${request.wait_reason ? `: ${request.wait_reason}` : ''} (${url})`,
          );
        }
        await sleep(Math.min(pollIntervalMs, Math.max(deadline - Date.now(), 0)), undefined, {
          signal: ctx.signal,
        });
        const previous = request.state;
        request = await client.request(created.id);
        if (request.state !== previous) {
          ctx.logger.info(`Berth request #${created.id}: ${request.state}`);
        }
      }
      ctx.output('state', request.state);

      if (REFUSED.has(request.state)) {
        throw new Error(
          `Berth request #${created.id} is ${request.state_label.toLowerCase()}: ` +
            `${request.status_message || 'Berth gave no reason'} (${url})`,
        );
      }
      if (!DONE.has(request.state) && !WAITING_ON_PEOPLE.has(request.state) && !MOVING.has(request.state)) {
        throw new Error(`Berth request #${created.id} is ${request.state}, which a new ${body.kind} should never be (${url})`);
      }

      const cluster = body.payload.cluster;
      if (typeof cluster === 'string') {
        try {
          const names = await client.namespacesOf(created.id, body.tenant, cluster);
          ctx.output('namespaces', names);
          if (names.length === 1) ctx.output('namespace', names[0]);
        } catch (error) {
          ctx.logger.warn(`Could not read the namespaces of request #${created.id}: ${(error as Error).message}`);
        }
      }

      if (WAITING_ON_PEOPLE.has(request.state)) {
        ctx.logger.info(`Berth request #${created.id} waits for ${waitingFor(request)}: ${url}`);
      } else if (DONE.has(request.state)) {
        ctx.logger.info(`Berth request #${created.id} is ready`);
      }
    },
  });
}
