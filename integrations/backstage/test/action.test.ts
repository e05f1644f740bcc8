// berth:request over HTTP against a stand-in that answers as Berth does, every body it sends
// and every answer it reads held to Berth's own OpenAPI description (BERTH_OPENAPI).
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';

import { createBerthRequestAction, PAYLOAD_FIELDS, requestBody } from '../src/action';
import { actionContext } from './support/context';
import { FakeBerth } from './support/fakeBerth';
import { contract, NO_OPENAPI } from './support/openapi';

const TOKEN = 'berth_backstage_token';

function run(fake: FakeBerth, input: Record<string, unknown>, options: { secrets?: Record<string, string> } = {}) {
  const action = createBerthRequestAction({ berth: { baseUrl: fake.url, token: TOKEN }, pollIntervalMs: 20 });
  const context = actionContext(input, options);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { ...context, done: action.handler(context.ctx as any) };
}

const DEV_NAMESPACE = {
  kind: 'namespace',
  tenant: 'payments',
  app: 'shop',
  tier: 'dev',
  cluster: 'sandbox',
  cpu: '500m',
  memory: '1Gi',
};

describe('berth:request against Berth\'s OpenAPI description', { skip: NO_OPENAPI }, () => {
  let fake: FakeBerth;

  before(async () => {
    fake = await FakeBerth.start(contract());
  });
  after(async () => {
    await fake?.close();
  });
  beforeEach(() => {
    fake.exchanges.length = 0;
    fake.contractErrors.length = 0;
  });

  test("each kind's payload holds the fields the description names for it", () => {
    const described = String((contract().component('RequestCreateRequest').properties as Record<string, { description: string }>).payload.description);
    for (const [kind, fields] of Object.entries(PAYLOAD_FIELDS)) {
      const said = new RegExp(`(?:^|[;.] )${kind}: ([^;.]+)`).exec(described);
      assert.ok(said, `the description of payload does not say what a ${kind} holds: ${described}`);
      const names = said[1].replace(/\([^)]*\)/g, '').split(',').map((name) => name.trim()).filter(Boolean);
      assert.deepEqual([...fields].sort(), names.sort(), kind);
    }
  });

  test('the bodies it builds for each kind are what POST /api/v1/requests/ takes', () => {
    const inputs = [
      DEV_NAMESPACE,
      { kind: 'namespace', tenant: 'payments', app: 'shop', tier: 'staging', cluster: 'sandbox', cpu: '1', memory: '2Gi', storage: '10Gi' },
      { kind: 'project', tenant: 'payments', app: 'cart', engine: 'argocd_kargo', cluster: 'sandbox', tiers: ['dev', 'prod'] },
      { kind: 'environment', tenant: 'payments', project: 'cart', tier: 'staging', cluster: 'sandbox', cpu: '1', memory: '1Gi' },
    ];
    for (const input of inputs) {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const body = requestBody(input as any);
      const checked = contract().requestBody('POST', '/api/v1/requests/', body);
      assert.ok(checked.ok, `${JSON.stringify(body)}: ${checked.errors}`);
      assert.deepEqual(Object.keys(body.payload).sort(), Object.keys(input).filter((k) => !['kind', 'tenant'].includes(k)).sort());
    }
  });

  test('the description is no rubber stamp: it refuses a wrong body and a wrong answer', () => {
    const body = contract().requestBody('POST', '/api/v1/requests/', { tenant: 'payments', kind: 'namespaces', payload: {} });
    assert.ok(!body.ok);
    assert.match(body.errors, /kind must be equal to one of the allowed values/);
    const answer = contract().response('GET', '/api/v1/requests/{id}/', 200, 'application/json', { id: 1, state: 'ready' });
    assert.ok(!answer.ok);
    assert.match(answer.errors, /must have required property 'status_message'/);
    const problem = contract().response('POST', '/api/v1/requests/', 400, 'application/problem+json', { title: 'x', errors: { app: 'not a list' } });
    assert.ok(!problem.ok);
  });

  test('a field of another kind is refused before Berth is asked', async () => {
    const { done } = run(fake, { ...DEV_NAMESPACE, engine: 'flux' });
    await assert.rejects(done, /engine does not apply to a namespace request/);
    assert.equal(fake.exchanges.length, 0);
  });

  test('it files the request with the token, waits until ready and says where it is', async () => {
    const { done, outputs, logs } = run(fake, DEV_NAMESPACE);
    await done;

    const [posted] = fake.calls('POST', '/api/v1/requests/');
    assert.deepEqual(posted.body, {
      tenant: 'payments',
      kind: 'namespace',
      payload: { app: 'shop', tier: 'dev', cluster: 'sandbox', cpu: '500m', memory: '1Gi' },
    });
    assert.equal(posted.status, 201);
    assert.equal(posted.authorization, `Bearer ${TOKEN}`);
    assert.match(posted.idempotencyKey ?? '', /^backstage-task-1-[0-9a-f]{32}$/);
    const id = outputs.requestId as number;
    // approved (the answer to POST), provisioning, ready: read until ready, then no more.
    assert.equal(fake.calls('GET', `/api/v1/requests/${id}/`).length, 2);
    assert.deepEqual(outputs, {
      requestId: id,
      url: `${fake.url}/requests/${id}/`,
      state: 'ready',
      namespaces: ['payments-shop-dev'],
      namespace: 'payments-shop-dev',
    });
    assert.deepEqual(fake.contractErrors, []);
    assert.ok(fake.exchanges.every((e) => e.authorization === `Bearer ${TOKEN}`));
    assert.ok(!JSON.stringify(logs).includes(TOKEN), 'the token is never logged');
    assert.ok(logs.some((l) => l.message.includes("with Backstage's token (berth.token)")));
  });

  test('a request that waits for an approver ends the step at once, with its page', async () => {
    fake.onSubmit = () => ({ states: ['submitted'], approverRole: 'tenant_owner', policyRule: 'staging-needs-tenant-owner' });
    const { done, outputs, logs } = run(fake, { ...DEV_NAMESPACE, tier: 'staging' });
    await done;

    const id = outputs.requestId as number;
    assert.equal(outputs.state, 'submitted');
    assert.equal(outputs.url, `${fake.url}/requests/${id}/`);
    assert.equal(outputs.namespace, 'payments-shop-staging');
    assert.equal(fake.calls('GET', `/api/v1/requests/${id}/`).length, 1);
    assert.ok(
      logs.some((l) => l.message.includes('waits for approval by tenant owner (rule staging-needs-tenant-owner)')),
      JSON.stringify(logs),
    );
    assert.deepEqual(fake.contractErrors, []);
  });

  test('wait: false ends the step once the request is filed', async () => {
    fake.onSubmit = () => ({ states: ['approved', 'provisioning', 'ready'] });
    const { done, outputs } = run(fake, { ...DEV_NAMESPACE, app: 'nowait', wait: false });
    await done;
    assert.equal(outputs.state, 'provisioning');
    assert.equal(fake.calls('GET', `/api/v1/requests/${outputs.requestId}/`).length, 1);
    assert.deepEqual(fake.contractErrors, []);
  });

  test("Berth's problem detail fails the step, field by field", async () => {
    fake.onSubmit = () => ({
      status: 400,
      problem: {
        type: '/api/problems/validation-error',
        title: 'Your request is not valid.',
        status: 400,
        detail: 'Invalid fields: payload.app, payload.cpu.',
        errors: {
          'payload.app': ['Enter a valid DNS label: lower-case letters, digits and dashes.'],
          'payload.cpu': ['8 is more than the dev tier allows (4).'],
        },
      },
    });
    const { done } = run(fake, { ...DEV_NAMESPACE, app: 'Shop_1', cpu: '8' });
    await assert.rejects(done, (error: Error) => {
      assert.equal(
        error.message,
        'Berth refused the request: 400 Your request is not valid. ' +
          'payload.app: Enter a valid DNS label: lower-case letters, digits and dashes.; ' +
          'payload.cpu: 8 is more than the dev tier allows (4).',
      );
      return true;
    });
    assert.deepEqual(fake.contractErrors, []);
  });

  test('a refusal without field errors says its detail', async () => {
    fake.onSubmit = () => ({
      status: 403,
      problem: { type: '/api/problems/permission-denied', title: 'You may not do this.', status: 403, detail: 'Viewers cannot make requests; ask a member or owner of the tenant.' },
    });
    const { done } = run(fake, DEV_NAMESPACE);
    await assert.rejects(done, { message: /^Berth refused the request: 403 You may not do this\. Viewers cannot make requests; ask a member or owner of the tenant\.$/ });
    assert.deepEqual(fake.contractErrors, []);
  });

  test('a request that fails while provisioning fails the step with its status message', async () => {
    fake.onSubmit = () => ({ states: ['approved', 'provisioning', 'failed'], statusMessage: 'The cluster refused the ResourceQuota: exceeded.' });
    const { done, outputs } = run(fake, { ...DEV_NAMESPACE, app: 'broken' });
    await assert.rejects(done, (error: Error) => {
      assert.match(error.message, /^Berth request #\d+ is failed: The cluster refused the ResourceQuota: exceeded\. \(http:\/\/127\.0\.0\.1:\d+\/requests\/\d+\/\)$/);
      return true;
    });
    assert.equal(outputs.state, 'failed');
    assert.deepEqual(fake.contractErrors, []);
  });

  test('a request still provisioning at the timeout fails the step, saying so', async () => {
    fake.onSubmit = () => ({ states: ['approved', 'provisioning'] });
    const { done } = run(fake, { ...DEV_NAMESPACE, app: 'slow', timeoutSeconds: 1 });
    await assert.rejects(done, /is still provisioning after 1 s/);
  });

  test("the signed-in person's Berth token, handed as a secret, is the one used", async () => {
    fake.tokens.set('berth_personal', 'dev');
    fake.onSubmit = () => ({ states: ['ready'] });
    const { done, logs } = run(fake, { ...DEV_NAMESPACE, app: 'mine' }, { secrets: { berthToken: 'berth_personal' } });
    await done;
    assert.ok(fake.exchanges.length >= 2);
    assert.ok(fake.exchanges.every((e) => e.authorization === 'Bearer berth_personal'));
    assert.ok(logs.some((l) => l.message.includes('as the signed-in person')));
    assert.ok(!JSON.stringify(logs).includes('berth_personal'));
  });

  test('an unknown token is 401, said as Berth says it', async () => {
    const { done } = run(fake, DEV_NAMESPACE, { secrets: { berthToken: 'berth_revoked' } });
    await assert.rejects(done, { message: /^Berth refused the request: 401 Authentication failed\. Invalid or expired token\.$/ });
    assert.deepEqual(fake.contractErrors, []);
  });
});

describe('berth:request without Berth', () => {
  test('an address where nothing answers is said plainly', async () => {
    const action = createBerthRequestAction({ berth: { baseUrl: 'http://127.0.0.1:9', token: TOKEN } });
    const { ctx } = actionContext(DEV_NAMESPACE);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    await assert.rejects(action.handler(ctx as any), /could not reach Berth at http:\/\/127\.0\.0\.1:9/);
  });
});
