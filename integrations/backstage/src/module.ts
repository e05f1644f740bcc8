// The scaffolder backend module: berth:request, configured from app-config's berth.baseUrl
// and berth.token (read when a step runs, so a reloaded config applies).
import { coreServices, createBackendModule } from '@backstage/backend-plugin-api';
import { scaffolderActionsExtensionPoint } from '@backstage/plugin-scaffolder-node';

import { createBerthRequestAction } from './action';
import { readBerthConfig } from './berth';

export const scaffolderModuleBerth = createBackendModule({
  pluginId: 'scaffolder',
  moduleId: 'berth',
  register(reg) {
    reg.registerInit({
      deps: {
        scaffolder: scaffolderActionsExtensionPoint,
        config: coreServices.rootConfig,
      },
      async init({ scaffolder, config }) {
        // Refuse to start with a missing or malformed berth.baseUrl or berth.token.
        readBerthConfig(config);
        scaffolder.addActions(createBerthRequestAction({ berth: () => readBerthConfig(config) }));
      },
    });
  },
});
