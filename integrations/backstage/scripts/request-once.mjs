// Runs berth:request once, as the scaffolder runs a template's step: a Backstage backend is
// started with the scaffolder module (`backend.add(import('berth-backstage'))`) and app-config
// {berth: {baseUrl, token}}, and the action it registered is handed a step's context.
// Reads {"baseUrl", "token", "input", "secrets"?} as JSON on standard input (a token stays out
// of the process list); prints {"outputs", "logs", "error"} as JSON; exits 1 when the step failed.
// Needs the build (npm run build). Used by tests/integrations/test_backstage_module.py.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { startBackend } = require('../dist/test/support/backend.js');
const { actionContext } = require('../dist/test/support/context.js');

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { baseUrl, token, input, secrets } = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const backend = await startBackend({ berth: { baseUrl, token } }, [import('berth-backstage')]);
const action = backend.actions.find((a) => a.id === 'berth:request');
const { ctx, outputs, logs } = actionContext(input, { secrets, taskId: `request-once-${process.pid}` });
let error = null;
try {
  await action.handler(ctx);
} catch (failure) {
  error = String(failure?.message ?? failure);
} finally {
  await backend.stop();
}
process.stdout.write(JSON.stringify({ outputs, logs, error }) + '\n');
// Said at once: a stopped backend still exits 0 on its own when the event loop empties.
process.exit(error ? 1 : 0);
