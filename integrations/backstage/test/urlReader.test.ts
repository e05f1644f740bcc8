// The reader of Berth's catalog: berth.token goes to Berth's own URLs and nowhere else, on its
// own and inside a Backstage backend beside the stock readers.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';

import type { BackendFeature } from '@backstage/backend-plugin-api';
import { parseAllDocuments } from 'yaml';

import { BerthUrlReader } from '../src/urlReader';
import { startBackend } from './support/backend';
import { CATALOG_YAML, FakeBerth } from './support/fakeBerth';
import { contract, NO_OPENAPI } from './support/openapi';

const TOKEN = 'berth_backstage_token';

/** `backend.add(import('…'))` as a backend written as ESM says it. Imported from CommonJS, as
 * here, the module's default export comes back once more nested, which Backstage unwraps. */
const added = (imported: Promise<unknown>) => imported as Promise<{ default: BackendFeature }>;
const CATALOG = '/api/v1/backstage/catalog-info.yaml';

describe('BerthUrlReader', () => {
  let berth: FakeBerth;
  let elsewhere: FakeBerth;

  before(async () => {
    berth = await FakeBerth.start();
    // Another server on another port: another origin, which must never see the token.
    elsewhere = await FakeBerth.start();
    elsewhere.tokens.clear();
  });
  after(async () => {
    await berth?.close();
    await elsewhere?.close();
  });
  beforeEach(() => {
    berth.exchanges.length = 0;
    elsewhere.exchanges.length = 0;
    berth.redirects.clear();
  });

  test('takes the URLs under berth.baseUrl, and only those', () => {
    const reader = new BerthUrlReader({ baseUrl: 'https://berth.example.com/berth/', token: TOKEN });
    const takes = (url: string) => reader.handles(new URL(url));
    assert.ok(takes('https://berth.example.com/berth/api/v1/backstage/catalog-info.yaml'));
    assert.ok(takes('https://berth.example.com/berth'));
    assert.ok(takes('https://berth.example.com:443/berth/api/v1/backstage/payments/catalog-info.yaml'));
    assert.ok(!takes('http://berth.example.com/berth/api/v1/backstage/catalog-info.yaml'), 'plain http');
    assert.ok(!takes('https://berth.example.com:8443/berth/api/'), 'another port');
    assert.ok(!takes('https://berth.example.com.evil.test/berth/api/'), 'a longer host');
    assert.ok(!takes('https://evil.test/berth/api/'), 'another host');
    assert.ok(!takes('https://berth.example.com/berthx/api/'), 'a path that only starts alike');
    assert.ok(!takes('https://berth.example.com/other/api/'), 'outside its path');
    assert.ok(!takes('https://berth.example.com/berth/../other/'), 'out by ..');
    assert.ok(!takes('https://user:pw@berth.example.com/berth/api/'), 'with credentials of its own');
    assert.equal(String(reader), 'berth{https://berth.example.com/berth/}');
  });

  test("reads Berth's catalog with the token, and asks again with its ETag", async () => {
    const reader = new BerthUrlReader({ baseUrl: berth.url, token: TOKEN });
    const read = await reader.readUrl(`${berth.url}${CATALOG}`);
    assert.equal((await read.buffer()).toString('utf8'), berth.catalog);
    assert.equal(read.etag, berth.catalogEtag);
    await assert.rejects(reader.readUrl(`${berth.url}${CATALOG}`, { etag: read.etag }), { name: 'NotModifiedError' });
    assert.deepEqual(
      berth.exchanges.map((e) => [e.path, e.authorization, e.status]),
      [
        [CATALOG, `Bearer ${TOKEN}`, 200],
        [CATALOG, `Bearer ${TOKEN}`, 304],
      ],
    );
  });

  test('a redirect within Berth is followed; one away from Berth is refused, unfollowed', async () => {
    const reader = new BerthUrlReader({ baseUrl: berth.url, token: TOKEN });
    berth.redirects.set('/catalog', CATALOG);
    berth.redirects.set('/away', `${elsewhere.url}${CATALOG}`);

    const read = await reader.readUrl(`${berth.url}/catalog`);
    assert.equal((await read.buffer()).toString('utf8'), berth.catalog);
    await assert.rejects(reader.readUrl(`${berth.url}/away`), {
      name: 'NotAllowedError',
      message: new RegExp(`^${elsewhere.url}${CATALOG} is not under berth.baseUrl`.replace(/\./g, '\\.')),
    });
    await assert.rejects(reader.readUrl(`${elsewhere.url}${CATALOG}`), { name: 'NotAllowedError' });
    assert.deepEqual(elsewhere.exchanges, []);
  });

  test('a missing page is NotFoundError, and a search for it finds nothing', async () => {
    const reader = new BerthUrlReader({ baseUrl: berth.url, token: TOKEN });
    await assert.rejects(reader.readUrl(`${berth.url}/api/v1/backstage/nobody/catalog-info.yaml`), {
      name: 'NotFoundError',
      message: /^Berth answered 404 for .*: Not found\. No such page\.$/,
    });
    assert.deepEqual(await reader.search(`${berth.url}/api/v1/backstage/nobody/catalog-info.yaml`), { files: [], etag: '' });
    const found = await reader.search(`${berth.url}${CATALOG}`);
    assert.equal(found.files.length, 1);
    assert.equal((await found.files[0].content()).toString('utf8'), berth.catalog);
    await assert.rejects(reader.search(`${berth.url}/api/v1/backstage/*.yaml`), { name: 'NotImplementedError' });
  });

  test("a refused token is said with Berth's problem detail", async () => {
    const reader = new BerthUrlReader({ baseUrl: berth.url, token: 'berth_revoked' });
    await assert.rejects(reader.readUrl(`${berth.url}${CATALOG}`), {
      message: `Berth answered 401 for ${berth.url}${CATALOG}: Authentication failed. Invalid or expired token.`,
    });
  });

  test("in a Backstage backend: Berth's URLs are read with the token, other allowed hosts without", async () => {
    const started = await startBackend(
      {
        backend: { reading: { allow: [{ host: new URL(elsewhere.url).host }] } },
        berth: { baseUrl: berth.url, token: TOKEN },
      },
      // As docs/backstage.md says to add it, through the package's own exports.
      [added(import('berth-backstage/url-reader'))],
    );
    try {
      const read = await started.urlReader.readUrl(`${berth.url}${CATALOG}`);
      assert.equal((await read.buffer()).toString('utf8'), berth.catalog);
      // The stock FetchUrlReader reads the other host (backend.reading.allow), sending nothing.
      await assert.rejects(started.urlReader.readUrl(`${elsewhere.url}${CATALOG}`), /401/);
      await assert.rejects(started.urlReader.readUrl('http://127.0.0.2:9/catalog-info.yaml'), { name: 'NotAllowedError' });
    } finally {
      await started.stop();
    }
    assert.deepEqual(berth.exchanges.map((e) => e.authorization), [`Bearer ${TOKEN}`]);
    assert.deepEqual(elsewhere.exchanges.map((e) => [e.path, e.authorization]), [[CATALOG, undefined]]);
    assert.ok(!started.logs.join('\n').includes(TOKEN));
  });

  test('in a Backstage backend without berth.baseUrl it reads nothing itself', async () => {
    const started = await startBackend({}, [added(import('berth-backstage/url-reader'))]);
    try {
      await assert.rejects(started.urlReader.readUrl(`${berth.url}${CATALOG}`), { name: 'NotAllowedError' });
    } finally {
      await started.stop();
    }
    assert.deepEqual(berth.exchanges, []);
  });
});

describe("Berth's catalog as the description says it", { skip: NO_OPENAPI }, () => {
  test("the stand-in's catalog is what GET catalog-info.yaml is described to answer", () => {
    const documents = parseAllDocuments(CATALOG_YAML).map((doc) => doc.toJSON());
    const checked = contract().response('GET', CATALOG, 200, 'application/yaml', documents);
    assert.ok(checked.ok, checked.errors);
  });
});

describe('the scaffolder module in a Backstage backend', () => {
  test('adds berth:request to the scaffolder', async () => {
    const started = await startBackend({ berth: { baseUrl: 'https://berth.example.com', token: TOKEN } }, [added(import('berth-backstage'))]);
    try {
      assert.deepEqual(started.actions.map((a) => a.id), ['berth:request']);
      const input = started.actions[0].schema?.input as { properties: Record<string, unknown>; required: string[] };
      assert.deepEqual(input.required.sort(), ['kind', 'tenant']);
    } finally {
      await started.stop();
    }
  });

  test('refuses to start without berth.token', async () => {
    await assert.rejects(startBackend({ berth: { baseUrl: 'https://berth.example.com' } }, [added(import('berth-backstage'))]), /berth\.token/);
  });
});
