// templates/berth-namespace.yaml is a Template Backstage's catalog accepts, and the step it
// runs, rendered as the scaffolder renders it, is an input berth:request takes and a body
// Berth takes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import {
  DefaultNamespaceEntityPolicy,
  EntityPolicies,
  FieldFormatEntityPolicy,
  NoForeignRootFieldsEntityPolicy,
  SchemaValidEntityPolicy,
  type Entity,
} from '@backstage/catalog-model';
import { templateEntityV1beta3Validator } from '@backstage/plugin-scaffolder-common';
import Ajv from 'ajv';
import { parse } from 'yaml';

import { ACTION_ID, createBerthRequestAction, requestBody } from '../src/action';
import { contract, NO_OPENAPI } from './support/openapi';

type Step = { id: string; action: string; input: Record<string, unknown> };
type Template = Entity & {
  spec: {
    parameters: { properties: Record<string, Record<string, unknown>>; required?: string[] }[];
    steps: Step[];
    output: { links: { url: string }[]; text: { content: string }[] };
  };
};

const template = parse(readFileSync(join(__dirname, '..', '..', 'templates', 'berth-namespace.yaml'), 'utf8')) as Template;
const parameters = Object.assign({}, ...template.spec.parameters.map((page) => page.properties)) as Record<string, Record<string, unknown>>;
const [step] = template.spec.steps.filter((s) => s.action === ACTION_ID);

/** What a person fills in: every field's default, and the rest. */
const filled: Record<string, unknown> = {
  ...Object.fromEntries(Object.entries(parameters).flatMap(([name, field]) => ('default' in field ? [[name, field.default]] : []))),
  tenant: 'group:default/payments',
  app: 'shop',
};

/** `${{ … }}` as the scaffolder renders it, for the expressions the template uses: a value
 * that is one expression keeps its type. */
function render(value: unknown, context: Record<string, unknown>): unknown {
  if (typeof value !== 'string') return value;
  const evaluate = (expression: string): unknown => {
    const [head, ...filters] = expression.split('|').map((part) => part.trim());
    let result: unknown = head.split('.').reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], context);
    for (const filter of filters) {
      if (filter === 'parseEntityRef') {
        const [, kind, namespace, name] = /^(?:([^:]+):)?(?:([^/]+)\/)?(.+)$/.exec(String(result))!;
        result = { kind, namespace: namespace ?? 'default', name };
      } else if (/^pick\('(\w+)'\)$/.test(filter)) {
        result = (result as Record<string, unknown>)[/^pick\('(\w+)'\)$/.exec(filter)![1]];
      } else {
        throw new Error(`this test does not render the filter ${filter}`);
      }
    }
    return result;
  };
  const whole = /^\$\{\{(.+?)\}\}$/.exec(value.trim());
  if (whole) return evaluate(whole[1]);
  return value.replace(/\$\{\{(.+?)\}\}/g, (_, expression: string) => String(evaluate(expression)));
}

describe('templates/berth-namespace.yaml', () => {
  test("is a Template entity Backstage's catalog accepts", async () => {
    const policy = EntityPolicies.allOf([
      new SchemaValidEntityPolicy(),
      new DefaultNamespaceEntityPolicy(),
      new NoForeignRootFieldsEntityPolicy(),
      new FieldFormatEntityPolicy(),
    ]);
    const enforced = await policy.enforce(template);
    assert.ok(enforced);
    assert.equal(await templateEntityV1beta3Validator.check(enforced), true);
  });

  test('asks for the tenant among the Groups of Berth’s catalog and keeps the token a secret', () => {
    const options = parameters.tenant['ui:options'] as { catalogFilter: Record<string, unknown> };
    assert.equal(parameters.tenant['ui:field'], 'EntityPicker');
    assert.deepEqual(options.catalogFilter, { kind: 'Group', 'metadata.annotations.berth.dev/tenant': { exists: true } });
    assert.equal(parameters.berthToken['ui:field'], 'Secret');
    assert.ok(!JSON.stringify(step.input).includes('berthToken'), 'the token is no input: the action reads ctx.secrets');
  });

  test('its step, rendered, is an input berth:request takes and builds the body Berth takes', () => {
    const input = Object.fromEntries(Object.entries(step.input).map(([key, value]) => [key, render(value, { parameters: filled })]));
    assert.deepEqual(input, {
      kind: 'namespace',
      tenant: 'payments',
      app: 'shop',
      tier: 'dev',
      cluster: 'sandbox',
      cpu: '1',
      memory: '2Gi',
      storage: '10Gi',
      wait: true,
      timeoutSeconds: 600,
    });
    const action = createBerthRequestAction({ berth: { baseUrl: 'https://berth.example.com', token: 'x' } });
    const validate = new Ajv({ strict: false }).compile(action.schema!.input as object);
    assert.ok(validate(input), JSON.stringify(validate.errors));
    // A single expression may render as a number (a cpu of 1): the action takes that too.
    assert.ok(validate({ ...input, cpu: 1 }), JSON.stringify(validate.errors));
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    assert.deepEqual(requestBody({ ...input, cpu: 1 } as any).payload.cpu, '1');
  });

  test('its output names only what berth:request outputs', () => {
    const action = createBerthRequestAction({ berth: { baseUrl: 'https://berth.example.com', token: 'x' } });
    const outputs = Object.keys((action.schema!.output as { properties: object }).properties);
    const used = JSON.stringify(template.spec.output).match(/steps\.berth\.output\.(\w+)/g) ?? [];
    assert.ok(used.length >= 3);
    for (const name of used) assert.ok(outputs.includes(name.split('.').pop()!), name);
    assert.equal(template.spec.output.links[0].url, '${{ steps.berth.output.url }}');
  });

  test('its rendered body is what POST /api/v1/requests/ takes', { skip: NO_OPENAPI }, () => {
    const input = Object.fromEntries(Object.entries(step.input).map(([key, value]) => [key, render(value, { parameters: filled })]));
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const checked = contract().requestBody('POST', '/api/v1/requests/', requestBody(input as any));
    assert.ok(checked.ok, checked.errors);
  });
});
