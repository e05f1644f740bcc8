// Reads a JSON array of catalog entities on standard input and checks each one as
// Backstage's catalog does before it stores it: the entity policies (the envelope, field
// formats, no foreign root fields, the schema), then the validator of its kind. Prints
// {"checked": n, "errors": [{"entity": "<kind>:<namespace>/<name>", "error": "..."}]}.
import {
  DefaultNamespaceEntityPolicy,
  EntityPolicies,
  FieldFormatEntityPolicy,
  NoForeignRootFieldsEntityPolicy,
  SchemaValidEntityPolicy,
  componentEntityV1alpha1Validator,
  groupEntityV1alpha1Validator,
  resourceEntityV1alpha1Validator,
  systemEntityV1alpha1Validator,
} from '@backstage/catalog-model';

const policy = EntityPolicies.allOf([
  new SchemaValidEntityPolicy(),
  new DefaultNamespaceEntityPolicy(),
  new NoForeignRootFieldsEntityPolicy(),
  new FieldFormatEntityPolicy(),
]);
const validators = {
  Component: componentEntityV1alpha1Validator,
  Group: groupEntityV1alpha1Validator,
  Resource: resourceEntityV1alpha1Validator,
  System: systemEntityV1alpha1Validator,
};

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const entities = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const errors = [];
for (const entity of entities) {
  const meta = entity?.metadata ?? {};
  const ref = `${entity?.kind}:${meta.namespace ?? 'default'}/${meta.name}`;
  try {
    const enforced = await policy.enforce(entity);
    const validator = validators[enforced.kind];
    if (!validator) throw new Error(`no validator for kind ${enforced.kind}`);
    if (!(await validator.check(enforced))) throw new Error(`not a ${enforced.kind} entity`);
  } catch (error) {
    errors.push({ entity: ref, error: String(error?.message ?? error) });
  }
}
process.stdout.write(JSON.stringify({ checked: entities.length, errors }) + '\n');
