// Berth's OpenAPI description (drf-spectacular's, OpenAPI 3.0) as validators of what the action
// sends and what it reads: the file named by BERTH_OPENAPI, which Berth writes with
// `manage.py spectacular --format openapi-json --file <path>`. Without it the tests that need
// it are skipped, saying so.
import { readFileSync } from 'node:fs';

import Ajv, { type ValidateFunction } from 'ajv';

export const OPENAPI_PATH = process.env.BERTH_OPENAPI;
export const NO_OPENAPI: string | false = OPENAPI_PATH
  ? false
  : 'BERTH_OPENAPI is not set: these tests check the action against Berth\'s OpenAPI description ' +
    '(`DJANGO_SETTINGS_MODULE=tests.settings BERTH_DATA_DIR=$(mktemp -d) .venv/bin/python manage.py ' +
    'spectacular --format openapi-json --file /tmp/berth-openapi.json`, then BERTH_OPENAPI=/tmp/berth-openapi.json npm test)';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Node = { [key: string]: Json };

/** OpenAPI 3.0's `nullable` said in JSON Schema, which Ajv speaks. */
function asJsonSchema(schema: Json): Json {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const node: Node = { ...schema };
  for (const key of ['items', 'additionalProperties', 'not']) {
    if (node[key] && typeof node[key] === 'object') node[key] = asJsonSchema(node[key]);
  }
  for (const key of ['allOf', 'anyOf', 'oneOf']) {
    if (Array.isArray(node[key])) node[key] = (node[key] as Json[]).map(asJsonSchema);
  }
  if (node.properties && typeof node.properties === 'object' && !Array.isArray(node.properties)) {
    node.properties = Object.fromEntries(
      Object.entries(node.properties).map(([name, property]) => [name, asJsonSchema(property)]),
    );
  }
  const nullable = node.nullable === true;
  delete node.nullable;
  if (!nullable) return node;
  if (typeof node.type === 'string') {
    node.type = [node.type, 'null'];
    if (Array.isArray(node.enum)) node.enum = [...node.enum, null];
    return node;
  }
  const constraining = Object.keys(node).filter((key) => !['description', 'readOnly', 'writeOnly', 'example', 'title', 'default'].includes(key));
  return constraining.length ? { anyOf: [node, { type: 'null' }] } : node;
}

function converted(document: Node): Node {
  const components = (document.components ?? {}) as Node;
  const schemas = Object.fromEntries(
    Object.entries((components.schemas ?? {}) as Node).map(([name, schema]) => [name, asJsonSchema(schema)]),
  );
  const paths = Object.fromEntries(
    Object.entries((document.paths ?? {}) as Node).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item as Node).map(([method, operation]) => {
          if (!operation || typeof operation !== 'object' || Array.isArray(operation)) return [method, operation];
          const op: Node = { ...operation };
          const withSchemas = (holder: Json): Json => {
            if (!holder || typeof holder !== 'object' || Array.isArray(holder)) return holder;
            const content = (holder as Node).content as Node | undefined;
            if (!content) return holder;
            return {
              ...holder,
              content: Object.fromEntries(
                Object.entries(content).map(([type, media]) => [type, { ...(media as Node), schema: asJsonSchema((media as Node).schema) }]),
              ),
            };
          };
          if (op.requestBody) op.requestBody = withSchemas(op.requestBody);
          if (op.responses && typeof op.responses === 'object') {
            op.responses = Object.fromEntries(
              Object.entries(op.responses as Node).map(([status, response]) => [status, withSchemas(response)]),
            );
          }
          return [method, op];
        }),
      ),
    ]),
  );
  return { ...document, components: { ...components, schemas }, paths };
}

const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export type Checked = { ok: boolean; errors: string };

export class Contract {
  readonly document: Node;
  readonly #ajv: Ajv;
  readonly #compiled = new Map<string, ValidateFunction>();

  constructor(path: string) {
    this.document = converted(JSON.parse(readFileSync(path, 'utf8')) as Node);
    this.#ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, validateSchema: false });
    this.#ajv.addSchema(this.document as object, 'berth');
  }

  operation(method: string, path: string): Node {
    const item = (this.document.paths as Node)[path] as Node | undefined;
    const operation = item?.[method.toLowerCase()] as Node | undefined;
    if (!operation) throw new Error(`${method} ${path} is not in Berth's OpenAPI description`);
    return operation;
  }

  /** The body of `method path` against the schema of its JSON request body. */
  requestBody(method: string, path: string, body: unknown): Checked {
    this.operation(method, path);
    return this.#check(`berth#/${pointer('paths', path, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema')}`, body);
  }

  /** An answer of `method path` with `status` against the schema the description gives it. */
  response(method: string, path: string, status: number, contentType: string, body: unknown): Checked {
    const responses = this.operation(method, path).responses as Node;
    const response = responses[String(status)] as Node | undefined;
    if (!response) return { ok: false, errors: `${method} ${path} is not described as answering ${status}` };
    const content = (response.content ?? {}) as Node;
    if (!content[contentType]) {
      return { ok: false, errors: `${method} ${path} ${status} is not described as ${contentType} (only ${Object.keys(content).join(', ') || 'no body'})` };
    }
    return this.#check(
      `berth#/${pointer('paths', path, method.toLowerCase(), 'responses', String(status), 'content', contentType, 'schema')}`,
      body,
    );
  }

  /** A component schema's description, e.g. RequestCreateRequest's `payload`. */
  component(name: string): Node {
    const schema = ((this.document.components as Node).schemas as Node)[name];
    if (!schema) throw new Error(`no component ${name} in Berth's OpenAPI description`);
    return schema as Node;
  }

  #check(ref: string, value: unknown): Checked {
    let validate = this.#compiled.get(ref);
    if (!validate) {
      validate = this.#ajv.compile({ $ref: ref });
      this.#compiled.set(ref, validate);
    }
    const ok = validate(value) as boolean;
    return { ok, errors: ok ? '' : this.#ajv.errorsText(validate.errors, { separator: '; ' }) };
  }
}

let loaded: Contract | undefined;
export function contract(): Contract {
  if (!OPENAPI_PATH) throw new Error(NO_OPENAPI as string);
  loaded ??= new Contract(OPENAPI_PATH);
  return loaded;
}
