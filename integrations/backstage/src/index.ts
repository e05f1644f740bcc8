// `backend.add(import('berth-backstage'))` adds the scaffolder module (berth:request);
// `backend.add(import('berth-backstage/url-reader'))` adds the reader of Berth's catalog.
export { scaffolderModuleBerth as default } from './module';
export { ACTION_ID, PAYLOAD_FIELDS, createBerthRequestAction, requestBody } from './action';
export type { BerthRequestActionOptions, BerthRequestInput } from './action';
export { BerthApiError, BerthClient, describeProblem, readBerthConfig } from './berth';
export type { BerthConfig, Problem, RequestCreate, RequestDetail } from './berth';
