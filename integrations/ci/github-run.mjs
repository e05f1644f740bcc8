// A GitHub Actions workflow as GitHub reads it, for one event: parsed and checked by
// @actions/workflow-parser, its expressions evaluated by @actions/expressions.
//
//   node github-run.mjs <workflow.yaml> < context.json
//
// context.json holds the expression contexts of the run: {"github": {...}, "secrets": {...},
// "vars": {...}}. Prints {"errors": [...], "jobs": [{"id", "runs", "env", "steps": [{"id",
// "run" | "uses", "env"}]}]}: each job's `if` decided, its env (the workflow's, then the
// job's) and each step's `run` and env evaluated. A step's `if` other than the default is
// refused here, as are step outputs used before the run: the recipe needs neither.
import { readFileSync } from "node:fs";
import { register } from "node:module";
import { Evaluator, Lexer, Parser, data } from "@actions/expressions";

// The parser imports its JSON schema without `with { type: "json" }` (it is written for
// bundlers), which Node 20 refuses: this hook says what the import leaves out.
const jsonImports = `export async function load(url, context, next) {
  return next(url, url.endsWith(".json") ? { ...context, importAttributes: { type: "json" } } : context);
}`;
register(`data:text/javascript,${encodeURIComponent(jsonImports)}`);
const {
  NoOperationTraceWriter,
  convertWorkflowTemplate,
  isBasicExpression,
  isLiteral,
  isMapping,
  parseWorkflow,
} = await import("@actions/workflow-parser");

const [file] = process.argv.slice(2);
// What a job's expressions may name (GitHub's contexts); those the run is not given are empty.
const CONTEXTS = ["github", "env", "vars", "secrets", "steps", "job", "runner", "needs", "inputs", "strategy", "matrix"];
const contexts = JSON.parse(readFileSync(0, "utf8"));

function evaluate(expression, extra = {}) {
  const names = [...new Set([...CONTEXTS, ...Object.keys({ ...contexts, ...extra })])];
  const lexed = new Lexer(expression).lex();
  const tree = new Parser(lexed.tokens, names, [
    { name: "success", minArgs: 0, maxArgs: 0 },
    { name: "always", minArgs: 0, maxArgs: 0 },
    { name: "failure", minArgs: 0, maxArgs: 0 },
    { name: "cancelled", minArgs: 0, maxArgs: 0 },
  ]).parse();
  const status = (value) => ({ minArgs: 0, maxArgs: 0, call: () => new data.BooleanData(value) });
  const functions = new Map([
    ["success", { name: "success", ...status(true) }],
    ["always", { name: "always", ...status(true) }],
    ["failure", { name: "failure", ...status(false) }],
    ["cancelled", { name: "cancelled", ...status(false) }],
  ]);
  const empty = Object.fromEntries(CONTEXTS.map((name) => [name, {}]));
  const context = JSON.parse(JSON.stringify({ ...empty, ...contexts, ...extra }), data.reviver);
  return new Evaluator(tree, context, functions).evaluate();
}

function text(token, extra) {
  if (token === undefined) return undefined;
  if (isBasicExpression(token)) return evaluate(token.expression, extra).coerceString();
  if (isLiteral(token)) return String(token.value ?? "");
  throw new Error(`not a scalar: ${JSON.stringify(token)}`);
}

function mapping(token, extra) {
  const values = {};
  if (token === undefined || token === null) return values;
  if (!isMapping(token)) throw new Error("env is not a mapping");
  for (const { key, value } of token) values[text(key)] = text(value, extra);
  return values;
}

function decided(token, extra) {
  // A job's `if`: the parser gives `success() && (<if>)`, or `success()` alone. Negated
  // twice, it is a boolean by GitHub's own truthiness.
  return token === undefined ? true : evaluate(`!(${token.expression})`, extra).value === false;
}

const parsed = parseWorkflow({ name: file, content: readFileSync(file, "utf8") }, new NoOperationTraceWriter());
const errors = parsed.context.errors.getErrors().map((error) => error.message);
const template = parsed.value ? await convertWorkflowTemplate(parsed.context, parsed.value) : { jobs: [] };
errors.push(...(template.errors ?? []).map((error) => error.Message));

const workflowEnv = mapping(template.env);
const jobs = (template.jobs ?? []).map((job) => {
  const env = { ...workflowEnv, ...mapping(job.env, { env: workflowEnv }) };
  return {
    id: job.id.value,
    runs: decided(job.if, { env }),
    env,
    steps: job.steps.map((step) => {
      if (step.if && step.if.expression !== "success()") {
        throw new Error(`step ${step.id}: an if of its own is not evaluated here`);
      }
      const stepEnv = mapping(step.env, { env });
      return step.uses
        ? { id: step.id, uses: step.uses.value, env: stepEnv }
        : { id: step.id, run: text(step.run, { env: { ...env, ...stepEnv } }), env: stepEnv };
    }),
  };
});
process.stdout.write(JSON.stringify({ errors: [...new Set(errors)], jobs }));
