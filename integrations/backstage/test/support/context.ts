// A stand-in for the scaffolder's ActionContext: what a step's handler is given when a task
// runs it (input, secrets, logger, outputs, checkpoints, the task's id), recording the
// outputs and every line logged.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type Logged = { level: string; message: string };

export function actionContext(input: Record<string, unknown>, options: { secrets?: Record<string, string>; taskId?: string } = {}) {
  const outputs: Record<string, unknown> = {};
  const logs: Logged[] = [];
  const checkpoints = new Map<string, unknown>();
  const workspacePath = mkdtempSync(join(tmpdir(), 'berth-action-'));
  const log = (level: string) => (message: string, meta?: unknown) => {
    logs.push({ level, message: meta === undefined ? String(message) : `${message} ${JSON.stringify(meta)}` });
  };
  const logger: Record<string, unknown> = {
    error: log('error'),
    warn: log('warn'),
    info: log('info'),
    debug: log('debug'),
  };
  logger.child = () => logger;
  const ctx = {
    input,
    secrets: options.secrets,
    logger,
    workspacePath,
    task: { id: options.taskId ?? 'task-1' },
    output(name: string, value: unknown) {
      outputs[name] = value;
    },
    async checkpoint<T>({ key, fn }: { key: string; fn: () => Promise<T> | T }): Promise<T> {
      if (!checkpoints.has(key)) checkpoints.set(key, await fn());
      return checkpoints.get(key) as T;
    },
    async createTemporaryDirectory() {
      return mkdtempSync(join(workspacePath, 'tmp-'));
    },
    async getInitiatorCredentials(): Promise<never> {
      throw new Error('no initiator credentials in this stand-in');
    },
  };
  return { ctx, outputs, logs };
}
