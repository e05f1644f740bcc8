// A URL reader for Berth: Backstage's catalog reads a `url` location through the backend's
// UrlReaderService, whose generic FetchUrlReader sends no token. This reader takes the URLs
// under berth.baseUrl (same scheme, host and port, and under its path) and reads them with
// `Authorization: Bearer <berth.token>`; every other URL goes to the readers after it, and
// it never follows a redirect away from Berth, so the token goes nowhere else.
import type {
  UrlReaderService,
  UrlReaderServiceReadTreeResponse,
  UrlReaderServiceReadUrlOptions,
  UrlReaderServiceReadUrlResponse,
  UrlReaderServiceSearchOptions,
  UrlReaderServiceSearchResponse,
} from '@backstage/backend-plugin-api';
import { createServiceFactory } from '@backstage/backend-plugin-api';
import {
  ReadUrlResponseFactory,
  type ReaderFactory,
  urlReaderFactoriesServiceRef,
} from '@backstage/backend-defaults/urlReader';
import { NotAllowedError, NotFoundError, NotImplementedError, NotModifiedError } from '@backstage/errors';

import { checkedBaseUrl, describeProblem, type BerthConfig, type Problem } from './berth';

const MAX_REDIRECTS = 3;

export class BerthUrlReader implements UrlReaderService {
  /** Readers for the catalog and every other plugin: none when berth.baseUrl is not set. */
  static factory: ReaderFactory = ({ config, logger }) => {
    if (!config.has('berth.baseUrl')) return [];
    const reader = new BerthUrlReader({
      baseUrl: config.getString('berth.baseUrl'),
      token: config.getString('berth.token'),
    });
    logger.info(`Reading ${reader.base.href} with berth.token`);
    return [{ predicate: (url: URL) => reader.handles(url), reader }];
  };

  readonly base: URL;
  readonly #token: string;

  constructor(options: BerthConfig) {
    this.base = new URL(`${checkedBaseUrl(options.baseUrl)}/`);
    if (!options.token.trim()) throw new Error('berth.token is empty: set it to a Berth API token');
    this.#token = options.token.trim();
  }

  /** Berth's own URLs only: same origin (scheme, host, port) and under berth.baseUrl's path. */
  handles(url: URL): boolean {
    return (
      url.origin === this.base.origin &&
      !url.username &&
      !url.password &&
      (url.pathname + '/').startsWith(this.base.pathname) &&
      !url.pathname.split('/').includes('..')
    );
  }

  async readUrl(url: string, options?: UrlReaderServiceReadUrlOptions): Promise<UrlReaderServiceReadUrlResponse> {
    let current = new URL(url);
    for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
      if (!this.handles(current)) {
        throw new NotAllowedError(`${current.href} is not under berth.baseUrl (${this.base.href}): not read with berth.token`);
      }
      let response: Response;
      try {
        response = await fetch(current, {
          headers: {
            // A caller's own token for this URL wins, as UrlReaderService's options say.
            Authorization: `Bearer ${options?.token ?? this.#token}`,
            Accept: 'application/yaml, application/json;q=0.9, */*;q=0.1',
            ...(options?.etag ? { 'If-None-Match': options.etag } : {}),
            ...(options?.lastModifiedAfter ? { 'If-Modified-Since': options.lastModifiedAfter.toUTCString() } : {}),
          },
          redirect: 'manual',
          signal: options?.signal as AbortSignal | undefined,
        });
      } catch (error) {
        throw new Error(`Could not read ${current.href} from Berth: ${(error as Error).message}`);
      }
      if (response.ok) return ReadUrlResponseFactory.fromResponse(response);
      if (response.status === 304) throw new NotModifiedError();
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        // Followed only while it stays under berth.baseUrl (checked at the top of the loop).
        current = new URL(location, current);
        continue;
      }
      const text = await response.text();
      const message = `Berth answered ${response.status} for ${current.href}: ${describeProblem(problemOf(text), text)}`;
      if (response.status === 404) throw new NotFoundError(message);
      throw new Error(message);
    }
    throw new Error(`Too many redirects reading ${url} from Berth`);
  }

  async readTree(): Promise<UrlReaderServiceReadTreeResponse> {
    throw new NotImplementedError('BerthUrlReader reads single files only, not trees');
  }

  async search(url: string, options?: UrlReaderServiceSearchOptions): Promise<UrlReaderServiceSearchResponse> {
    if (/[*?]/.test(new URL(url).pathname)) {
      throw new NotImplementedError('BerthUrlReader does not search with glob patterns');
    }
    try {
      const read = await this.readUrl(url, options);
      return {
        files: [{ url, content: () => read.buffer(), lastModifiedAt: read.lastModifiedAt }],
        etag: read.etag ?? '',
      };
    } catch (error) {
      if ((error as Error).name === 'NotFoundError') return { files: [], etag: '' };
      throw error;
    }
  }

  toString(): string {
    return `berth{${this.base.href}}`;
  }
}

function problemOf(text: string): Problem | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' ? (parsed as Problem) : undefined;
  } catch {
    return undefined;
  }
}

/** `backend.add(import('berth-backstage/url-reader'))`: Berth's reader before the built-in ones. */
export const berthUrlReaderFactory = createServiceFactory({
  service: urlReaderFactoriesServiceRef,
  deps: {},
  async factory() {
    return BerthUrlReader.factory;
  },
});

export default berthUrlReaderFactory;
