// Reads one URL through a Backstage backend's UrlReaderService, as the catalog reads a `url`
// location, with Berth's reader added (`backend.add(import('berth-backstage/url-reader'))`)
// and app-config {berth: {baseUrl, token}}.
// Reads {"baseUrl", "token", "url", "etag"?} as JSON on standard input; prints {"content",
// "etag", "error"} as JSON (error: the error's name and message); exits 1 when the read failed.
// Needs the build (npm run build). Used by tests/integrations/test_backstage_module.py.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { startBackend } = require('../dist/test/support/backend.js');

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { baseUrl, token, url, etag } = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const backend = await startBackend({ berth: { baseUrl, token } }, [import('berth-backstage/url-reader')]);
let answer;
try {
  const read = await backend.urlReader.readUrl(url, etag ? { etag } : undefined);
  answer = { content: (await read.buffer()).toString('utf8'), etag: read.etag ?? null, error: null };
} catch (failure) {
  answer = { content: null, etag: null, error: `${failure?.name}: ${failure?.message}` };
} finally {
  await backend.stop();
}
process.stdout.write(JSON.stringify(answer) + '\n');
process.exit(answer.error ? 1 : 0);
