// A real Backstage backend (backend-app-api's createSpecializedBackend) with the stock
// services the module and the reader need (backend-defaults' urlReader, lifecycle and logger
// factories), a config given as an object, and a stand-in for the scaffolder plugin that
// offers the actions extension point and hands out what it got: the actions the modules
// added and its own UrlReaderService, as the catalog's would be.
import { createSpecializedBackend } from '@backstage/backend-app-api';
import { lifecycleServiceFactory } from '@backstage/backend-defaults/lifecycle';
import { loggerServiceFactory } from '@backstage/backend-defaults/logger';
import { rootLifecycleServiceFactory } from '@backstage/backend-defaults/rootLifecycle';
import { urlReaderServiceFactory } from '@backstage/backend-defaults/urlReader';
import {
  type BackendFeature,
  coreServices,
  createBackendPlugin,
  createServiceFactory,
  type LoggerService,
  type UrlReaderService,
} from '@backstage/backend-plugin-api';
import { ConfigReader } from '@backstage/config';
import { scaffolderActionsExtensionPoint, type TemplateAction } from '@backstage/plugin-scaffolder-node';

export type Started = {
  actions: TemplateAction<any, any, any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
  urlReader: UrlReaderService;
  logs: string[];
  stop(): Promise<void>;
};

function recordingLogger(logs: string[]): LoggerService {
  const logger: LoggerService = {
    error: (message) => void logs.push(`error ${message}`),
    warn: (message) => void logs.push(`warn ${message}`),
    info: (message) => void logs.push(`info ${message}`),
    debug: (message) => void logs.push(`debug ${message}`),
    child: () => logger,
  };
  return logger;
}

export type AppConfig = ConstructorParameters<typeof ConfigReader>[0];

export async function startBackend(config: AppConfig, features: (BackendFeature | Promise<{ default: BackendFeature }>)[]): Promise<Started> {
  const logs: string[] = [];
  const got: Partial<Started> = {};
  const scaffolder = createBackendPlugin({
    pluginId: 'scaffolder',
    register(env) {
      const actions: Started['actions'] = [];
      env.registerExtensionPoint(scaffolderActionsExtensionPoint, {
        addActions: (...added) => void actions.push(...added),
      });
      env.registerInit({
        deps: { urlReader: coreServices.urlReader },
        async init({ urlReader }) {
          got.actions = actions;
          got.urlReader = urlReader;
        },
      });
    },
  });
  const backend = createSpecializedBackend({
    defaultServiceFactories: [
      createServiceFactory({
        service: coreServices.rootConfig,
        deps: {},
        factory: () => new ConfigReader(config),
      }),
      createServiceFactory({
        service: coreServices.rootLogger,
        deps: {},
        factory: () => recordingLogger(logs),
      }),
      rootLifecycleServiceFactory,
      lifecycleServiceFactory,
      loggerServiceFactory,
      urlReaderServiceFactory,
    ],
  });
  backend.add(scaffolder);
  for (const feature of features) backend.add(feature);
  await backend.start();
  return { actions: got.actions!, urlReader: got.urlReader!, logs, stop: () => backend.stop() };
}
